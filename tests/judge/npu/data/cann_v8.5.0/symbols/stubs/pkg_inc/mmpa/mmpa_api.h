/* opjudge stand-in for CANN's pkg_inc/mmpa/mmpa_api.h (hicann/runtime v8.5.0).
 * The real header includes these system headers and securec.h, then declares mmpa's C API;
 * the sources use mmGetTid only (and securec's functions through this header). */
#ifndef OPJUDGE_STUB_MMPA_API_H
#define OPJUDGE_STUB_MMPA_API_H

#define LINUX 0
#define WIN 1

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#define MMPA_FUNC_VISIBILITY

#include <string.h>
#include <stdio.h>
#include <errno.h>
#include <time.h>
#include <unistd.h>
#include <pthread.h>
#include <stdlib.h>
#include <stdarg.h>
#include <limits.h>
#include <ctype.h>
#include <stddef.h>
#include <sys/syscall.h>
#include <sys/types.h>

#include "securec.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef signed int INT32;
MMPA_FUNC_VISIBILITY INT32 mmGetTid();

#ifdef __cplusplus
}
#endif
#endif
