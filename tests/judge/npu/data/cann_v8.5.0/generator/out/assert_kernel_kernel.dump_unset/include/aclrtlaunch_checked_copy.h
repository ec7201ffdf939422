#ifndef HEADER_ACLRTLAUNCH_CHECKED_COPY_H
#define HEADER_ACLRTLAUNCH_CHECKED_COPY_H
#include "acl/acl_base.h"

#ifndef ACLRT_LAUNCH_KERNEL
#define ACLRT_LAUNCH_KERNEL(kernel_func) aclrtlaunch_##kernel_func
#endif

extern "C" uint32_t aclrtlaunch_checked_copy(uint32_t blockDim, aclrtStream stream, void* src, void* dst, void* workspace, CopyTiling* tiling);
#endif
