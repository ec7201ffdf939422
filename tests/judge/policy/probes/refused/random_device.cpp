// Refused probe: std::random_device reads the system's entropy (a device file or a system call).
#include <random>

extern "C" int kernel_run(const int* a) {
    std::random_device rd;
    std::mt19937 gen(rd());
    return a[0] + int(gen() & 1);
}
