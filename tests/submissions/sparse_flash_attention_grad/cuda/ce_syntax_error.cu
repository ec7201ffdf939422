// Fixture (expected CE): nvcc's own message must reach the report.
#include <cuda_runtime.h>

#include "sparse_flash_attention_grad.h"

__global__ void broken(float* x) { x[threadIdx.x] = 1.0f }

extern "C" int kernel_run(const kernel_args* args) { return args == nullptr; }
