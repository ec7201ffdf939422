set_source_files_properties(/tmp/opjudge-cann-v8.5.0-regen/sfag_main_kernel/src/sfag_main_kernel.cpp
    PROPERTIES COMPILE_DEFINITIONS "ONE_CORE_DUMP_SIZE=1048576"
)
