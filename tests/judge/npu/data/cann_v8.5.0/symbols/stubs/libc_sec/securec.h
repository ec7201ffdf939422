/* opjudge stand-in for securec.h (CANN's libc_sec, openeuler libboundscheck's API), for the objects
 * compiled as C or against no other CANN header (ascendc_elf_tool.c, the generated host_stub.cpp).
 * Unlike ../include/securec.h it also includes the C headers the real securec.h brings in (through
 * securectype.h: stdio.h, string.h, stdlib.h; then stdarg.h and errno.h): ascendc_elf_tool.c calls
 * printf without including stdio.h itself. Declarations only. */
#ifndef OPJUDGE_STUB_LIBC_SEC_SECUREC_H
#define OPJUDGE_STUB_LIBC_SEC_SECUREC_H
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <stdarg.h>
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
extern errno_t memmove_s(void *dest, size_t destMax, const void *src, size_t count);
extern errno_t memcpy_s(void *dest, size_t destMax, const void *src, size_t count);
extern errno_t strcpy_s(char *strDest, size_t destMax, const char *strSrc);
extern errno_t strncpy_s(char *strDest, size_t destMax, const char *strSrc, size_t count);

#ifdef __cplusplus
}
#endif
#endif
