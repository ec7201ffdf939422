/* Stand-in for CANN's securec.h (libc_sec), which the generated host_stub.cpp includes: only the
 * one function host_stub.cpp calls, for regen.sh's host-side compile check. */
#ifndef OPJUDGE_STANDIN_SECUREC_H
#define OPJUDGE_STANDIN_SECUREC_H
#include <stddef.h>
typedef int errno_t;
#ifdef __cplusplus
extern "C" {
#endif
errno_t memcpy_s(void *dest, size_t destMax, const void *src, size_t count);
#ifdef __cplusplus
}
#endif
#endif
