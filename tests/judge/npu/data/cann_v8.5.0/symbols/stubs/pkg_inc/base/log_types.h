/* opjudge stand-in for CANN's pkg_inc/base/log_types.h (hicann/runtime v8.5.0):
 * the level and type constants and the module id ascendc_tool_log.h uses. */
#ifndef OPJUDGE_STUB_LOG_TYPES_H
#define OPJUDGE_STUB_LOG_TYPES_H

#define LOG_FUNC_VISIBILITY __attribute__((visibility("default")))

#define DLOG_DEBUG 0x0
#define DLOG_INFO  0x1
#define DLOG_WARN  0x2
#define DLOG_ERROR 0x3

enum {
    DLOG_TYPE_DEBUG = 0,
};

enum {
    ASCENDCKERNEL = 69,
};
#endif
