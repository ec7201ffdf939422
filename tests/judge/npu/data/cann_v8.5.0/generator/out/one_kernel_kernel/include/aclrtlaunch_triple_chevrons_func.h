
#ifndef HEADER_ACLRTLAUNCH_AXPY_CUSTOM_HKERNEL_H_
#define HEADER_ACLRTLAUNCH_AXPY_CUSTOM_HKERNEL_H_


struct AddTiling;


extern "C" uint32_t aclrtlaunch_axpy_custom(uint32_t blockDim, void* stream, void* x, void* y, void* z, void* workspace, AddTiling* tiling);

inline uint32_t axpy_custom(uint32_t blockDim, void* hold, void* stream, void* x, void* y, void* z, void* workspace, AddTiling* tiling)
{
    (void)hold;
    return aclrtlaunch_axpy_custom(blockDim, stream, x, y, z, workspace, tiling);
}

#endif
