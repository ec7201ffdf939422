set_source_files_properties(/tmp/opjudge-cann-v8.5.0-regen/printf_kernel_kernel/src/printf_kernel_kernel.cpp
    PROPERTIES COMPILE_DEFINITIONS "ONE_CORE_DUMP_SIZE=1048576"
)
