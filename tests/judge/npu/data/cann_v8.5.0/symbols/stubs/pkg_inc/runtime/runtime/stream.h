/* opjudge stand-in for CANN's pkg_inc/runtime/runtime/stream.h (hicann/runtime v8.5.0). */
#ifndef OPJUDGE_STUB_RUNTIME_STREAM_H
#define OPJUDGE_STUB_RUNTIME_STREAM_H
#include <stdlib.h>
#include "base.h"
#include "event.h"

#if defined(__cplusplus)
extern "C" {
#endif

#define RT_STREAM_FAST_LAUNCH (0x200U)
#define RT_STREAM_FAST_SYNC (0x400U)
#define RT_STREAM_PRIORITY_DEFAULT (0U)

RTS_API rtError_t rtRegStreamStateCallback(const char_t *regName, const rtStreamStateCallback callback);

#if defined(__cplusplus)
}
#endif
#endif
