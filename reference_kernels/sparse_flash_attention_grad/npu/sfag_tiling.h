/*
 * sfag_tiling.h: what the host computes once per call and every AI core reads (the "tiling").
 *
 * Shared by the host file (sfag_host.cpp, compiled by the host C++ compiler) and the kernel
 * files (sfag_*_kernel.cpp, compiled by bisheng), so it holds plain integers only. Each kernel
 * takes it by value as its last parameter; the launchers CANN generates for them
 * (aclrtlaunch_<kernel>, and the <<<>>> form, which calls them) take it by POINTER:
 *     aclrtlaunch_sfag_zero(uint32_t blockDim, aclrtStream stream, void* workspace, SfagTiling* tiling)
 * (CANN 8.5.0's extract_host_stub.py, tiling_add_pointer; its output for these kernels is recorded in
 * tests/judge/npu/data/cann_v8.5.0/generator). The generated headers name SfagTiling without
 * declaring it: include this header before them.
 *
 * Written `struct SfagTiling { ... };`, at file scope, in the form of Huawei's kernel-launch
 * samples (`struct AddCustomTilingData { ... };`): CANN's stub generator finds a kernel's
 * struct-typed parameters with the pattern ^\s*struct\s+(\w+)\s*\{ over the preprocessed
 * kernel file (cannmirror/asc-devkit v8.5.0, cmake/asc/legacy_modules/util/constants.py, STRUCT) and
 * copies the struct into the generated host_stub.cpp. `typedef struct X {...} X;` or a struct
 * inside a namespace is not found, and host_stub.cpp then names a type it never declares.
 *
 * Starter kernel of the opjudge NPU track. NOT YET RUN ON NPU HARDWARE: written from the
 * Ascend C documentation, correct by construction as far as it was reasoned; see README.md.
 */
#ifndef SFAG_TILING_H
#define SFAG_TILING_H

#include <stdint.h>

/* Bounds of the kernel's fixed-size scalar arrays. */
#define SFAG_MAX_TOKENS_PER_CHUNK 64
#define SFAG_MAX_HEADS_PER_ITEM 16
/* Rows are padded to whole vector repeats (64 floats); a repeat stride is at most 255 blocks
 * of 32 bytes, so a padded row of q|q_rope may hold at most 1984 floats. */
#define SFAG_VEC_FLOATS 64
#define SFAG_MAX_ROW_FLOATS 1984
/* Unified Buffer bytes the tiling may plan for (the 910B's vector core has 192 KiB). */
#define SFAG_UB_BUDGET_BYTES (184 * 1024)
/* The system workspace in front of the kernels' own (RESERVED_WORKSPACE in asc-devkit's
 * impl/basic_api/utils/kernel_utils_constants.h: 16 MiB on the 910B, 2 MiB on the 310P). */
#define SFAG_SYS_WORKSPACE_BYTES (16LL * 1024 * 1024)
/* Vector cores asked for; 40 is the 910B3's count (20 AI cores x 2 vector cores). */
#define SFAG_MAX_BLOCKS 40

struct SfagTiling {
    /* Sizes, as in kernel_args (G = N1 / N2). */
    int64_t B, S1, S2, N1, N2, G, D, Dr, K;
    int64_t blockSize;  /* bs: tokens per selected block */
    int64_t sparseMode; /* 0 (all keys) or 3 (right-down causal) */
    float scale;
    int32_t dtype;       /* KERNEL_F32, KERNEL_F16 or KERNEL_BF16 */
    /* The split of the work. */
    int32_t headsPerItem;   /* Hb: query heads of one KV head handled together (divides G) */
    int32_t tokensPerChunk; /* Tc: selected keys loaded into the Unified Buffer at once */
    int32_t dPad;           /* D rounded up to a multiple of 64 */
    int32_t drPad;          /* Dr rounded up to a multiple of 64 (0 when Dr == 0) */
    int32_t rowPad;         /* rows of the small per-token vectors, a multiple of 8 */
    int32_t blocks;         /* vector cores launched */
    int64_t items;          /* B * S1 * N2 * (G / Hb): one query row and head group each */
    /* Float32 accumulators of dk, dk_rope and dv in the workspace (byte offsets). */
    int64_t accRows;        /* B * S2 * N2 */
    int64_t accDkOffset, accDkrOffset, accDvOffset;
    int64_t workspaceBytes; /* the accumulators: the user part, after the system workspace */
};

#endif /* SFAG_TILING_H */
