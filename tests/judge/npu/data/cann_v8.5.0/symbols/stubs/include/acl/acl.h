/* opjudge stand-in for CANN's include/acl/acl.h (hicann/runtime v8.5.0 include/external/acl/acl.h):
 * aicpu_rt.cpp uses only what acl_rt.h declares. */
#ifndef OPJUDGE_STUB_ACL_H
#define OPJUDGE_STUB_ACL_H
#include "acl_rt.h"
#endif
