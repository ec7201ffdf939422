/* opjudge stand-in for CANN's pkg_inc/runtime/runtime/mem.h (hicann/runtime v8.5.0). */
#ifndef OPJUDGE_STUB_RUNTIME_MEM_H
#define OPJUDGE_STUB_RUNTIME_MEM_H
#include <stddef.h>
#include "base.h"
#include "stream.h"

#if defined(__cplusplus)
extern "C" {
#endif

typedef uint32_t rtMemType_t;

typedef enum tagRtMemInfoType {
    RT_MEMORYINFO_DDR,
    RT_MEMORYINFO_HBM,
    RT_MEMORYINFO_DDR_HUGE,
    RT_MEMORYINFO_DDR_NORMAL,
    RT_MEMORYINFO_HBM_HUGE,
    RT_MEMORYINFO_HBM_NORMAL,
} rtMemInfoType_t;

RTS_API rtError_t rtMalloc(void **devPtr, uint64_t size, rtMemType_t type, const uint16_t moduleId);

#if defined(__cplusplus)
}
#endif
#endif
