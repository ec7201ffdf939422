// Probe: std::string and std::string_view (as a kernel uses them: names, keys, messages), <cstring>.
#include <cstring>
#include <string>
#include <string_view>
#include <unordered_map>

#include <string.h>

namespace {

int strings(const int* a) {
    std::string s = "dtype=";
    s += std::to_string(a[0]);
    s += std::to_string(1.5f * float(a[1]));
    s.append(3, 'x');
    s.insert(0, "k:");
    s.replace(0, 2, "key");
    s.push_back('!');
    std::string t = s.substr(2, 4) + s;
    std::string copy(t.begin(), t.end());
    copy.resize(10);
    copy.reserve(100);
    std::string_view view(s);
    view.remove_prefix(1);
    std::unordered_map<std::string, int> by_name{{"float32", 0}, {"float16", 1}, {"bfloat16", 2}};
    by_name[s] = a[2];
    std::hash<std::string_view> h;
    int n = std::stoi("42") + int(std::stof("1.5")) + int(std::stol("7")) + int(std::stod("2.5"));
    return int(s.find("=")) + int(t.rfind('x')) + int(view.find("e")) + (s == t) + (s < t) + s.compare(t) +
           by_name.at("float16") + int(h(view) & 1) + n + int(copy.size()) + int(view.substr(1, 2).size()) +
           int(s.find_first_of("xyz")) + int(s.c_str()[0]);
}

}  // namespace

extern "C" int kernel_run(const int* a) {
    char buf[64];
    std::memset(buf, 0, sizeof buf);
    std::strncpy(buf, "abc", sizeof buf - 1);
    std::memmove(buf + 1, buf, 3);
    memcpy(buf + 8, buf, 4);
    return strings(a) + int(std::strlen(buf)) + std::strcmp(buf, "aabc") + std::memcmp(buf, buf + 8, 4) +
           int(std::strchr(buf, 'c') != nullptr) + int(strstr(buf, "bc") != nullptr);
}
