// Writes zeros to every output: a well-formed Ascend C submission with the wrong answer.
#include <kernel_operator.h>
#include "sparse_flash_attention_grad.h"

using namespace AscendC;

constexpr uint32_t ZERO_BYTES = 16384;

// The judge builds with HAVE_WORKSPACE and HAVE_TILING: every kernel ends with (workspace, tiling).
struct ZeroTiling {
    uint64_t bytes;
};

extern "C" __global__ __aicore__ void zero_bytes(GM_ADDR dst, GM_ADDR workspace, ZeroTiling tiling) {
    uint64_t bytes = tiling.bytes;
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
    TPipe pipe;
    TBuf<TPosition::VECOUT> buffer;
    pipe.InitBuffer(buffer, ZERO_BYTES);
    LocalTensor<uint8_t> zeros = buffer.Get<uint8_t>();
    Duplicate(zeros.ReinterpretCast<uint16_t>(), static_cast<uint16_t>(0), ZERO_BYTES / 2);
    PipeBarrier<PIPE_ALL>();
    GlobalTensor<uint8_t> out;
    out.SetGlobalBuffer(reinterpret_cast<__gm__ uint8_t *>(dst), bytes);
    uint64_t per = (bytes + GetBlockNum() - 1) / GetBlockNum();
    uint64_t begin = per * GetBlockIdx();
    uint64_t end = begin + per < bytes ? begin + per : bytes;
    for (uint64_t pos = begin; pos < end; pos += ZERO_BYTES) {
        uint32_t n = static_cast<uint32_t>(end - pos < ZERO_BYTES ? end - pos : ZERO_BYTES);
        DataCopyExtParams params{1, n, 0, 0, 0};
        DataCopyPad(out[pos], zeros, params);
    }
}

extern "C" int kernel_run(const kernel_args *a) {
    int64_t elem = a->dtype == KERNEL_F32 ? 4 : 2;
    void *outputs[5] = {a->dq, a->dk, a->dv, a->dq_rope, a->dk_rope};
    int64_t bytes[5] = {a->B * a->S1 * a->N1 * a->D * elem, a->B * a->S2 * a->N2 * a->D * elem,
                        a->B * a->S2 * a->N2 * a->D * elem, a->B * a->S1 * a->N1 * a->Dr * elem,
                        a->B * a->S2 * a->N2 * a->Dr * elem};
    for (int i = 0; i < 5; ++i) {
        if (outputs[i] != nullptr && bytes[i] > 0) {
            ZeroTiling tiling{static_cast<uint64_t>(bytes[i])};
            zero_bytes<<<8, nullptr, a->stream>>>(static_cast<uint8_t *>(outputs[i]), nullptr, tiling);
        }
    }
    return 0;
}
