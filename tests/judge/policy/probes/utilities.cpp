// Probe: the utilities: std::function, smart pointers, optional, variant, any, tuple, type traits.
#include <any>
#include <bit>
#include <cstdlib>
#include <functional>
#include <limits>
#include <memory>
#include <new>
#include <optional>
#include <tuple>
#include <type_traits>
#include <typeinfo>
#include <utility>
#include <variant>
#include <vector>

namespace {

struct Shape {
    virtual ~Shape() = default;
    virtual int size() const { return 1; }
};

struct Block : Shape {
    int n;
    explicit Block(int n_) : n(n_) {}
    int size() const override { return n; }
};

template <typename T>
typename std::enable_if<std::is_floating_point<T>::value, int>::type digits() {
    return std::numeric_limits<T>::digits;
}

int functions(const int* a) {
    std::function<float(float, float)> add = [](float x, float y) { return x + y; };
    std::function<int(int)> scale = std::bind(std::multiplies<int>(), std::placeholders::_1, a[0]);
    std::vector<std::function<int()>> work;
    for (int i = 0; i < 4; ++i) work.emplace_back([i, a] { return a[i] * i; });
    int r = int(add(1.0f, float(a[1]))) + scale(3) + std::invoke([](int x) { return x + 1; }, a[2]);
    for (auto& w : work) r += w();
    std::function<int(int)> empty;
    if (a[3] == 12345) r += empty(1);  // throws std::bad_function_call when reached
    std::hash<float> hf;
    std::hash<int> hi;
    auto ref = std::ref(r);
    ref.get() += 1;
    return r + int(hf(1.5f) & 1) + int(hi(a[4]) & 1) + std::plus<int>()(1, 2);
}

int pointers(const int* a) {
    auto up = std::make_unique<float[]>(size_t(a[0] & 63) + 1);
    auto sized = std::make_unique<float[]>(size_t(a[6]));  // any size: std::bad_array_new_length past the limit
    sized[0] = 2.0f;
    std::unique_ptr<Shape> shape = std::make_unique<Block>(a[1]);
    std::unique_ptr<float, void (*)(void*)> raw(static_cast<float*>(std::malloc(64)), std::free);
    auto sp = std::make_shared<std::vector<float>>(size_t(a[2] & 15) + 1);
    std::shared_ptr<Shape> shared(new Block(a[3]));
    std::shared_ptr<Shape> copy = shared;
    std::weak_ptr<Shape> weak = shared;
    auto locked = weak.lock();
    auto block = std::dynamic_pointer_cast<Block>(copy);
    alignas(64) unsigned char storage[sizeof(Block)];
    Shape* placed = new (storage) Block(a[4]);
    int r = placed->size();
    placed->~Shape();
    void* p = storage;
    size_t space = sizeof storage;
    std::align(16, 8, p, space);
    float* big = new (std::nothrow) float[size_t(a[5] & 255) + 1];
    float* aligned = new (std::align_val_t(64)) float[16];
    r += big != nullptr;
    delete[] big;
    ::operator delete[](aligned, std::align_val_t(64));
    up[0] = 1.0f;
    return r + int(up[0]) + int(sized[0]) + shape->size() + int(sp->size()) + int(shared.use_count()) + (locked ? 1 : 0) +
           (block ? block->n : 0) + int(raw.get() != nullptr) + int(typeid(*shape) == typeid(Block)) +
           int(dynamic_cast<Block*>(shape.get()) != nullptr);
}

int vocabulary(const int* a) {
    std::optional<int> o;
    if (a[0] > 0) o = a[0];
    std::variant<int, float, std::pair<int, int>> v = a[1];
    if (a[2] > 0) v = 2.5f;
    std::any any = a[3];
    if (a[4] > 0) any = 1.5f;
    auto [x, y, z] = std::make_tuple(a[5], 2.0f, 'c');
    std::tuple<int, float> t;
    std::tie(std::get<0>(t), std::ignore) = std::make_pair(a[6], 0.0f);
    std::pair<int, int> p{1, 2};
    std::swap(p.first, p.second);
    int r = o.value_or(-1) + std::visit([](auto&& e) { return int(sizeof e); }, v) + x + int(y) + z;
    r += std::get<0>(t) + p.first + std::exchange(p.second, 5) + digits<float>() + digits<double>();
    if (a[7] == 999) r += o.value();                    // throws std::bad_optional_access when empty
    if (a[7] == 998) r += std::get<int>(v);             // throws std::bad_variant_access
    if (a[7] == 997) r += std::any_cast<int>(any);      // throws std::bad_any_cast
    return r + int(any.has_value()) + int(std::holds_alternative<float>(v)) +
           int(std::numeric_limits<float>::epsilon() > 0) + int(std::numeric_limits<int>::max() & 1) +
           int(std::is_same_v<decltype(x), int>);
}

}  // namespace

extern "C" int kernel_run(const int* a) {
    return functions(a) + pointers(a) + vocabulary(a);
}
