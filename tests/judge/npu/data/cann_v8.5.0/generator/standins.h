/*
 * standins.h: what `bisheng -E` would put into a preprocessed Ascend C kernel file, reduced to the
 * macros CANN's host-stub generator (cmake/asc/legacy_modules/util/extract_host_stub.py) reads.
 * Force-included (g++ -include) by regen.sh, after stdio.h, as CANN's preprocessing step passes
 * -includestdio.h (cmake/asc/legacy_modules/device_preprocess_project/CMakeLists.txt).
 *
 * Everything below is written for opjudge from reading cannmirror/asc-devkit at tag v8.5.0
 * (commit cc982f3abd7628a2ba3ef61063a0c220c9340c53); no CANN source is copied. Each block names
 * the file it stands in for. The generator matches these tokens literally:
 *   constants.py  FUNC_SIGNATURE  __attribute__((cce_kernel)) [aicore] <ret> <name>(<params>) {
 *   constants.py  CCE_GLOBAL      __attribute__((cce_global))   (first token of a GM pointer param)
 *   extract_host_stub.py find_kernel_type_by_source  __enable_feature_for_compile_default = X;
 *   process_dump_info.py          __enable_feature_for_compile_printf = 1
 *                                 __enable_feature_for_compile_assert = 1;
 *                                 __enable_feature_for_compile_{printf,assert}BufSize = N
 * so the stand-ins must expand to exactly those spellings. See README.md for what is approximate.
 */
#ifndef OPJUDGE_CANN_V850_STANDINS_H
#define OPJUDGE_CANN_V850_STANDINS_H

/* ---- 1. bisheng's own predefined macros (compiler built-ins: in no asc-devkit header) ----------
 * __global__ and __gm__ are defined by the compiler. Their expansion is inferred from the
 * generator: FUNC_SIGNATURE and CCE_GLOBAL (constants.py) match the preprocessed text, and the
 * generated auto_gen_<file>.cpp restores `#define __global__ __attribute__((cce_kernel))` after
 * including the kernel file (extract_host_stub.py, save_device_kernel_function).
 * The SoC macros are those of --cce-aicore-arch=dav-c220-vec (the AIV flags the preprocess step
 * uses for BUILD_MODE c220, bisheng_intf.cmake c220_aiv_intf_pub); values as ascc lists them for
 * the 910B (tools/ascc/asc_plugin/src/asc_ast_device_analyzer.cpp, DAV_VERSION_MAP), with _VEC_
 * for the vector pass. __CCE_IS_AICORE__: the headers test it for device code. */
#ifndef __global__
#define __global__ __attribute__((cce_kernel))
#endif
#ifndef __gm__
#define __gm__ __attribute__((cce_global))
#endif
#define __CCE__ 1
#define __CCE_IS_AICORE__ 1
#define __CCE_AICORE__ 220
#define __NPU_ARCH__ 2201
#define __DAV_C220_VEC__ 1

/* ---- 2. impl/basic_api/kernel_macros.h (v8.5.0) -------------------------------------------------
 * __aicore__ is [aicore]. ASCENDC_DUMP defaults to 1 for __NPU_ARCH__ 2201 and is #undef'd when
 * it is 0, so -DASCENDC_DUMP=0 leaves it *undefined* for every later #ifdef ASCENDC_DUMP. */
#ifndef __aicore__
#define __aicore__ [aicore]
#endif
#if defined(__NPU_ARCH__) && (__NPU_ARCH__ == 2201)
#ifndef ASCENDC_DUMP
#define ASCENDC_DUMP 1
#endif
#endif
#if defined(ASCENDC_DUMP) && (ASCENDC_DUMP == 0)
#undef ASCENDC_DUMP
#endif

/* ---- 3. impl/basic_api/utils/kernel_utils_macros.h (v8.5.0) -------------------------------------
 * GM_ADDR; the __CHECK_FEATURE_AT_PRECOMPILE markers (that define is passed by the preprocess
 * step). KERNEL_TYPE_AIV_ONLY etc. are enumerators there, so they stay as words. */
#define GM_ADDR __gm__ uint8_t*
#ifdef __CHECK_FEATURE_AT_PRECOMPILE
#define ENABLE_FEATURE_FOR_COMPILE(f, val) auto __enable_feature_for_compile_##f = val
#else
#define ENABLE_FEATURE_FOR_COMPILE(f, val)
#endif
#define KERNEL_TASK_TYPE(key, value) ENABLE_FEATURE_FOR_COMPILE(key, value)
#define KERNEL_TASK_TYPE_DEFAULT(value) ENABLE_FEATURE_FOR_COMPILE(default, value)
#define ENABLE_PRINTF() ENABLE_FEATURE_FOR_COMPILE(printf, 1)
#define ENABLE_PRINTF_DUMP_SIZE() ENABLE_FEATURE_FOR_COMPILE(printfBufSize, 1048576)
#define ENABLE_ASSERT() ENABLE_FEATURE_FOR_COMPILE(assert, 1)
#define ENABLE_ASSERT_DUMP_SIZE() ENABLE_FEATURE_FOR_COMPILE(assertBufSize, 1024)

/* ---- 4. impl/basic_api/kernel_log.h (v8.5.0), device branch (no ASCENDC_CPU_DEBUG) --------------
 * ASSERT_MSG is NOT under #ifdef ASCENDC_DUMP there: it marks the file as using assert even with
 * ASCENDC_DUMP=0. The deprecated-assert form is only defined while ASCENDC_DUMP is defined.
 * Bodies reduced to the markers and the failure branch (AssertPrint + trap). */
#define ASSERT_MSG(expr, fmt, ...)                                                         \
    do {                                                                                   \
        ENABLE_ASSERT();                                                                   \
        ENABLE_ASSERT_DUMP_SIZE();                                                         \
        if (!(expr)) {                                                                     \
            AscendC::AssertPrint("[ASSERT] %s:%u: Assertion `%s' " fmt, __FILE__, __LINE__, \
                                 #expr, ##__VA_ARGS__);                                    \
            trap();                                                                        \
        }                                                                                  \
    } while (0)
#ifdef ASCENDC_DUMP
#define ASCENDC_DEBUG_ASSERT_IMPL(expr, ...) ASSERT_MSG(expr, "\n")
#define ASCENDC_DEBUG_DEPRECATE_ASSERT_IMPL(expr, ...) \
    do {                                               \
        if (!(expr)) {                                 \
            ENABLE_ASSERT();                           \
            ENABLE_ASSERT_DUMP_SIZE();                 \
            ASSERT_MSG(expr, "\n");                    \
        }                                              \
    } while (0)
#else
#define ASCENDC_DEBUG_ASSERT_IMPL(...)
#define ASCENDC_DEBUG_DEPRECATE_ASSERT_IMPL(...)
#endif

/* ---- 5. include/basic_api/kernel_operator_dump_tensor_intf.h (v8.5.0) ---------------------------
 * assert / ascendc_assert: empty unless ASCENDC_DUMP is defined (i.e. empty with ASCENDC_DUMP=0). */
#undef assert
#ifdef ASCENDC_DUMP
#define assert(...) ASCENDC_DEBUG_DEPRECATE_ASSERT_IMPL(__VA_ARGS__)
#define ascendc_assert(...) ASCENDC_DEBUG_ASSERT_IMPL(__VA_ARGS__)
#else
#define assert(...)
#define ascendc_assert(...)
#endif

/* ---- 6. impl/basic_api/kernel_operator_dump_tensor_intf_impl.h (v8.5.0) -------------------------
 * Under __CHECK_FEATURE_AT_PRECOMPILE (and none of the ascc/NPU host-device defines) printf,
 * PRINTF, DumpTensor, DumpAccChkPoint become the printf markers, whatever ASCENDC_DUMP is.
 * `AscendC::printf(...)` therefore preprocesses to `AscendC::do { ... } while (0)`, as in CANN. */
#ifdef __CHECK_FEATURE_AT_PRECOMPILE
#define DumpTensor(...) do { ENABLE_PRINTF(); ENABLE_PRINTF_DUMP_SIZE(); } while (0)
#define DumpAccChkPoint(...) do { ENABLE_PRINTF(); ENABLE_PRINTF_DUMP_SIZE(); } while (0)
#define printf(...) do { ENABLE_PRINTF(); ENABLE_PRINTF_DUMP_SIZE(); } while (0)
#define PRINTF(...) do { ENABLE_PRINTF(); ENABLE_PRINTF_DUMP_SIZE(); } while (0)
#endif

#endif /* OPJUDGE_CANN_V850_STANDINS_H */
