// Refused probe: the C clocks.
#include <ctime>

extern "C" int kernel_run(const int* a) {
    return a[0] + int(std::time(nullptr) & 1) + int(std::clock() & 1);
}
