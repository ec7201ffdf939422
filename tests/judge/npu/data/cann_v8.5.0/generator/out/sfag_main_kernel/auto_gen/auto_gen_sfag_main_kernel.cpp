#ifndef __SFAG_MAIN_KERNEL__KERNEL_FUN_H__
#define __SFAG_MAIN_KERNEL__KERNEL_FUN_H__

#undef __global__
#define __global__ inline
#define sfag_main sfag_main_origin
#include "/tmp/opjudge-cann-v8.5.0-regen/sfag_main_kernel/src/sfag_main_kernel.cpp"

#undef sfag_main
#undef __global__
#if ASCENDC_CPU_DEBUG
#define __global__
#else
#define __global__ __attribute__((cce_kernel))
#endif

#ifndef ONE_CORE_DUMP_SIZE
#define ONE_CORE_DUMP_SIZE 1048576 * 1
#endif

extern "C" __global__ [aicore] void auto_gen_sfag_main_kernel(
__attribute__((cce_global)) uint8_t* q, __attribute__((cce_global)) uint8_t* qr, __attribute__((cce_global)) uint8_t* k, __attribute__((cce_global)) uint8_t* kr, __attribute__((cce_global)) uint8_t* v, __attribute__((cce_global)) uint8_t* indices, __attribute__((cce_global)) uint8_t* dout, __attribute__((cce_global)) uint8_t* out, __attribute__((cce_global)) uint8_t* softmaxMax, __attribute__((cce_global)) uint8_t* softmaxSum, __attribute__((cce_global)) uint8_t* dq, __attribute__((cce_global)) uint8_t* dqr, __attribute__((cce_global)) uint8_t* workspace, SfagTiling tiling, GM_ADDR overflow_status) {
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
    sfag_main_origin(q, qr, k, kr, v, indices, dout, out, softmaxMax, softmaxSum, dq, dqr, workspace, tiling);
#if defined(ASCENDC_DUMP) && defined(ASCENDC_DEBUG)
    AscendC::WriteBackOverflow(overflow_status);
#endif
#if defined(__DAV_C310__) || defined(__DAV_310R6__)
    pipe_barrier(PIPE_ALL);
    dsb(mem_dsb_t::DSB_ALL);
    dci();
#endif
}

static const struct FunLevelKType sfag_main_section __attribute__ ((used, section (".ascend.meta.sfag_main_0"))) = { { {F_TYPE_KTYPE, sizeof(unsigned int)}, K_TYPE_AIV} };
#endif
