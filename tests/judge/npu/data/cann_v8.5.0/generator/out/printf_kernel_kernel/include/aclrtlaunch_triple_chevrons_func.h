
#ifndef HEADER_ACLRTLAUNCH_FILL_VALUE_HKERNEL_H_
#define HEADER_ACLRTLAUNCH_FILL_VALUE_HKERNEL_H_


struct FillTiling;


extern "C" uint32_t aclrtlaunch_fill_value(uint32_t blockDim, void* stream, void* y, void* workspace, FillTiling* tiling);

inline uint32_t fill_value(uint32_t blockDim, void* hold, void* stream, void* y, void* workspace, FillTiling* tiling)
{
    (void)hold;
    return aclrtlaunch_fill_value(blockDim, stream, y, workspace, tiling);
}

#endif
