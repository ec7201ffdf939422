
#ifndef HEADER_ACLRTLAUNCH_CHECKED_COPY_HKERNEL_H_
#define HEADER_ACLRTLAUNCH_CHECKED_COPY_HKERNEL_H_


struct CopyTiling;


extern "C" uint32_t aclrtlaunch_checked_copy(uint32_t blockDim, void* stream, void* src, void* dst, void* workspace, CopyTiling* tiling);

inline uint32_t checked_copy(uint32_t blockDim, void* hold, void* stream, void* src, void* dst, void* workspace, CopyTiling* tiling)
{
    (void)hold;
    return aclrtlaunch_checked_copy(blockDim, stream, src, dst, workspace, tiling);
}

#endif
