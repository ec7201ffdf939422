/* opjudge stand-in for CANN's pkg_inc/runtime/runtime/base.h (hicann/runtime v8.5.0).
 * Written by hand: only the types and constants tools/build/asc_rt/ascendc_runtime.cpp uses. */
#ifndef OPJUDGE_STUB_RUNTIME_BASE_H
#define OPJUDGE_STUB_RUNTIME_BASE_H
#include <stdbool.h>
#include <stdint.h>

#if defined(__cplusplus)
extern "C" {
#endif

#ifndef RTS_API
#define RTS_API
#endif

typedef int32_t rtError_t;
static const int32_t RT_ERROR_NONE = 0;

#ifndef char_t
typedef char char_t;
#endif

typedef void *rtStream_t;
typedef void *rtEvent_t;

typedef struct tagRtTaskCfgInfo {
    uint8_t qos;
    uint8_t partId;
    uint8_t schemMode;
    bool d2dCrossFlag;
    uint32_t blockDimOffset;
    uint8_t dumpflag;
    uint8_t neverTimeout;
    uint8_t rev[2];
    uint32_t localMemorySize;
} rtTaskCfgInfo_t;

typedef void (*rtStreamStateCallback)(rtStream_t stm, const bool isCreate);

#if defined(__cplusplus)
}
#endif
#endif
