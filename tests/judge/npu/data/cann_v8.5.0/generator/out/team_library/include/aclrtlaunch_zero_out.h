#ifndef HEADER_ACLRTLAUNCH_ZERO_OUT_H
#define HEADER_ACLRTLAUNCH_ZERO_OUT_H
#include "acl/acl_base.h"

#ifndef ACLRT_LAUNCH_KERNEL
#define ACLRT_LAUNCH_KERNEL(kernel_func) aclrtlaunch_##kernel_func
#endif

extern "C" uint32_t aclrtlaunch_zero_out(uint32_t blockDim, aclrtStream stream, void* acc, void* workspace, RowTiling* tiling);
#endif
