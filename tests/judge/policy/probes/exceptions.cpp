// Probe: throwing and catching the standard exceptions and one of the kernel's own; exception_ptr.
#include <exception>
#include <stdexcept>
#include <string>
#include <typeinfo>
#include <vector>

namespace {

struct BadArgs : std::exception {
    int code;
    explicit BadArgs(int c) : code(c) {}
    const char* what() const noexcept override { return "bad kernel_args"; }
};

struct Plain {
    int value;
};

class RowError : public std::runtime_error {
public:
    explicit RowError(const std::string& what) : std::runtime_error(what) {}
};

void check(const int* a) {
    if (a[0] < 0) throw std::invalid_argument("a[0] is negative");
    if (a[1] < 0) throw std::invalid_argument(std::string("a[1] = ") + std::to_string(a[1]));
    if (a[2] < 0) throw std::out_of_range("a[2]");
    if (a[3] < 0) throw std::length_error("a[3]");
    if (a[4] < 0) throw std::domain_error("a[4]");
    if (a[5] < 0) throw std::logic_error("a[5]");
    if (a[6] < 0) throw std::runtime_error("a[6]");
    if (a[7] < 0) throw std::range_error("a[7]");
    if (a[8] < 0) throw std::overflow_error("a[8]");
    if (a[9] < 0) throw std::underflow_error("a[9]");
    if (a[10] < 0) throw BadArgs(a[10]);
    if (a[11] < 0) throw Plain{a[11]};
    if (a[12] < 0) throw RowError("row");
    if (a[13] < 0) throw std::bad_alloc();
    if (a[14] < 0) throw 7;
}

int nested(const int* a) {
    try {
        try {
            check(a);
        } catch (const std::logic_error&) {
            std::throw_with_nested(std::runtime_error("while checking"));
        }
    } catch (const std::runtime_error& e) {
        try {
            std::rethrow_if_nested(e);
        } catch (const std::exception& inner) {
            return int(inner.what()[0]);
        }
        return 1;
    }
    return 0;
}

}  // namespace

extern "C" int kernel_run(const int* a) {
    int r = 0;
    try {
        check(a);
    } catch (const std::invalid_argument& e) {
        r += int(e.what()[0]);
    } catch (const BadArgs& e) {
        r += e.code;
    } catch (const Plain& p) {
        r += p.value;
    } catch (const std::exception& e) {
        r += int(e.what()[1]) + int(typeid(e).name()[0]);
    } catch (...) {
        r += 3;
    }
    std::exception_ptr saved;
    try {
        std::vector<int> v(4);
        r += v.at(size_t(a[15]));  // throws std::out_of_range past the end
    } catch (...) {
        saved = std::current_exception();
    }
    if (saved) {
        try {
            std::rethrow_exception(saved);
        } catch (const std::out_of_range& e) {
            r += int(e.what()[0]);
        }
    }
    std::exception_ptr made = std::make_exception_ptr(BadArgs(2));
    try {
        std::rethrow_exception(made);
    } catch (const BadArgs& e) {
        r += e.code;
    }
    return r + nested(a) + std::uncaught_exceptions();
}
