// Fixture (expected AC): a correct kernel written with the standard containers (docs/rules.md:
// standard headers are allowed). ok_serial's math, organised around containers that the computation really uses:
// per (b, n2), an unordered_map from each selected key block to the rows that select it (each row's
// valid ids read through a std::set), a std::map of the rows' Delta, a priority_queue ordering the
// blocks busiest first into a std::queue of work, std::array pairs {P, dS}, a std::deque of the keys
// written, a std::stack of the keys no row sees (written as zeros).

#include "sparse_flash_attention_grad.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <deque>
#include <map>
#include <queue>
#include <set>
#include <stack>
#include <unordered_map>
#include <utility>
#include <vector>

namespace {

float bits_to_float(uint32_t u) {
    float f;
    std::memcpy(&f, &u, 4);
    return f;
}

uint32_t float_to_bits(float f) {
    uint32_t u;
    std::memcpy(&u, &f, 4);
    return u;
}

float load(const void* p, int64_t i, int64_t dtype) {
    if (dtype == KERNEL_F32) return static_cast<const float*>(p)[i];
    const uint32_t h = static_cast<const uint16_t*>(p)[i];
    if (dtype == KERNEL_BF16) return bits_to_float(h << 16);
    const uint32_t sign = (h & 0x8000u) << 16, e = (h >> 10) & 31u, m = h & 1023u;
    if (e == 0) return (sign ? -1.0f : 1.0f) * std::ldexp(float(m), -24);
    if (e == 31) return bits_to_float(sign | 0x7f800000u | (m << 13));
    return bits_to_float(sign | ((e + 112u) << 23) | (m << 13));
}

uint16_t to_half(float f) {
    const uint32_t u = float_to_bits(f), mag = u & 0x7fffffffu;
    const uint16_t sign = uint16_t((u >> 16) & 0x8000u);
    if (mag > 0x7f800000u) return uint16_t(sign | 0x7e00u);
    if (mag >= 0x477ff000u) return uint16_t(sign | 0x7c00u);
    if (mag >= 0x38800000u) return uint16_t(sign | ((mag + 0xfffu + ((mag >> 13) & 1u) - (112u << 23)) >> 13));
    // float16 subnormal: the float addition rounds to a multiple of 2^-24, ties to even
    const float r = std::fabs(f) + 0.5f;  // 0.5 = 2^-1: its ulp is 2^-24
    return uint16_t(sign | (float_to_bits(r) - float_to_bits(0.5f)));
}

void store(void* p, int64_t i, float x, int64_t dtype) {
    if (dtype == KERNEL_F32) {
        static_cast<float*>(p)[i] = x;
    } else if (dtype == KERNEL_BF16) {
        const uint32_t u = float_to_bits(x);
        const bool nan = (u & 0x7fffffffu) > 0x7f800000u;
        static_cast<uint16_t*>(p)[i] = nan ? uint16_t(0x7fc0u) : uint16_t((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
    } else {
        static_cast<uint16_t*>(p)[i] = to_half(x);
    }
}

// One (b, n2) group: its query rows s, their G heads, the key blocks they select.
struct Group {
    const kernel_args& a;
    int64_t b, n2, G;

    int64_t thr(int64_t s) const {
        if (a.sparse_mode != 3) return a.S2;
        return std::min(std::max(a.S2 - a.S1 + s + 1, int64_t(0)), a.S2);
    }
    int64_t qrow(int64_t s, int64_t h) const { return (b * a.S1 + s) * a.N1 + h; }
    int64_t krow(int64_t j) const { return (b * a.S2 + j) * a.N2 + n2; }
    int64_t stat(int64_t s, int64_t h) const { return ((b * a.N2 + n2) * a.S1 + s) * G + h % G; }

    // {P, dS} of query (s, h) and key j; dS without the scale.
    std::array<float, 2> pair(int64_t s, int64_t h, int64_t j, float delta) const {
        const int64_t qi = qrow(s, h), ki = krow(j), dt = a.dtype;
        std::array<float, 2> qk_dp{0.0f, 0.0f};
        for (int64_t e = 0; e < a.D; ++e) {
            qk_dp[0] += load(a.q, qi * a.D + e, dt) * load(a.k, ki * a.D + e, dt);
            qk_dp[1] += load(a.d_out, qi * a.D + e, dt) * load(a.v, ki * a.D + e, dt);
        }
        for (int64_t e = 0; e < a.Dr; ++e) qk_dp[0] += load(a.q_rope, qi * a.Dr + e, dt) * load(a.k_rope, ki * a.Dr + e, dt);
        const float p = std::exp(float(a.scale) * qk_dp[0] - a.softmax_max[stat(s, h)]) / a.softmax_sum[stat(s, h)];
        return {p, p * (qk_dp[1] - delta)};
    }
};

void run_group(const Group& g) {
    const kernel_args& a = g.a;
    const int64_t D = a.D, Dr = a.Dr, W = 2 * D + Dr, bs = a.block_size, dt = a.dtype;
    const float scale = float(a.scale);

    // The rows that select each block: an unordered_map of the visible key blocks. A row's valid ids
    // are the prefix before the first -1 (at most K); a std::set reads them (they are distinct).
    std::unordered_map<int32_t, std::vector<int32_t>> rows_of_block;
    for (int64_t s = 0; s < a.S1; ++s) {
        const int32_t* ids = a.sparse_indices + ((g.b * a.S1 + s) * a.N2 + g.n2) * a.K;
        std::set<int32_t> valid;
        for (int64_t i = 0; i < a.K && ids[i] >= 0; ++i) valid.insert(ids[i]);
        for (int32_t id : valid) rows_of_block[id].push_back(int32_t(s));
    }

    // Delta of every (s, h) of the group, keyed by (s, h) in a std::map.
    std::map<std::pair<int64_t, int64_t>, float> delta;
    for (int64_t s = 0; s < a.S1; ++s) {
        for (int64_t h = g.n2 * g.G; h < (g.n2 + 1) * g.G; ++h) {
            float d = 0.0f;
            const int64_t qi = g.qrow(s, h);
            for (int64_t e = 0; e < D; ++e) d += load(a.d_out, qi * D + e, dt) * load(a.out, qi * D + e, dt);
            delta[{s, h}] = d;
        }
    }

    // The busiest blocks first: a priority_queue by the number of rows, drained into a work queue.
    std::priority_queue<std::pair<size_t, int32_t>> by_rows;
    for (const auto& [id, rows] : rows_of_block) by_rows.emplace(rows.size(), id);
    std::queue<int32_t> work;
    while (!by_rows.empty()) {
        work.push(by_rows.top().second);
        by_rows.pop();
    }

    std::vector<float> dq(size_t(a.S1 * g.G * (D + Dr)), 0.0f);  // [s][h - n2*G][D + Dr]
    std::deque<bool> written(size_t(a.S2), false);                 // keys whose dk, dv are out
    std::vector<float> acc(size_t(bs * W));                         // one block's keys: dk | dv | dk_rope
    while (!work.empty()) {
        const int32_t id = work.front();
        work.pop();
        std::fill(acc.begin(), acc.end(), 0.0f);
        const int64_t first = int64_t(id) * bs, end = std::min(first + bs, a.S2);
        for (int32_t s : rows_of_block[id]) {
            for (int64_t h = g.n2 * g.G; h < (g.n2 + 1) * g.G; ++h) {
                const int64_t qi = g.qrow(s, h);
                float* dqr = dq.data() + (s * g.G + h - g.n2 * g.G) * (D + Dr);
                for (int64_t j = first; j < std::min(end, g.thr(s)); ++j) {
                    const std::array<float, 2> pds = g.pair(s, h, j, delta.at({s, h}));
                    const int64_t ki = g.krow(j);
                    float* row = acc.data() + (j - first) * W;
                    for (int64_t e = 0; e < D; ++e) {
                        dqr[e] += pds[1] * load(a.k, ki * D + e, dt);
                        row[e] += pds[1] * load(a.q, qi * D + e, dt);
                        row[D + e] += pds[0] * load(a.d_out, qi * D + e, dt);
                    }
                    for (int64_t e = 0; e < Dr; ++e) {
                        dqr[D + e] += pds[1] * load(a.k_rope, ki * Dr + e, dt);
                        row[2 * D + e] += pds[1] * load(a.q_rope, qi * Dr + e, dt);
                    }
                }
            }
        }
        for (int64_t j = first; j < end; ++j) {
            const float* row = acc.data() + (j - first) * W;
            const int64_t ki = g.krow(j);
            for (int64_t e = 0; e < D; ++e) {
                store(a.dk, ki * D + e, scale * row[e], dt);
                store(a.dv, ki * D + e, row[D + e], dt);
            }
            for (int64_t e = 0; e < Dr; ++e) store(a.dk_rope, ki * Dr + e, scale * row[2 * D + e], dt);
            written[size_t(j)] = true;
        }
    }

    // Keys no row sees: a stack of them, each written as zeros.
    std::stack<int64_t> unseen;
    for (int64_t j = 0; j < a.S2; ++j)
        if (!written[size_t(j)]) unseen.push(j);
    for (; !unseen.empty(); unseen.pop()) {
        const int64_t ki = g.krow(unseen.top());
        for (int64_t e = 0; e < D; ++e) {
            store(a.dk, ki * D + e, 0.0f, dt);
            store(a.dv, ki * D + e, 0.0f, dt);
        }
        for (int64_t e = 0; e < Dr; ++e) store(a.dk_rope, ki * Dr + e, 0.0f, dt);
    }

    for (int64_t s = 0; s < a.S1; ++s) {
        for (int64_t h = g.n2 * g.G; h < (g.n2 + 1) * g.G; ++h) {
            const float* dqr = dq.data() + (s * g.G + h - g.n2 * g.G) * (D + Dr);
            const int64_t qi = g.qrow(s, h);
            for (int64_t e = 0; e < D; ++e) store(a.dq, qi * D + e, scale * dqr[e], dt);
            for (int64_t e = 0; e < Dr; ++e) store(a.dq_rope, qi * Dr + e, scale * dqr[D + e], dt);
        }
    }
}

}  // namespace

extern "C" int kernel_run(const kernel_args* a) {
    for (int64_t b = 0; b < a->B; ++b)
        for (int64_t n2 = 0; n2 < a->N2; ++n2) run_group(Group{*a, b, n2, a->N1 / a->N2});
    return 0;
}
