set(MIX_SOURCES
)
set(AIV_SOURCES
    /tmp/opjudge-cann-v8.5.0-regen/team_library/build/auto_gen/opjudge_kernels/auto_gen_one_kernel_kernel.cpp
    /tmp/opjudge-cann-v8.5.0-regen/team_library/build/auto_gen/opjudge_kernels/auto_gen_two_kernels_kernel.cpp
)
set_source_files_properties(/tmp/opjudge-cann-v8.5.0-regen/team_library/build/auto_gen/opjudge_kernels/auto_gen_one_kernel_kernel.cpp
    PROPERTIES COMPILE_DEFINITIONS ";auto_gen_axpy_custom_kernel=axpy_custom_0;ONE_CORE_DUMP_SIZE=1048576"
)
set_source_files_properties(/tmp/opjudge-cann-v8.5.0-regen/team_library/build/auto_gen/opjudge_kernels/auto_gen_two_kernels_kernel.cpp
    PROPERTIES COMPILE_DEFINITIONS ";auto_gen_accumulate_kernel=accumulate_1;ONE_CORE_DUMP_SIZE=1048576;;auto_gen_zero_out_kernel=zero_out_2;ONE_CORE_DUMP_SIZE=1048576"
)
