/* sparse_flash_attention_grad.h, from the problem package; do not edit */
#ifndef SPARSE_FLASH_ATTENTION_GRAD_H
#define SPARSE_FLASH_ATTENTION_GRAD_H
#include <stdint.h>
#ifdef __cplusplus
extern "C" {
#endif

enum { KERNEL_F32 = 0, KERNEL_F16 = 1, KERNEL_BF16 = 2 };

typedef struct kernel_args {
    int64_t B, S1, S2, N1, N2, D, Dr, K;
    int64_t block_size;   /* bs */
    int64_t sparse_mode;  /* 0 or 3 */
    double  scale;
    int64_t dtype;        /* KERNEL_F32, KERNEL_F16 or KERNEL_BF16: q .. dv */
    const void *q, *q_rope, *k, *k_rope, *v, *d_out, *out;
    const int32_t *sparse_indices;
    const float *softmax_max, *softmax_sum;
    void *dq, *dq_rope, *dk, *dk_rope, *dv;
    void *workspace;        /* scratch of workspace_bytes, garbage on entry */
    int64_t workspace_bytes;
    void *stream;
} kernel_args;

/* Optional: scratch bytes wanted for these sizes; 0 when not exported. */
int64_t kernel_workspace_bytes(const kernel_args *args);
/* Required: 0 on success; any other value is reported as a runtime error. */
int kernel_run(const kernel_args *args);

#ifdef __cplusplus
}
#endif
#endif
