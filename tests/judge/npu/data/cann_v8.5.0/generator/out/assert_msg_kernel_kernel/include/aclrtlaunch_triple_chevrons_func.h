
#ifndef HEADER_ACLRTLAUNCH_CHECKED_SCALE_HKERNEL_H_
#define HEADER_ACLRTLAUNCH_CHECKED_SCALE_HKERNEL_H_


struct ScaleTiling;


extern "C" uint32_t aclrtlaunch_checked_scale(uint32_t blockDim, void* stream, void* x, void* y, void* workspace, ScaleTiling* tiling);

inline uint32_t checked_scale(uint32_t blockDim, void* hold, void* stream, void* x, void* y, void* workspace, ScaleTiling* tiling)
{
    (void)hold;
    return aclrtlaunch_checked_scale(blockDim, stream, x, y, workspace, tiling);
}

#endif
