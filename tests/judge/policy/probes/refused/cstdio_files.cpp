// Refused probe: <cstdio> is allowed for printf, not for its files.
#include <cstdio>

extern "C" int kernel_run(const int* a) {
    std::FILE* f = std::fopen("/etc/hostname", "r");
    if (f == nullptr) return 1;
    const int c = std::fgetc(f);
    std::fclose(f);
    return c + a[0];
}
