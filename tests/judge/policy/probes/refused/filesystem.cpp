// Refused probe: <filesystem>.
#include <filesystem>

extern "C" int kernel_run(const int* a) {
    return a[0] + int(std::filesystem::exists("/etc/hostname"));
}
