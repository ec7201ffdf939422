/* Team-shaped input for regen.sh: a kernel using ASSERT_MSG(expr, fmt, ...), which asc-devkit v8.5.0
 * defines in impl/basic_api/kernel_log.h (reached through kernel_operator.h) without an
 * #ifdef ASCENDC_DUMP around it: the assert marker survives ASCENDC_DUMP=0. */
#include "kernel_operator.h"

struct ScaleTiling {
    uint32_t totalLength;
    float scale;
};

extern "C" __global__ __aicore__ void checked_scale(GM_ADDR x, GM_ADDR y, GM_ADDR workspace, ScaleTiling tiling)
{
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
    ASSERT_MSG(tiling.totalLength % 64 == 0, "totalLength %u is not a multiple of 64\n", tiling.totalLength);
    AscendC::TPipe pipe;
    AscendC::TBuf<AscendC::TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, 64 * sizeof(float));
    AscendC::GlobalTensor<float> xGm, yGm;
    xGm.SetGlobalBuffer((__gm__ float *)x, tiling.totalLength);
    yGm.SetGlobalBuffer((__gm__ float *)y, tiling.totalLength);
    AscendC::LocalTensor<float> local = buf.Get<float>();
    for (uint32_t off = AscendC::GetBlockIdx() * 64; off < tiling.totalLength; off += AscendC::GetBlockNum() * 64) {
        AscendC::DataCopy(local, xGm[off], 64);
        AscendC::PipeBarrier<PIPE_ALL>();
        AscendC::Muls(local, local, tiling.scale, 64);
        AscendC::PipeBarrier<PIPE_ALL>();
        AscendC::DataCopy(yGm[off], local, 64);
        AscendC::PipeBarrier<PIPE_ALL>();
    }
}
