/*
 * sfag_zero_kernel.cpp: zero the float32 accumulators of dk, dk_rope and dv in the workspace
 * (first of the three kernels on the caller's stream; stream order separates them).
 *
 * One kernel function in this file: CANN's ascendc_library supports one per kernel file. The host
 * (sfag_host.cpp) launches it through the launcher CANN generates, aclrtlaunch_sfag_zero.
 * NOT YET RUN ON NPU HARDWARE; see README.md.
 */
#include "sfag_device.h"

namespace {

class SfagZero {
public:
    __aicore__ inline void Run(GM_ADDR workspace, const SfagTiling &t) {
        pipe.InitBuffer(zeros, FLAT_CHUNK * sizeof(float));
        LocalTensor<float> z = zeros.Get<float>();
        Duplicate(z, 0.0f, FLAT_CHUNK);
        PipeBarrier<PIPE_ALL>(); // the copies below read what Duplicate wrote
        Accumulators acc;
        acc.Init(workspace, t);
        ZeroRange(acc.dk, t.accRows * t.D, z);
        ZeroRange(acc.dv, t.accRows * t.D, z);
        if (t.Dr > 0) {
            ZeroRange(acc.dkr, t.accRows * t.Dr, z);
        }
    }

private:
    __aicore__ inline void ZeroRange(const GlobalTensor<float> &gm, int64_t total, const LocalTensor<float> &z) {
        int64_t begin, end;
        ShareOf(total, begin, end);
        for (int64_t pos = begin; pos < end; pos += FLAT_CHUNK) {
            uint32_t n = static_cast<uint32_t>(end - pos < FLAT_CHUNK ? end - pos : FLAT_CHUNK);
            StoreRows(gm[pos], z, 1, n, FLAT_CHUNK, 0);
        }
    }

    TPipe pipe;
    TBuf<TPosition::VECOUT> zeros;
};

} // namespace

extern "C" __global__ __aicore__ void sfag_zero(GM_ADDR workspace, SfagTiling tiling) {
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
    SfagZero op;
    op.Run(workspace, tiling);
}
