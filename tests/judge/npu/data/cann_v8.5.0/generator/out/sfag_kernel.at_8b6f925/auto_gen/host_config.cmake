set_source_files_properties(/tmp/opjudge-cann-v8.5.0-regen/sfag_kernel.at_8b6f925/src/sfag_kernel.cpp
    PROPERTIES COMPILE_DEFINITIONS "ONE_CORE_DUMP_SIZE=1048576"
)
