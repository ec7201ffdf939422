#ifndef HEADER_ACLRTLAUNCH_SFAG_ZERO_H
#define HEADER_ACLRTLAUNCH_SFAG_ZERO_H
#include "acl/acl_base.h"

#ifndef ACLRT_LAUNCH_KERNEL
#define ACLRT_LAUNCH_KERNEL(kernel_func) aclrtlaunch_##kernel_func
#endif

extern "C" uint32_t aclrtlaunch_sfag_zero(uint32_t blockDim, aclrtStream stream, void* workspace, SfagTiling* tiling);
#endif
