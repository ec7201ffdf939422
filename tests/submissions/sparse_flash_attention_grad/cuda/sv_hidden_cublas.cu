// Fixture (expected SV, library policy): cuBLAS reached through a name the source check cannot
// read (token pasting); torch has cuBLAS loaded in the runner, so the call would resolve there.
// The library's undefined symbols give it away.
#include <cuda_runtime.h>

#include "sparse_flash_attention_grad.h"

#define JOIN(a, b) a##b
extern "C" int JOIN(cubl, asCreate_v2)(void** handle);

extern "C" int kernel_run(const kernel_args* args) {
    void* handle = nullptr;
    return JOIN(cubl, asCreate_v2)(&handle) != 0 || args == nullptr;
}
