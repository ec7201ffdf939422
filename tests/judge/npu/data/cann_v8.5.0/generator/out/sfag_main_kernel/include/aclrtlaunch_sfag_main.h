#ifndef HEADER_ACLRTLAUNCH_SFAG_MAIN_H
#define HEADER_ACLRTLAUNCH_SFAG_MAIN_H
#include "acl/acl_base.h"

#ifndef ACLRT_LAUNCH_KERNEL
#define ACLRT_LAUNCH_KERNEL(kernel_func) aclrtlaunch_##kernel_func
#endif

extern "C" uint32_t aclrtlaunch_sfag_main(uint32_t blockDim, aclrtStream stream, void* q, void* qr, void* k, void* kr, void* v, void* indices, void* dout, void* out, void* softmaxMax, void* softmaxSum, void* dq, void* dqr, void* workspace, SfagTiling* tiling);
#endif
