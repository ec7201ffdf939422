set(MIX_SOURCES
)
set(AIV_SOURCES
    /tmp/opjudge-cann-v8.5.0-regen/assert_kernel_kernel/build/auto_gen/opjudge_kernels/auto_gen_assert_kernel_kernel.cpp
)
set_source_files_properties(/tmp/opjudge-cann-v8.5.0-regen/assert_kernel_kernel/build/auto_gen/opjudge_kernels/auto_gen_assert_kernel_kernel.cpp
    PROPERTIES COMPILE_DEFINITIONS ";auto_gen_checked_copy_kernel=checked_copy_0;ONE_CORE_DUMP_SIZE=1048576"
)
