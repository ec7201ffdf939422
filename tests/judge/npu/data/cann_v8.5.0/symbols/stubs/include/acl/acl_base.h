/* opjudge stand-in for CANN's include/acl/acl_base.h (hicann/runtime v8.5.0 include/external/acl/
 * acl_base.h with acl_base_rt.h): the types, ACL_ERROR_NONE and aclrtGetSocName. */
#ifndef OPJUDGE_STUB_ACL_BASE_H
#define OPJUDGE_STUB_ACL_BASE_H
#include <stdint.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define ACL_FUNC_VISIBILITY

typedef void *aclrtStream;
typedef void *aclrtEvent;
typedef int aclError;

static const int ACL_ERROR_NONE = 0;

ACL_FUNC_VISIBILITY const char *aclrtGetSocName();

#ifdef __cplusplus
}
#endif
#endif
