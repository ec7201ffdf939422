/* opjudge stand-in for CANN's pkg_inc/runtime/runtime/rt_ffts.h (hicann/runtime v8.5.0). */
#ifndef OPJUDGE_STUB_RUNTIME_RT_FFTS_H
#define OPJUDGE_STUB_RUNTIME_RT_FFTS_H
#include "base.h"

#if defined(__cplusplus)
extern "C" {
#endif

RTS_API rtError_t rtGetC2cCtrlAddr(uint64_t *addr, uint32_t *len);

#if defined(__cplusplus)
}
#endif
#endif
