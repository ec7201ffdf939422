// Probe: the standard containers, instantiated with int, float and pairs, and their common API.
#include <array>
#include <bitset>
#include <deque>
#include <forward_list>
#include <initializer_list>
#include <iterator>
#include <list>
#include <map>
#include <queue>
#include <set>
#include <stack>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <valarray>
#include <vector>

namespace {

int vectors(const int* a) {
    std::vector<int> v(a, a + 8);
    std::vector<float> f(static_cast<size_t>(a[0] & 15), 1.5f);
    v.push_back(a[1]);
    v.emplace_back(a[2]);
    v.insert(v.begin() + 1, a[3]);
    v.erase(v.begin());
    v.reserve(64);
    v.resize(32);
    f.shrink_to_fit();
    std::vector<std::vector<float>> nested(3, std::vector<float>(4));
    std::vector<bool> bits(100);
    bits[a[4] & 63] = true;
    return v.at(a[5] & 7) + int(f.size()) + int(nested[1].size()) + bits[3] + int(v.back());
}

int arrays_and_deques(const int* a) {
    std::array<float, 8> arr{};
    arr.fill(float(a[0]));
    std::deque<int> d(a, a + 4);
    d.push_front(a[1]);
    d.pop_back();
    std::list<int> l(a, a + 6);
    l.sort();
    l.unique();
    l.reverse();
    l.splice(l.begin(), std::list<int>{1, 2});
    l.remove(a[2]);
    std::forward_list<int> fl(a, a + 5);
    fl.sort();
    fl.push_front(a[3]);
    fl.reverse();
    return int(arr.at(2)) + d.front() + int(d.size()) + (l.empty() ? 0 : l.front()) + fl.front() +
           int(std::distance(l.begin(), l.end()));
}

int trees_and_hashes(const int* a) {
    std::map<int, float> m;
    std::multimap<int, int> mm;
    std::set<int> s(a, a + 8);
    std::multiset<float> ms;
    std::unordered_map<int, std::vector<int>> um;
    std::unordered_map<long long, float> uf;
    std::unordered_set<int> us(a, a + 8);
    std::unordered_multimap<int, int> umm;
    for (int i = 0; i < 16; ++i) {
        m[a[i & 7]] += 1.0f;
        mm.emplace(a[i & 7], i);
        ms.insert(float(i));
        um[a[i & 7]].push_back(i);
        uf.emplace(i, 0.5f);
        umm.insert({i, i});
    }
    m.erase(a[0]);
    um.reserve(100);
    um.rehash(200);
    us.erase(a[1]);
    auto it = s.lower_bound(a[2]);
    auto found = um.find(a[3]);
    return int(m.size()) + int(mm.count(a[1])) + (it == s.end() ? 0 : *it) + int(ms.size()) +
           (found == um.end() ? 0 : int(found->second.size())) + int(uf.count(3)) + int(us.size()) +
           int(umm.bucket_count()) + int(std::prev(s.end()) == s.begin());
}

int adaptors(const int* a) {
    std::priority_queue<std::pair<float, int>> pq;
    std::priority_queue<int, std::vector<int>, std::greater<int>> minq;
    std::queue<int> q;
    std::stack<int> st;
    for (int i = 0; i < 8; ++i) {
        pq.emplace(float(a[i]), i);
        minq.push(a[i]);
        q.push(i);
        st.push(a[i]);
    }
    int r = pq.top().second + minq.top();
    pq.pop();
    q.pop();
    st.pop();
    return r + q.front() + st.top() + int(pq.size());
}

int bits_and_valarrays(const int* a) {
    std::bitset<128> b;
    b.set(a[0] & 127);
    b.flip(3);
    std::valarray<float> v(2.0f, size_t(a[1] & 31) + 1), w(1.0f, v.size());
    v += w * 3.0f;
    std::valarray<float> e = std::exp(v);
    return int(b.count()) + int(b.test(3)) + int(v.sum()) + int(v.max()) + int(e.min() > 0) +
           int(std::begin(w) != std::end(w));
}

}  // namespace

extern "C" int kernel_run(const int* a) {
    return vectors(a) + arrays_and_deques(a) + trees_and_hashes(a) + adaptors(a) + bits_and_valarrays(a);
}
