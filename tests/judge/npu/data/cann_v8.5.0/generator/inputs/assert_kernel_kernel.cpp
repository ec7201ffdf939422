/* Team-shaped input for regen.sh: a kernel using assert(...). In asc-devkit v8.5.0 assert is a macro
 * (include/basic_api/kernel_operator_dump_tensor_intf.h) that marks the file for the generator
 * (`__enable_feature_for_compile_assert = 1;`) only while ASCENDC_DUMP is defined. */
#include "kernel_operator.h"

struct CopyTiling {
    uint32_t totalLength;
    uint32_t tileLength;
};

extern "C" __global__ __aicore__ void checked_copy(GM_ADDR src, GM_ADDR dst, GM_ADDR workspace, CopyTiling tiling)
{
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
    assert(tiling.tileLength > 0);
    assert(tiling.totalLength % tiling.tileLength == 0, "totalLength %u is not a multiple of tileLength %u\n",
           tiling.totalLength, tiling.tileLength);
    AscendC::TPipe pipe;
    AscendC::TBuf<AscendC::TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, tiling.tileLength * sizeof(float));
    AscendC::GlobalTensor<float> srcGm, dstGm;
    srcGm.SetGlobalBuffer((__gm__ float *)src, tiling.totalLength);
    dstGm.SetGlobalBuffer((__gm__ float *)dst, tiling.totalLength);
    AscendC::LocalTensor<float> local = buf.Get<float>();
    for (uint32_t off = AscendC::GetBlockIdx() * tiling.tileLength; off < tiling.totalLength;
         off += AscendC::GetBlockNum() * tiling.tileLength) {
        AscendC::DataCopy(local, srcGm[off], tiling.tileLength);
        AscendC::PipeBarrier<PIPE_ALL>();
        AscendC::DataCopy(dstGm[off], local, tiling.tileLength);
        AscendC::PipeBarrier<PIPE_ALL>();
    }
}
