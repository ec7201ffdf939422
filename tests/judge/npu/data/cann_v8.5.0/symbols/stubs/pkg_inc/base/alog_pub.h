/* opjudge stand-in for CANN's alog_pub.h (hicann/runtime v8.5.0 include/dfx/base/alog_pub.h, found by
 * asc-devkit's Findalog.cmake under pkg_inc/base). Both functions are declared weak there, as here. */
#ifndef OPJUDGE_STUB_ALOG_PUB_H
#define OPJUDGE_STUB_ALOG_PUB_H
#include <stdint.h>
#include "log_types.h"

#ifdef __cplusplus
extern "C" {
#endif

LOG_FUNC_VISIBILITY int32_t AlogCheckDebugLevel(uint32_t moduleId, int32_t level) __attribute((weak));
LOG_FUNC_VISIBILITY int32_t AlogRecord(uint32_t moduleId, uint32_t logType, int32_t level, const char *fmt, ...)
    __attribute((weak)) __attribute__((format(printf, 4, 5)));

#ifdef __cplusplus
}
#endif
#endif
