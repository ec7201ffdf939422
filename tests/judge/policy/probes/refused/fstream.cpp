// Refused probe: files through <fstream>.
#include <fstream>

extern "C" int kernel_run(const int* a) {
    std::ofstream out("/tmp/opjudge-probe");
    out << a[0];
    std::ifstream in("/etc/hostname");
    return in.good() ? 1 : 0;
}
