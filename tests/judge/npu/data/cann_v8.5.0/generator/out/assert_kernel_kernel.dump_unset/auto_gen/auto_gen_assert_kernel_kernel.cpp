#ifndef __ASSERT_KERNEL_KERNEL__KERNEL_FUN_H__
#define __ASSERT_KERNEL_KERNEL__KERNEL_FUN_H__

#undef __global__
#define __global__ inline
#define checked_copy checked_copy_origin
#include "/tmp/opjudge-cann-v8.5.0-regen/assert_kernel_kernel.dump_unset/src/assert_kernel_kernel.cpp"

#undef checked_copy
#undef __global__
#if ASCENDC_CPU_DEBUG
#define __global__
#else
#define __global__ __attribute__((cce_kernel))
#endif

#ifndef ONE_CORE_DUMP_SIZE
#define ONE_CORE_DUMP_SIZE 1024 * 1
#endif

extern "C" __global__ [aicore] void auto_gen_checked_copy_kernel(
#if defined ASCENDC_DUMP || defined ASCENDC_TIME_STAMP_ON
GM_ADDR dumpAddr,
#endif
__attribute__((cce_global)) uint8_t* src, __attribute__((cce_global)) uint8_t* dst, __attribute__((cce_global)) uint8_t* workspace, CopyTiling tiling, GM_ADDR overflow_status) {
#if defined ASCENDC_DUMP || defined ASCENDC_TIME_STAMP_ON
    AscendC::StoreArgsOfInitDump(false, dumpAddr);
#ifdef ASCENDC_TIME_STAMP_ON
    AscendC::PrintTimeStamp(static_cast<uint32_t>(AscendC::TimeStampId::TIME_STAMP_WRAP_INIT_DUMP));
#endif
#endif

#if defined(HAVE_WORKSPACE)
    GM_ADDR workspace_param;
    GM_ADDR workspace_usr;
#if defined(HAVE_TILING)
    workspace_param = workspace;
#else
    workspace_param = tiling;
#endif
    AscendC::SetSysWorkspaceForce(workspace_param);
    workspace_usr = AscendC::GetUserWorkspace(workspace_param);
#if defined(HAVE_TILING)
    workspace = workspace_usr;
#else
    tiling = workspace_usr;
#endif
#endif
    checked_copy_origin(src, dst, workspace, tiling);
#if defined(ASCENDC_DUMP) && defined(ASCENDC_DEBUG)
    AscendC::WriteBackOverflow(overflow_status);
#endif
#if defined(__DAV_C310__) || defined(__DAV_310R6__)
    pipe_barrier(PIPE_ALL);
    dsb(mem_dsb_t::DSB_ALL);
    dci();
#endif
}

static const struct FunLevelKType checked_copy_section __attribute__ ((used, section (".ascend.meta.checked_copy_0"))) = { { {F_TYPE_KTYPE, sizeof(unsigned int)}, K_TYPE_AIV} };
#endif
