
#ifndef HEADER_ACLRTLAUNCH_SFAG_FINALIZE_HKERNEL_H_
#define HEADER_ACLRTLAUNCH_SFAG_FINALIZE_HKERNEL_H_


struct SfagTiling;


extern "C" uint32_t aclrtlaunch_sfag_finalize(uint32_t blockDim, void* stream, void* dk, void* dkr, void* dv, void* workspace, SfagTiling* tiling);

inline uint32_t sfag_finalize(uint32_t blockDim, void* hold, void* stream, void* dk, void* dkr, void* dv, void* workspace, SfagTiling* tiling)
{
    (void)hold;
    return aclrtlaunch_sfag_finalize(blockDim, stream, dk, dkr, dv, workspace, tiling);
}

#endif
