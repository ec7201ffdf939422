#ifndef __TWO_KERNELS_KERNEL__KERNEL_FUN_H__
#define __TWO_KERNELS_KERNEL__KERNEL_FUN_H__

#undef __global__
#define __global__ inline
#define accumulate accumulate_origin
#define zero_out zero_out_origin
#include "/tmp/opjudge-cann-v8.5.0-regen/two_kernels_kernel/src/two_kernels_kernel.cpp"

#undef accumulate
#undef zero_out
#undef __global__
#if ASCENDC_CPU_DEBUG
#define __global__
#else
#define __global__ __attribute__((cce_kernel))
#endif

#ifndef ONE_CORE_DUMP_SIZE
#define ONE_CORE_DUMP_SIZE 1048576 * 1
#endif

extern "C" __global__ [aicore] void auto_gen_accumulate_kernel(
__attribute__((cce_global)) uint8_t* x, __attribute__((cce_global)) uint8_t* acc, __attribute__((cce_global)) uint8_t* workspace, RowTiling tiling, GM_ADDR overflow_status) {
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
    accumulate_origin(x, acc, workspace, tiling);
#if defined(ASCENDC_DUMP) && defined(ASCENDC_DEBUG)
    AscendC::WriteBackOverflow(overflow_status);
#endif
#if defined(__DAV_C310__) || defined(__DAV_310R6__)
    pipe_barrier(PIPE_ALL);
    dsb(mem_dsb_t::DSB_ALL);
    dci();
#endif
}

static const struct FunLevelKType accumulate_section __attribute__ ((used, section (".ascend.meta.accumulate_0"))) = { { {F_TYPE_KTYPE, sizeof(unsigned int)}, K_TYPE_AIV} };
extern "C" __global__ [aicore] void auto_gen_zero_out_kernel(
__attribute__((cce_global)) uint8_t* acc, __attribute__((cce_global)) uint8_t* workspace, RowTiling tiling, GM_ADDR overflow_status) {
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
    zero_out_origin(acc, workspace, tiling);
#if defined(ASCENDC_DUMP) && defined(ASCENDC_DEBUG)
    AscendC::WriteBackOverflow(overflow_status);
#endif
#if defined(__DAV_C310__) || defined(__DAV_310R6__)
    pipe_barrier(PIPE_ALL);
    dsb(mem_dsb_t::DSB_ALL);
    dci();
#endif
}

static const struct FunLevelKType zero_out_section __attribute__ ((used, section (".ascend.meta.zero_out_0"))) = { { {F_TYPE_KTYPE, sizeof(unsigned int)}, K_TYPE_AIV} };
#endif
