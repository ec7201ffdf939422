/* opjudge stand-in for CANN's pkg_inc/runtime/runtime/context.h (hicann/runtime v8.5.0):
 * ascendc_runtime.cpp uses nothing it declares but what base.h declares. */
#ifndef OPJUDGE_STUB_RUNTIME_CONTEXT_H
#define OPJUDGE_STUB_RUNTIME_CONTEXT_H
#include "base.h"
#endif
