// Refused probe: a thread of the kernel's own (threads are OpenMP's).
#include <thread>

extern "C" int kernel_run(const int* a) {
    int r = 0;
    std::thread t([&] { r = a[0]; });
    t.join();
    return r + int(std::thread::hardware_concurrency());
}
