/* opjudge stand-in for securec.h (CANN's libc_sec, openeuler libboundscheck's API):
 * the three functions the sources call, with errno_t and EOK. */
#ifndef OPJUDGE_STUB_SECUREC_H
#define OPJUDGE_STUB_SECUREC_H
#include <stddef.h>
#include <errno.h>

#ifndef errno_t
typedef int errno_t;
#endif
#ifndef EOK
#define EOK 0
#endif

#ifdef __cplusplus
extern "C" {
#endif

extern errno_t memset_s(void *dest, size_t destMax, int c, size_t count);
extern errno_t memcpy_s(void *dest, size_t destMax, const void *src, size_t count);
extern errno_t strcpy_s(char *strDest, size_t destMax, const char *strSrc);

#ifdef __cplusplus
}
#endif
#endif
