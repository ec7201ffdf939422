set(MIX_SOURCES
)
set(AIV_SOURCES
    /tmp/opjudge-cann-v8.5.0-regen/one_kernel_kernel/build/auto_gen/opjudge_kernels/auto_gen_one_kernel_kernel.cpp
)
set_source_files_properties(/tmp/opjudge-cann-v8.5.0-regen/one_kernel_kernel/build/auto_gen/opjudge_kernels/auto_gen_one_kernel_kernel.cpp
    PROPERTIES COMPILE_DEFINITIONS ";auto_gen_axpy_custom_kernel=axpy_custom_0;ONE_CORE_DUMP_SIZE=1048576"
)
