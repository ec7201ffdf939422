// Refused probe: std::mutex (locks are OpenMP's: #pragma omp critical, omp_lock_t).
#include <mutex>

extern "C" int kernel_run(const int* a) {
    static std::mutex m;
    std::lock_guard<std::mutex> hold(m);
    static std::once_flag once;
    int r = a[0];
    std::call_once(once, [&] { r += 1; });
    return r;
}
