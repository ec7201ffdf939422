
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
