/* Stand-in for CANN's acl/acl_base.h, which every generated aclrtlaunch_<kernel>.h includes: only
 * the stream type those headers name (typedef void *aclrtStream), for regen.sh's header compile
 * check. It includes nothing; what the real acl_base.h brings in (e.g. <stdint.h>) is not modelled,
 * so the check compiles each header both with and without a prior #include <stdint.h>. */
#ifndef OPJUDGE_STANDIN_ACL_BASE_H
#define OPJUDGE_STANDIN_ACL_BASE_H
typedef void *aclrtStream;
#endif
