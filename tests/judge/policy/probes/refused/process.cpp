// Refused probe: starting a process and reading the environment from <cstdlib>.
#include <cstdlib>

extern "C" int kernel_run(const int* a) {
    const char* home = std::getenv("HOME");
    return a[0] + std::system("true") + (home != nullptr);
}
