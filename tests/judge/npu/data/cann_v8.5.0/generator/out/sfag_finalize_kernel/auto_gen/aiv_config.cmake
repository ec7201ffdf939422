set(MIX_SOURCES
)
set(AIV_SOURCES
    /tmp/opjudge-cann-v8.5.0-regen/sfag_finalize_kernel/build/auto_gen/opjudge_kernels/auto_gen_sfag_finalize_kernel.cpp
)
set_source_files_properties(/tmp/opjudge-cann-v8.5.0-regen/sfag_finalize_kernel/build/auto_gen/opjudge_kernels/auto_gen_sfag_finalize_kernel.cpp
    PROPERTIES COMPILE_DEFINITIONS ";auto_gen_sfag_finalize_kernel=sfag_finalize_0;ONE_CORE_DUMP_SIZE=1048576"
)
