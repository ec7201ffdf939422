// Probe: OpenMP (parallel loops, reductions, tasks, critical, atomics, locks), <atomic>, thread_local.
#include <omp.h>

#include <atomic>
#include <cmath>
#include <cstdint>
#include <vector>

namespace {

thread_local float per_thread_sum = 0.0f;            // trivially destructible: plain TLS
thread_local std::vector<float> per_thread_scratch;  // with a destructor: registered at first use

float fib_tasks(int n) {
    if (n < 2) return float(n);
    float x = 0.0f, y = 0.0f;
#pragma omp task shared(x) if (n > 8)
    x = fib_tasks(n - 1);
#pragma omp task shared(y) if (n > 8)
    y = fib_tasks(n - 2);
#pragma omp taskwait
    return x + y;
}

}  // namespace

extern "C" int kernel_run(const float* a) {
    const int64_t n = 4096;
    std::vector<float> out(n);
    double total = 0.0;
    float biggest = -1e30f;
    std::atomic<int64_t> visited{0};
    std::atomic<float> last{0.0f};
    std::atomic_flag flag = ATOMIC_FLAG_INIT;
    omp_lock_t lock;
    omp_init_lock(&lock);
    int64_t crit = 0;
#pragma omp parallel
    {
        per_thread_scratch.assign(64, a[0]);
        per_thread_sum = 0.0f;
#pragma omp for schedule(dynamic, 64) reduction(+ : total) reduction(max : biggest)
        for (int64_t i = 0; i < n; ++i) {
            out[i] = std::exp(a[i & 63]) * per_thread_scratch[i & 63];
            total += out[i];
            biggest = std::fmax(biggest, out[i]);
            per_thread_sum += out[i];
            visited.fetch_add(1, std::memory_order_relaxed);
        }
#pragma omp critical
        crit += int64_t(per_thread_sum);
#pragma omp atomic
        crit += 1;
        omp_set_lock(&lock);
        last.store(per_thread_sum);
        omp_unset_lock(&lock);
        if (!flag.test_and_set()) last.store(a[1]);
#pragma omp barrier
#pragma omp single
        {
#pragma omp taskgroup
            {
                for (int t = 0; t < 4; ++t) {
#pragma omp task firstprivate(t)
                    out[t] += fib_tasks(12 + t);
                }
            }
        }
#pragma omp for collapse(2) nowait
        for (int i = 0; i < 16; ++i)
            for (int j = 0; j < 16; ++j) out[i * 16 + j] *= 0.5f;
#pragma omp master
        crit += omp_get_num_threads();
    }
#pragma omp parallel for simd reduction(+ : total) num_threads(2)
    for (int64_t i = 0; i < n; ++i) total += out[i] * 0.25f;
    omp_destroy_lock(&lock);
    std::atomic_thread_fence(std::memory_order_seq_cst);
    return int(total) + int(biggest) + int(visited.load()) + int(last.load()) + int(crit) + omp_get_max_threads() +
           omp_get_thread_num() + omp_in_parallel() + omp_get_num_procs();
}
