
#ifndef HEADER_ACLRTLAUNCH_ACCUMULATE_HKERNEL_H_
#define HEADER_ACLRTLAUNCH_ACCUMULATE_HKERNEL_H_


struct RowTiling;


extern "C" uint32_t aclrtlaunch_accumulate(uint32_t blockDim, void* stream, void* x, void* acc, void* workspace, RowTiling* tiling);

inline uint32_t accumulate(uint32_t blockDim, void* hold, void* stream, void* x, void* acc, void* workspace, RowTiling* tiling)
{
    (void)hold;
    return aclrtlaunch_accumulate(blockDim, stream, x, acc, workspace, tiling);
}

#endif

#ifndef HEADER_ACLRTLAUNCH_ZERO_OUT_HKERNEL_H_
#define HEADER_ACLRTLAUNCH_ZERO_OUT_HKERNEL_H_


struct RowTiling;


extern "C" uint32_t aclrtlaunch_zero_out(uint32_t blockDim, void* stream, void* acc, void* workspace, RowTiling* tiling);

inline uint32_t zero_out(uint32_t blockDim, void* hold, void* stream, void* acc, void* workspace, RowTiling* tiling)
{
    (void)hold;
    return aclrtlaunch_zero_out(blockDim, stream, acc, workspace, tiling);
}

#endif
