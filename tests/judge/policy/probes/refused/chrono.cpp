// Refused probe: reading a clock (the judge does the timing).
#include <chrono>

extern "C" int kernel_run(const int* a) {
    const auto t0 = std::chrono::steady_clock::now();
    const auto t1 = std::chrono::system_clock::now();
    return a[0] + int(t0.time_since_epoch().count() & 1) + int(t1.time_since_epoch().count() & 1);
}
