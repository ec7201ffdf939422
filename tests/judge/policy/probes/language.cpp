// Probe: what the language itself compiles to: virtual classes, dynamic_cast and typeid (and their
// failures), function-local statics, 128-bit integers, _Float16, complex arithmetic on builtin types,
// new[] of classes with destructors.
#include <cstddef>
#include <cstdint>
#include <typeinfo>

namespace {

struct Op {
    virtual ~Op() = default;
    virtual float apply(float x) const = 0;
};

struct Scale final : Op {
    float s;
    explicit Scale(float s_) : s(s_) {}
    float apply(float x) const override { return s * x; }
};

struct Shift : Op {
    float d = 1.0f;
    float apply(float x) const override { return x + d; }
};

struct Counted {
    int* seen;
    Counted() : seen(nullptr) {}
    ~Counted() {
        if (seen) ++*seen;
    }
};

const float* table() {
    static float values[256];  // zero-initialised: no guard
    static const float first = values[0] + 1.0f;  // a guarded local static
    values[1] = first;
    return values;
}

}  // namespace

extern "C" int kernel_run(const int64_t* a) {
    Op* ops[2] = {new Scale(float(a[0])), new Shift()};
    float r = 0.0f;
    for (Op* op : ops) {
        r += op->apply(2.0f);
        if (auto* s = dynamic_cast<Scale*>(op)) r += s->s;
        r += float(typeid(*op) == typeid(Shift));
    }
    const Op* maybe = a[11] ? ops[a[12] & 1] : nullptr;
    try {
        r += float(typeid(*maybe).name()[0]);  // std::bad_typeid when null
        r += dynamic_cast<const Scale&>(*maybe).s;  // std::bad_cast when not a Scale
    } catch (const std::bad_typeid&) {
        r += 1.0f;
    } catch (const std::bad_cast&) {
        r += 2.0f;
    }
    r += float(typeid(Scale).before(typeid(Shift))) + float(typeid(*ops[0]).hash_code() & 1);
    for (Op* op : ops) delete op;
    int seen = 0;
    Counted* many = new Counted[std::size_t(a[1] & 15) + 1];
    many[0].seen = &seen;
    delete[] many;
    unsigned __int128 wide = (unsigned __int128)uint64_t(a[2]) * uint64_t(a[3]);
    __int128 q = __int128(a[4]) * a[5] / (a[6] | 1) + __int128(a[4]) * a[5] % (a[6] | 1);
    wide = wide / uint64_t(a[13] | 1) + wide % uint64_t(a[14] | 1);
    _Float16 h = _Float16(float(a[7]) * 0.5f);
    float back = float(h);
    _Complex float z, w;
    __real__ z = float(a[8]);
    __imag__ z = float(a[9]);
    __real__ w = float(a[10]);
    __imag__ w = 2.0f;
    _Complex float zw = z * w / (w + 1.0f);
    return int(r) + seen + int(uint64_t(wide >> 64) & 1) + int(q & 1) + int(back) + int(table()[1]) +
           int(__real__ zw) + int(__imag__ zw);
}
