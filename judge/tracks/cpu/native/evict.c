/* The CPU track's cache flush by line (docs/rules.md, "Timing"): every line of the
 * given buffer written back and dropped from every cache level, so a call's inputs, outputs
 * and workspace start in memory. Built by judge/tracks/cpu/evict.py and loaded by the runner
 * child; a team's kernel never links it. */
#include <stddef.h>
#include <stdint.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>

#define LINE 64

__attribute__((target("clflushopt"))) static void evict_opt(const char *p, const char *end) {
    for (; p < end; p += LINE) _mm_clflushopt((void *)p);
    _mm_sfence(); /* clflushopt is weakly ordered: done before the call starts */
}

static void evict_plain(const char *p, const char *end) {
    for (; p < end; p += LINE) _mm_clflush(p);
    _mm_mfence();
}

/* 2: clflushopt, 1: clflush. */
int opjudge_evict_method(void) { return __builtin_cpu_supports("clflushopt") ? 2 : 1; }

int opjudge_evict(const void *start, size_t bytes) {
    const char *p = (const char *)((uintptr_t)start & ~(uintptr_t)(LINE - 1));
    const char *end = (const char *)start + bytes;
    if (__builtin_cpu_supports("clflushopt")) evict_opt(p, end);
    else evict_plain(p, end);
    return 0;
}

#elif defined(__aarch64__)

static size_t line_bytes(void) {
    uint64_t ctr;
    __asm__ volatile("mrs %0, ctr_el0" : "=r"(ctr));
    return (size_t)4 << ((ctr >> 16) & 0xf); /* DminLine: log2 of the smallest data line, in words */
}

/* 3: dc civac (clean and invalidate to the point of coherency). */
int opjudge_evict_method(void) { return 3; }

int opjudge_evict(const void *start, size_t bytes) {
    const size_t line = line_bytes();
    const char *p = (const char *)((uintptr_t)start & ~(uintptr_t)(line - 1));
    const char *end = (const char *)start + bytes;
    for (; p < end; p += line) __asm__ volatile("dc civac, %0" ::"r"(p) : "memory");
    __asm__ volatile("dsb ish" ::: "memory");
    return 0;
}

#else

int opjudge_evict_method(void) { return 0; }
int opjudge_evict(const void *start, size_t bytes) { (void)start; (void)bytes; return -1; }

#endif
