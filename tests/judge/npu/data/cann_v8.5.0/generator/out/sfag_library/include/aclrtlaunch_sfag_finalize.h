#ifndef HEADER_ACLRTLAUNCH_SFAG_FINALIZE_H
#define HEADER_ACLRTLAUNCH_SFAG_FINALIZE_H
#include "acl/acl_base.h"

#ifndef ACLRT_LAUNCH_KERNEL
#define ACLRT_LAUNCH_KERNEL(kernel_func) aclrtlaunch_##kernel_func
#endif

extern "C" uint32_t aclrtlaunch_sfag_finalize(uint32_t blockDim, aclrtStream stream, void* dk, void* dkr, void* dv, void* workspace, SfagTiling* tiling);
#endif
