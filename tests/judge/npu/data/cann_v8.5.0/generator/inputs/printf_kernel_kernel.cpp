/* Team-shaped input for regen.sh: a kernel using AscendC::printf and PRINTF. Under
 * __CHECK_FEATURE_AT_PRECOMPILE asc-devkit v8.5.0 turns both into the printf marker
 * (impl/basic_api/kernel_operator_dump_tensor_intf_impl.h), whatever ASCENDC_DUMP is. */
#include "kernel_operator.h"

struct FillTiling {
    uint32_t totalLength;
    float value;
};

extern "C" __global__ __aicore__ void fill_value(GM_ADDR y, GM_ADDR workspace, FillTiling tiling)
{
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
    if (AscendC::GetBlockIdx() == 0) {
        AscendC::printf("fill_value: totalLength=%u value=%f\n", tiling.totalLength, tiling.value);
    }
    AscendC::GlobalTensor<float> yGm;
    yGm.SetGlobalBuffer((__gm__ float *)y, tiling.totalLength);
    AscendC::InitGlobalMemory(yGm, tiling.totalLength, tiling.value);
    PRINTF("block %ld done\n", AscendC::GetBlockIdx());
}
