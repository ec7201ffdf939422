/*
 * sfag_host.cpp: the host half of the starter kernel: kernel_workspace_bytes and kernel_run.
 *
 * kernel_run checks the arguments, computes the tiling (how the work is split over the vector
 * cores and how much of it fits in the Unified Buffer at once) and enqueues the three kernels on
 * args->stream through the launchers CANN's ascendc_library generates, one per kernel:
 * aclrtlaunch_<kernel>(blocks, stream, <the kernel's parameters>), with the tiling struct passed by
 * pointer (the generator turns a by-value struct parameter into a pointer and copies the struct
 * into the launch's arguments during the call). It never synchronises: the judge does.
 *
 * NOT YET RUN ON NPU HARDWARE (see README.md). The planning code below is plain C++ and is
 * tested on any machine by tests/judge/npu/test_starter_host.py, against the launcher headers
 * CANN 8.5.0's generator wrote for these kernels (tests/judge/npu/data/cann_v8.5.0/generator).
 */
#include <stdint.h>

/* First: the generated aclrtlaunch_*.h headers name SfagTiling without declaring it. */
#include "sfag_tiling.h"
#include "sparse_flash_attention_grad.h"

#include "aclrtlaunch_sfag_finalize.h"
#include "aclrtlaunch_sfag_main.h"
#include "aclrtlaunch_sfag_zero.h"

/* kernel_run's error codes (the judge reports a non-zero return as a runtime error). */
enum {
    SFAG_OK = 0,
    SFAG_BAD_SIZES = 1,      /* a size or attribute outside the spec */
    SFAG_BAD_POINTERS = 2,   /* a required pointer is NULL, or rope pointers disagree with Dr */
    SFAG_TOO_WIDE = 3,       /* D + Dr too wide for this starter's UB layout */
    SFAG_NO_WORKSPACE = 4,   /* the workspace is smaller than kernel_workspace_bytes asked for */
    SFAG_LAUNCH_FAILED = 5,  /* a generated launcher returned non-zero (the runtime refused the launch) */
};

namespace {

int64_t RoundUp(int64_t value, int64_t step) { return (value + step - 1) / step * step; }

int64_t ElementBytes(int64_t dtype) { return dtype == KERNEL_F32 ? 4 : 2; }

/* UB bytes SfagMain allocates for Tc tokens per chunk and Hb heads per item (mirrors its Init). */
int64_t UbBytes(int64_t tc, int64_t hb, int64_t L, int64_t dPad, int64_t elem) {
    int64_t rp = RoundUp(tc > hb ? tc : hb, 8);
    int64_t most = tc > hb ? tc : hb;
    int64_t floats = tc * L + tc * dPad + most * L + 3 * hb * L + tc * L + tc * dPad + (L / SFAG_VEC_FLOATS) * rp +
                     5 * rp;
    int64_t staged = elem * (tc * L + tc * dPad + 2 * hb * L);
    return floats * 4 + staged;
}

int64_t AccumulatorBytes(const kernel_args *a, int64_t *dk, int64_t *dkr, int64_t *dv) {
    int64_t rows = a->B * a->S2 * a->N2;
    *dk = 0;
    *dv = RoundUp(rows * a->D * 4, 512);
    *dkr = *dv * 2;
    return *dkr + RoundUp(rows * a->Dr * 4, 512);
}

int CheckSizes(const kernel_args *a) {
    if (a->B < 1 || a->S1 < 1 || a->S2 < 1 || a->N1 < 1 || a->N2 < 1 || a->D < 1 || a->Dr < 0 || a->K < 1 ||
        a->block_size < 1 || a->N1 % a->N2 != 0 || (a->sparse_mode != 0 && a->sparse_mode != 3) ||
        (a->dtype != KERNEL_F32 && a->dtype != KERNEL_F16 && a->dtype != KERNEL_BF16)) {
        return SFAG_BAD_SIZES;
    }
    return SFAG_OK;
}

} // namespace

/* The tiling for these arguments; exported (C linkage) so tests can check the plan without a device. */
extern "C" int sfag_plan(const kernel_args *a, SfagTiling *t) {
    int status = CheckSizes(a);
    if (status != SFAG_OK) {
        return status;
    }
    t->B = a->B;
    t->S1 = a->S1;
    t->S2 = a->S2;
    t->N1 = a->N1;
    t->N2 = a->N2;
    t->G = a->N1 / a->N2;
    t->D = a->D;
    t->Dr = a->Dr;
    t->K = a->K;
    t->blockSize = a->block_size;
    t->sparseMode = a->sparse_mode;
    t->scale = static_cast<float>(a->scale);
    t->dtype = static_cast<int32_t>(a->dtype);
    t->dPad = static_cast<int32_t>(RoundUp(a->D, SFAG_VEC_FLOATS));
    t->drPad = static_cast<int32_t>(RoundUp(a->Dr, SFAG_VEC_FLOATS));
    int64_t L = t->dPad + t->drPad;
    if (L > SFAG_MAX_ROW_FLOATS) {
        return SFAG_TOO_WIDE;
    }
    /* The most tokens per chunk first (each chunk is one round of atomic adds), then the most
     * heads per item (fewer passes over the same keys); Hb must divide G. */
    int64_t elem = ElementBytes(a->dtype);
    t->tokensPerChunk = 0;
    for (int64_t tc = SFAG_MAX_TOKENS_PER_CHUNK; tc >= 1 && t->tokensPerChunk == 0; tc /= 2) {
        for (int64_t hb = SFAG_MAX_HEADS_PER_ITEM; hb >= 1; --hb) {
            if (t->G % hb == 0 && UbBytes(tc, hb, L, t->dPad, elem) <= SFAG_UB_BUDGET_BYTES) {
                t->tokensPerChunk = static_cast<int32_t>(tc);
                t->headsPerItem = static_cast<int32_t>(hb);
                break;
            }
        }
    }
    if (t->tokensPerChunk == 0) {
        return SFAG_TOO_WIDE;
    }
    int64_t most = t->tokensPerChunk > t->headsPerItem ? t->tokensPerChunk : t->headsPerItem;
    t->rowPad = static_cast<int32_t>(RoundUp(most, 8));
    t->items = a->B * a->S1 * a->N2 * (t->G / t->headsPerItem);
    t->blocks = static_cast<int32_t>(t->items < SFAG_MAX_BLOCKS ? t->items : SFAG_MAX_BLOCKS);
    t->accRows = a->B * a->S2 * a->N2;
    t->workspaceBytes = AccumulatorBytes(a, &t->accDkOffset, &t->accDkrOffset, &t->accDvOffset);
    return SFAG_OK;
}

extern "C" int64_t kernel_workspace_bytes(const kernel_args *args) {
    if (CheckSizes(args) != SFAG_OK) {
        return 0;
    }
    int64_t dk, dkr, dv;
    return SFAG_SYS_WORKSPACE_BYTES + AccumulatorBytes(args, &dk, &dkr, &dv);
}

extern "C" int kernel_run(const kernel_args *args) {
    SfagTiling tiling;
    int status = sfag_plan(args, &tiling);
    if (status != SFAG_OK) {
        return status;
    }
    bool rope = args->Dr > 0;
    if (!args->q || !args->k || !args->v || !args->d_out || !args->out || !args->sparse_indices ||
        !args->softmax_max || !args->softmax_sum || !args->dq || !args->dk || !args->dv ||
        rope != (args->q_rope && args->k_rope && args->dq_rope && args->dk_rope)) {
        return SFAG_BAD_POINTERS;
    }
    /* The kernels get workspace + SFAG_SYS_WORKSPACE_BYTES (CANN's wrapper keeps the front for the system). */
    if (!args->workspace || args->workspace_bytes < SFAG_SYS_WORKSPACE_BYTES + tiling.workspaceBytes) {
        return SFAG_NO_WORKSPACE;
    }
    /* The kernels take non-const device addresses; they never write the inputs. */
    void *q = (void *)args->q, *qr = (void *)args->q_rope, *k = (void *)args->k, *kr = (void *)args->k_rope;
    void *v = (void *)args->v, *indices = (void *)args->sparse_indices, *dout = (void *)args->d_out;
    void *out = (void *)args->out, *softmaxMax = (void *)args->softmax_max, *softmaxSum = (void *)args->softmax_sum;
    void *workspace = (void *)args->workspace;
    uint32_t blocks = static_cast<uint32_t>(tiling.blocks);
    /* Three launches on the caller's stream, in order (stream order separates them). */
    if (ACLRT_LAUNCH_KERNEL(sfag_zero)(blocks, args->stream, workspace, &tiling) != 0) {
        return SFAG_LAUNCH_FAILED;
    }
    if (ACLRT_LAUNCH_KERNEL(sfag_main)(blocks, args->stream, q, qr, k, kr, v, indices, dout, out, softmaxMax,
                                       softmaxSum, args->dq, args->dq_rope, workspace, &tiling) != 0) {
        return SFAG_LAUNCH_FAILED;
    }
    if (ACLRT_LAUNCH_KERNEL(sfag_finalize)(blocks, args->stream, args->dk, args->dk_rope, args->dv, workspace,
                                           &tiling) != 0) {
        return SFAG_LAUNCH_FAILED;
    }
    return SFAG_OK;
}
