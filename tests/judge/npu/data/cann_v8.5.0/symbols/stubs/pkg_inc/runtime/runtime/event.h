/* opjudge stand-in for CANN's pkg_inc/runtime/runtime/event.h (hicann/runtime v8.5.0). */
#ifndef OPJUDGE_STUB_RUNTIME_EVENT_H
#define OPJUDGE_STUB_RUNTIME_EVENT_H
#include "base.h"
#define RT_EVENT_DDSYNC_NS 0x01U
#define RT_EVENT_WITH_FLAG (RT_EVENT_DDSYNC_NS)
#endif
