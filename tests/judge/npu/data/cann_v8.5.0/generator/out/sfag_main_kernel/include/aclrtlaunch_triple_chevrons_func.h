
#ifndef HEADER_ACLRTLAUNCH_SFAG_MAIN_HKERNEL_H_
#define HEADER_ACLRTLAUNCH_SFAG_MAIN_HKERNEL_H_


struct SfagTiling;


extern "C" uint32_t aclrtlaunch_sfag_main(uint32_t blockDim, void* stream, void* q, void* qr, void* k, void* kr, void* v, void* indices, void* dout, void* out, void* softmaxMax, void* softmaxSum, void* dq, void* dqr, void* workspace, SfagTiling* tiling);

inline uint32_t sfag_main(uint32_t blockDim, void* hold, void* stream, void* q, void* qr, void* k, void* kr, void* v, void* indices, void* dout, void* out, void* softmaxMax, void* softmaxSum, void* dq, void* dqr, void* workspace, SfagTiling* tiling)
{
    (void)hold;
    return aclrtlaunch_sfag_main(blockDim, stream, q, qr, k, kr, v, indices, dout, out, softmaxMax, softmaxSum, dq, dqr, workspace, tiling);
}

#endif
