/* add_mul_relu.h, from the problem package; do not edit */
#ifndef ADD_MUL_RELU_H
#define ADD_MUL_RELU_H
#include <stdint.h>
#ifdef __cplusplus
extern "C" {
#endif

enum { KERNEL_F32 = 0, KERNEL_F16 = 1, KERNEL_BF16 = 2 };

typedef struct kernel_args {
    int64_t n;              /* elements of x and y */
    int64_t dtype;          /* KERNEL_F32, KERNEL_F16 or KERNEL_BF16: x and y */
    const void *x;
    void *y;                /* y[i] = max((x[i] + 1) * 2, 0) */
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
