/*
 * sfag_finalize_kernel.cpp: convert the float32 accumulators to the output dtype into dk, dk_rope and dv
 * (last of the three kernels on the stream).
 *
 * One kernel function in this file: CANN's ascendc_library supports one per kernel file. The host
 * (sfag_host.cpp) launches it through the launcher CANN generates, aclrtlaunch_sfag_finalize.
 * NOT YET RUN ON NPU HARDWARE; see README.md.
 */
#include "sfag_device.h"

namespace {

template <typename T>
class SfagFinalize {
public:
    __aicore__ inline void Run(GM_ADDR workspace, GM_ADDR dk, GM_ADDR dkr, GM_ADDR dv, const SfagTiling &t) {
        pipe.InitBuffer(inQueue, 1, FLAT_CHUNK * sizeof(float));
        pipe.InitBuffer(outQueue, 1, FLAT_CHUNK * sizeof(T));
        Accumulators acc;
        acc.Init(workspace, t);
        Convert(acc.dk, dk, t.accRows * t.D);
        Convert(acc.dv, dv, t.accRows * t.D);
        if (t.Dr > 0) {
            Convert(acc.dkr, dkr, t.accRows * t.Dr);
        }
    }

private:
    __aicore__ inline void Convert(const GlobalTensor<float> &src, GM_ADDR dstAddr, int64_t total) {
        GlobalTensor<T> dst;
        dst.SetGlobalBuffer(reinterpret_cast<__gm__ T *>(dstAddr), total);
        int64_t begin, end;
        ShareOf(total, begin, end);
        for (int64_t pos = begin; pos < end; pos += FLAT_CHUNK) {
            uint32_t n = static_cast<uint32_t>(end - pos < FLAT_CHUNK ? end - pos : FLAT_CHUNK);
            // CopyIn
            LocalTensor<float> in = inQueue.AllocTensor<float>();
            LoadRows(in, src[pos], 1, n, 0, RoundUp(n, SFAG_VEC_FLOATS));
            inQueue.EnQue(in);
            // Compute
            in = inQueue.DeQue<float>();
            LocalTensor<T> out = outQueue.AllocTensor<T>();
            FromFloat(out, in, RoundUp(n, SFAG_VEC_FLOATS));
            outQueue.EnQue(out);
            inQueue.FreeTensor(in);
            // CopyOut
            out = outQueue.DeQue<T>();
            StoreRows(dst[pos], out, 1, n, RoundUp(n, SFAG_VEC_FLOATS), 0);
            outQueue.FreeTensor(out);
        }
    }

    TPipe pipe;
    TQue<QuePosition::VECIN, 1> inQueue;
    TQue<QuePosition::VECOUT, 1> outQueue;
};

} // namespace

extern "C" __global__ __aicore__ void sfag_finalize(GM_ADDR dk, GM_ADDR dkr, GM_ADDR dv, GM_ADDR workspace,
                                                    SfagTiling tiling) {
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
    if (tiling.dtype == KERNEL_F16) {
        SfagFinalize<half> op;
        op.Run(workspace, dk, dkr, dv, tiling);
    } else if (tiling.dtype == KERNEL_BF16) {
        SfagFinalize<bfloat16_t> op;
        op.Run(workspace, dk, dkr, dv, tiling);
    } else {
        SfagFinalize<float> op;
        op.Run(workspace, dk, dkr, dv, tiling);
    }
}
