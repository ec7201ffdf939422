/* Team-shaped input for regen.sh: two kernels in one file (opjudge refuses this; the generator
 * warns and goes on). Written in the order zero_out, accumulate: the generator sorts them by name. */
#include "kernel_operator.h"

struct RowTiling {
    uint32_t rows;
    uint32_t cols;
};

extern "C" __global__ __aicore__ void zero_out(GM_ADDR acc, GM_ADDR workspace, RowTiling tiling)
{
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
    AscendC::GlobalTensor<float> accGm;
    accGm.SetGlobalBuffer((__gm__ float *)acc, tiling.rows * tiling.cols);
    AscendC::InitGlobalMemory(accGm, tiling.rows * tiling.cols, 0.0f);
}

extern "C" __global__ __aicore__ void accumulate(GM_ADDR x, GM_ADDR acc, GM_ADDR workspace, RowTiling tiling)
{
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
    AscendC::TPipe pipe;
    AscendC::TBuf<AscendC::TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, tiling.cols * sizeof(float));
    AscendC::GlobalTensor<float> xGm, accGm;
    xGm.SetGlobalBuffer((__gm__ float *)x, tiling.rows * tiling.cols);
    accGm.SetGlobalBuffer((__gm__ float *)acc, tiling.rows * tiling.cols);
    AscendC::LocalTensor<float> row = buf.Get<float>();
    for (uint32_t r = AscendC::GetBlockIdx(); r < tiling.rows; r += AscendC::GetBlockNum()) {
        AscendC::DataCopy(row, xGm[r * tiling.cols], tiling.cols);
        AscendC::PipeBarrier<PIPE_ALL>();
        AscendC::SetAtomicAdd<float>();
        AscendC::DataCopy(accGm[r * tiling.cols], row, tiling.cols);
        AscendC::SetAtomicNone();
        AscendC::PipeBarrier<PIPE_ALL>();
    }
}
