// Probe: <algorithm>, <numeric>, <random> (generators with a fixed seed, distributions), <complex>, <cmath>.
#include <algorithm>
#include <cmath>
#include <complex>
#include <functional>
#include <iterator>
#include <numeric>
#include <random>
#include <vector>

#include <math.h>

namespace {

int algorithms(const int* a) {
    std::vector<int> v(a, a + 16);
    std::vector<float> f(16), g(16);
    std::iota(f.begin(), f.end(), 0.5f);
    std::transform(v.begin(), v.end(), g.begin(), [](int x) { return float(x) * 0.5f; });
    std::sort(v.begin(), v.end());
    std::stable_sort(f.begin(), f.end(), std::greater<float>());
    std::partial_sort(g.begin(), g.begin() + 4, g.end());
    std::nth_element(v.begin(), v.begin() + 5, v.end());
    std::reverse(v.begin(), v.end());
    std::rotate(v.begin(), v.begin() + 2, v.end());
    std::inplace_merge(f.begin(), f.begin() + 8, f.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
    auto mm = std::minmax_element(g.begin(), g.end());
    auto lb = std::lower_bound(f.begin(), f.end(), 3.0f);
    std::vector<int> idx(16);
    std::iota(idx.begin(), idx.end(), 0);
    std::stable_partition(idx.begin(), idx.end(), [&](int i) { return a[i] > 0; });
    std::vector<float> ps(16);
    std::partial_sum(f.begin(), f.end(), ps.begin());
    std::exclusive_scan(f.begin(), f.end(), ps.begin(), 0.0f);
    std::mt19937 gen(1234);
    std::mt19937_64 gen64(5678);
    std::minstd_rand lcg(9);
    std::shuffle(idx.begin(), idx.end(), gen);
    std::uniform_int_distribution<int> ui(0, 9);
    std::uniform_real_distribution<float> ur(0.0f, 1.0f);
    std::normal_distribution<float> nd(0.0f, 1.0f);
    std::bernoulli_distribution bd(0.25);
    float acc = std::accumulate(f.begin(), f.end(), 0.0f) + std::inner_product(f.begin(), f.end(), g.begin(), 0.0f);
    acc += std::reduce(g.begin(), g.end()) + std::transform_reduce(f.begin(), f.end(), g.begin(), 0.0f);
    acc += ur(gen) + nd(gen64) + float(ui(lcg)) + float(bd(gen)) + float(std::gcd(a[0], 12) + std::lcm(a[1] | 1, 6));
    acc += std::clamp(f[3], 0.0f, 1.0f) + *std::max_element(ps.begin(), ps.end());
    return int(acc) + int(mm.first - g.begin()) + int(lb - f.begin()) + int(std::count(v.begin(), v.end(), a[2])) +
           int(std::any_of(v.begin(), v.end(), [](int x) { return x < 0; })) + idx[0] +
           int(std::find(v.begin(), v.end(), a[3]) != v.end()) + int(std::binary_search(f.begin(), f.end(), 1.5f)) +
           int(std::equal(v.begin(), v.begin() + 2, v.begin()));
}

float math(const float* x, const double* y) {
    float r = std::exp(x[0]) + std::log(x[1]) + std::sqrt(x[2]) + std::pow(x[3], 2.5f) + std::tanh(x[4]) +
              std::fma(x[5], x[6], x[7]) + std::fabs(x[8]) + std::floor(x[9]) + std::ceil(x[10]) +
              std::round(x[11]) + std::exp2(x[12]) + std::log2(x[13]) + std::log1p(x[14]) + std::expm1(x[15]) +
              std::erf(x[0]) + std::cbrt(x[1]) + std::hypot(x[2], x[3]) + std::atan2(x[4], x[5]) +
              std::sin(x[6]) + std::cos(x[7]) + std::nearbyint(x[8]) + std::ldexp(x[9], 3) + std::fmod(x[10], 3.0f) +
              std::copysign(x[11], -1.0f) + std::fmax(x[12], x[13]) + std::trunc(x[14]) + std::rint(x[15]);
    int e;
    r += std::frexp(x[1], &e) + float(e) + float(std::isnan(x[2])) + float(std::isinf(x[3])) +
         float(std::isfinite(x[4])) + float(std::signbit(x[5])) + float(std::lround(x[6]));
    double d = std::exp(y[0]) + std::log(y[1]) + std::sqrt(y[2]) + std::pow(y[3], 1.5) + std::tanh(y[4]) +
               std::fma(y[5], y[6], y[7]) + std::log10(y[8]) + std::erfc(y[9]) + std::lgamma(y[10]) +
               std::tgamma(y[11]) + std::hypot(y[0], y[1], y[2]) + expf(x[0]) + sqrtf(x[1]) + logf(x[2]);
    float v[64];
    for (int i = 0; i < 64; ++i) v[i] = std::exp(x[i & 15]) * std::log(x[(i + 1) & 15]);  // -O3: vector math
    for (int i = 1; i < 64; ++i) v[0] += v[i];
    return r + float(d) + v[0];
}

float complexes(const float* x) {
    std::complex<float> z(x[0], x[1]), w(x[2], x[3]);
    std::complex<double> zd(x[4], x[5]);
    std::complex<float> r = z * w + z / w + std::exp(z) + std::sqrt(w) + std::polar(x[6], x[7]) + std::conj(z);
    std::complex<double> rd = zd * zd / (zd + 1.0) + std::log(zd) + std::pow(zd, 2.0);
    return std::abs(r) + std::arg(r) + std::norm(z) + float(std::abs(rd)) + r.real() + r.imag();
}

}  // namespace

extern "C" int kernel_run(const void* args) {
    const int* a = static_cast<const int*>(args);
    const float* x = static_cast<const float*>(args);
    const double* y = static_cast<const double*>(args);
    return algorithms(a) + int(math(x, y)) + int(complexes(x));
}
