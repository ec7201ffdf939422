
#ifndef HEADER_ACLRTLAUNCH_SFAG_ZERO_HKERNEL_H_
#define HEADER_ACLRTLAUNCH_SFAG_ZERO_HKERNEL_H_


struct SfagTiling;


extern "C" uint32_t aclrtlaunch_sfag_zero(uint32_t blockDim, void* stream, void* workspace, SfagTiling* tiling);

inline uint32_t sfag_zero(uint32_t blockDim, void* hold, void* stream, void* workspace, SfagTiling* tiling)
{
    (void)hold;
    return aclrtlaunch_sfag_zero(blockDim, stream, workspace, tiling);
}

#endif
