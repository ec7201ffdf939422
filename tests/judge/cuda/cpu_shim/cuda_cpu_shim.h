// A tiny CUDA-on-CPU shim for testing the CUDA track's kernels on a machine without a GPU.
//
// Not a CUDA emulator: it runs the subset of CUDA C++ that the judge's own kernels use
// (reference_kernels/*/cuda/ and tests/submissions/*/cuda/) so that their arithmetic, indexing
// and masking can be checked against the problem's oracle here. One launch runs its blocks one
// after another; the threads of a block are real std::threads, so __syncthreads, shared memory,
// warp shuffles and atomics behave as on a GPU (up to the order of float atomics).
// tests/judge/cuda/shim.py rewrites `k<<<...>>>(...)` and `extern __shared__` before compiling.
#pragma once

#include <math.h>
#include <stdint.h>
#include <string.h>

#include <atomic>
#include <barrier>
#include <cstddef>
#include <memory>
#include <thread>
#include <vector>

// ---- qualifiers ----------------------------------------------------------------------------
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __noinline__
#define __launch_bounds__(...)
#define __restrict__ __restrict
#define __shared__ static  // one block runs at a time: a static local is that block's shared memory

// ---- runtime types -------------------------------------------------------------------------
struct dim3 {
    unsigned x, y, z;
    dim3(unsigned x_ = 1, unsigned y_ = 1, unsigned z_ = 1) : x(x_), y(y_), z(z_) {}
};
struct uint3 {
    unsigned x, y, z;
};
struct alignas(16) float4 {
    float x, y, z, w;
};
inline float4 make_float4(float x, float y, float z, float w) { return float4{x, y, z, w}; }
struct alignas(8) float2 {
    float x, y;
};

typedef struct CUstream_st* cudaStream_t;
enum cudaError_t { cudaSuccess = 0, cudaErrorInvalidValue = 1, cudaErrorLaunchFailure = 719 };
enum cudaFuncAttribute { cudaFuncAttributeMaxDynamicSharedMemorySize = 8 };
enum cudaDeviceAttr { cudaDevAttrMultiProcessorCount = 16, cudaDevAttrMaxSharedMemoryPerBlockOptin = 97 };

inline thread_local uint3 threadIdx;
inline thread_local uint3 blockIdx;
inline thread_local dim3 blockDim;
inline thread_local dim3 gridDim;

namespace shim {

struct Block {
    std::unique_ptr<std::barrier<>> all;                 // __syncthreads
    std::vector<std::unique_ptr<std::barrier<>>> warps;  // the shuffles' lockstep
    std::vector<uint64_t> exchange;                      // one slot per thread for shuffles
    std::vector<float4> dynamic;                         // extern __shared__ (16-byte aligned)
    size_t dynamic_bytes = 0;
};

inline Block*& current() {
    static Block* block = nullptr;
    return block;
}

inline cudaError_t& last_error() {
    static cudaError_t error = cudaSuccess;
    return error;
}

template <class T>
T* dynamic_smem() {
    return reinterpret_cast<T*>(current()->dynamic.data());
}

struct Config {
    dim3 grid;
    dim3 block;
    size_t smem = 0;
    cudaStream_t stream = nullptr;
};

inline unsigned linear_thread() { return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z); }

// Runs every block of the grid in order; each thread of the block walks all blocks in lockstep.
template <class... Params, class... Args>
void launch(void (*kernel)(Params...), Config config, Args&&... args) {
    const unsigned threads = config.block.x * config.block.y * config.block.z;
    const unsigned long long blocks = 1ull * config.grid.x * config.grid.y * config.grid.z;
    if (threads == 0 || threads > 1024 || threads % 32 != 0 || blocks == 0) {
        last_error() = cudaErrorInvalidValue;  // the shim wants whole warps
        return;
    }
    Block block;
    block.all = std::make_unique<std::barrier<>>(threads);
    for (unsigned w = 0; w < threads / 32; ++w) block.warps.push_back(std::make_unique<std::barrier<>>(32));
    block.exchange.assign(threads, 0);
    block.dynamic.assign(config.smem / sizeof(float4) + 1, float4{0, 0, 0, 0});
    block.dynamic_bytes = config.smem;
    current() = &block;
    std::tuple<std::decay_t<Params>...> params(std::forward<Args>(args)...);  // by value, as CUDA copies them
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < threads; ++t) {
        pool.emplace_back([&, t] {
            blockDim = config.block;
            gridDim = config.grid;
            threadIdx = uint3{t % config.block.x, t / config.block.x % config.block.y,
                              t / (config.block.x * config.block.y)};
            for (unsigned long long b = 0; b < blocks; ++b) {
                blockIdx = uint3{unsigned(b % config.grid.x), unsigned(b / config.grid.x % config.grid.y),
                                 unsigned(b / (1ull * config.grid.x * config.grid.y))};
                std::apply(kernel, params);
                block.all->arrive_and_wait();  // the next block starts when this one is done
            }
        });
    }
    for (auto& thread : pool) thread.join();
    current() = nullptr;
}

}  // namespace shim

inline void __syncthreads() { shim::current()->all->arrive_and_wait(); }
inline void __syncwarp(unsigned = 0xffffffffu) {
    shim::current()->warps[shim::linear_thread() / 32]->arrive_and_wait();
}

template <class T>
T __shfl_xor_sync(unsigned, T value, int lane_mask, int = 32) {
    static_assert(sizeof(T) <= 8, "shim shuffles move at most 8 bytes");
    shim::Block* block = shim::current();
    const unsigned t = shim::linear_thread();
    uint64_t bits = 0;
    memcpy(&bits, &value, sizeof(T));
    block->exchange[t] = bits;
    block->warps[t / 32]->arrive_and_wait();
    const uint64_t other = block->exchange[(t & ~31u) | ((t & 31u) ^ unsigned(lane_mask))];
    block->warps[t / 32]->arrive_and_wait();
    T result;
    memcpy(&result, &other, sizeof(T));
    return result;
}

template <class T>
T __shfl_sync(unsigned, T value, int src_lane, int = 32) {
    shim::Block* block = shim::current();
    const unsigned t = shim::linear_thread();
    uint64_t bits = 0;
    memcpy(&bits, &value, sizeof(T));
    block->exchange[t] = bits;
    block->warps[t / 32]->arrive_and_wait();
    const uint64_t other = block->exchange[(t & ~31u) | (unsigned(src_lane) & 31u)];
    block->warps[t / 32]->arrive_and_wait();
    T result;
    memcpy(&result, &other, sizeof(T));
    return result;
}

// ---- atomics ---------------------------------------------------------------------------------
inline float atomicAdd(float* address, float value) { return std::atomic_ref<float>(*address).fetch_add(value); }
inline int atomicAdd(int* address, int value) { return std::atomic_ref<int>(*address).fetch_add(value); }
inline int atomicMin(int* address, int value) {
    std::atomic_ref<int> ref(*address);
    int old = ref.load();
    while (value < old && !ref.compare_exchange_weak(old, value)) {
    }
    return old;
}
inline int atomicMax(int* address, int value) {
    std::atomic_ref<int> ref(*address);
    int old = ref.load();
    while (value > old && !ref.compare_exchange_weak(old, value)) {
    }
    return old;
}

template <class T>
T __ldg(const T* p) {
    return *p;
}

// ---- runtime API (synchronous: every "stream" is the host) ----------------------------------
inline cudaError_t cudaGetLastError() {
    const cudaError_t error = shim::last_error();
    shim::last_error() = cudaSuccess;
    return error;
}
inline cudaError_t cudaPeekAtLastError() { return shim::last_error(); }
inline const char* cudaGetErrorString(cudaError_t) { return "shim error"; }
inline cudaError_t cudaGetDevice(int* device) {
    *device = 0;
    return cudaSuccess;
}
inline cudaError_t cudaDeviceGetAttribute(int* value, cudaDeviceAttr attribute, int) {
    *value = attribute == cudaDevAttrMaxSharedMemoryPerBlockOptin ? 227 * 1024 : 132;  // an H200's
    return cudaSuccess;
}
template <class F>
cudaError_t cudaFuncSetAttribute(F, cudaFuncAttribute, int value) {
    return value <= 227 * 1024 ? cudaSuccess : cudaErrorInvalidValue;
}
inline cudaError_t cudaMemsetAsync(void* p, int value, size_t bytes, cudaStream_t = nullptr) {
    memset(p, value, bytes);
    return cudaSuccess;
}
enum cudaMemcpyKind {
    cudaMemcpyHostToHost = 0,
    cudaMemcpyHostToDevice = 1,
    cudaMemcpyDeviceToHost = 2,
    cudaMemcpyDeviceToDevice = 3,
    cudaMemcpyDefault = 4
};
inline cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t bytes, cudaMemcpyKind, cudaStream_t = nullptr) {
    memcpy(dst, src, bytes);
    return cudaSuccess;
}

// ---- 16-bit floats: bit patterns with round-to-nearest-even conversions ----------------------
struct __half {
    uint16_t bits;
};
struct __nv_bfloat16 {
    uint16_t bits;
};

namespace shim {
inline uint32_t float_bits(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}
inline float bits_float(uint32_t u) {
    float f;
    memcpy(&f, &u, 4);
    return f;
}
}  // namespace shim

inline float __bfloat162float(__nv_bfloat16 h) { return shim::bits_float(uint32_t(h.bits) << 16); }
inline __nv_bfloat16 __float2bfloat16_rn(float f) {
    uint32_t u = shim::float_bits(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) return __nv_bfloat16{uint16_t((u >> 16) | 0x40u)};
    u += 0x7fffu + ((u >> 16) & 1u);
    return __nv_bfloat16{uint16_t(u >> 16)};
}
inline float __half2float(__half h) {
    const uint32_t sign = uint32_t(h.bits & 0x8000u) << 16, exp = (h.bits >> 10) & 0x1fu, mant = h.bits & 0x3ffu;
    if (exp == 0) return sign ? -ldexpf(float(mant), -24) : ldexpf(float(mant), -24);
    if (exp == 31) return shim::bits_float(sign | 0x7f800000u | (mant << 13));
    return shim::bits_float(sign | ((exp + 112u) << 23) | (mant << 13));
}
inline __half __float2half_rn(float f) {
    // Through double: nearbyint on the scaled value rounds to nearest even exactly once.
    const uint32_t u = shim::float_bits(f);
    const uint16_t sign = uint16_t((u >> 16) & 0x8000u);
    const float a = fabsf(f);
    if (a != a) return __half{uint16_t(sign | 0x7e00u)};
    if (a >= 65520.0f) return __half{uint16_t(sign | 0x7c00u)};
    int e;
    frexp(double(a), &e);                       // a = m * 2^e, m in [0.5, 1)
    const int unit = e - 11 < -24 ? -24 : e - 11;  // the ulp exponent of float16 at this magnitude
    const double q = nearbyint(ldexp(double(a), -unit));
    const double value = ldexp(q, unit);
    if (value == 0) return __half{sign};
    int ve;
    const double m = frexp(value, &ve);  // value = m * 2^ve
    if (ve - 1 < -14) return __half{uint16_t(sign | uint16_t(q))};  // subnormal: q ulps of 2^-24
    const uint16_t exp_bits = uint16_t(ve - 1 + 15);
    const uint16_t mant = uint16_t(ldexp(m * 2 - 1, 10));
    return __half{uint16_t(sign | (exp_bits << 10) | mant)};
}
