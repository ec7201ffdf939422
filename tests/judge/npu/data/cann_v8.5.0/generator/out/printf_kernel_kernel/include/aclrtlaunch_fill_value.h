#ifndef HEADER_ACLRTLAUNCH_FILL_VALUE_H
#define HEADER_ACLRTLAUNCH_FILL_VALUE_H
#include "acl/acl_base.h"

#ifndef ACLRT_LAUNCH_KERNEL
#define ACLRT_LAUNCH_KERNEL(kernel_func) aclrtlaunch_##kernel_func
#endif

extern "C" uint32_t aclrtlaunch_fill_value(uint32_t blockDim, aclrtStream stream, void* y, void* workspace, FillTiling* tiling);
#endif
