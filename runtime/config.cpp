// kiln/runtime/config.cpp — parsing of kiln's environment variables (the only getenv calls).
//
// parse_config is a pure function of a lookup callback so tests can feed it a fake
// environment; config() parses the real one once under a mutex and publishes the result
// through an atomic pointer. Snapshots replaced by reload_config_for_testing stay allocated
// so references handed out earlier never dangle.
#include "runtime/config.h"

#include "runtime/log.h"

#include <fmt/format.h>

#include <pwd.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

namespace kiln::rt {

namespace detail {
std::atomic<const Config*> g_config{nullptr};
}  // namespace detail

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& ch : out) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return out;
}

// Parses a whole string as a decimal integer (surrounding blanks allowed).
std::optional<int64_t> parse_int(std::string_view s) {
  s = trim(s);
  if (s.empty()) return std::nullopt;
  int64_t v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size()) return std::nullopt;
  return v;
}

std::string valid_channel_list() {
  std::string out;
  for (int i = 0; i < kNumLogChannels; ++i) {
    out += log_channel_name(static_cast<LogChannel>(i));
    out += ", ";
  }
  return out + "all";
}

uint32_t parse_log(std::string_view value, std::vector<std::string>& warnings) {
  uint32_t mask = 0;
  std::vector<std::string> unknown;
  while (!value.empty()) {
    size_t comma = value.find(',');
    std::string name = lower(trim(value.substr(0, comma)));
    value = comma == std::string_view::npos ? std::string_view{} : value.substr(comma + 1);
    if (name.empty()) continue;
    if (name == "all") {
      mask |= (uint32_t{1} << kNumLogChannels) - 1;
    } else if (auto c = parse_log_channel(name)) {
      mask |= log_channel_bit(*c);
    } else {
      unknown.push_back(name);
    }
  }
  if (!unknown.empty()) {
    std::string names;
    for (const auto& u : unknown) names += (names.empty() ? "'" : ", '") + u + "'";
    warnings.push_back(fmt::format("KILN_LOG: unknown channel{} {} ignored; valid channels: {}",
                                   unknown.size() == 1 ? "" : "s", names, valid_channel_list()));
  }
  return mask;
}

int parse_num_threads(const char* value, std::vector<std::string>& warnings) {
  int fallback = default_num_threads();
  if (value == nullptr || trim(value).empty()) return fallback;
  constexpr int64_t kMaxThreads = 1024;
  auto v = parse_int(value);
  if (!v || *v < 1 || *v > kMaxThreads) {
    warnings.push_back(fmt::format("KILN_NUM_THREADS='{}' is not an integer in [1, {}]; using {}", value,
                                   kMaxThreads, fallback));
    return fallback;
  }
  return static_cast<int>(*v);
}

std::optional<bool> parse_bool(std::string_view value) {
  std::string v = lower(trim(value));
  if (v == "1" || v == "true" || v == "yes" || v == "on") return true;
  if (v.empty() || v == "0" || v == "false" || v == "no" || v == "off") return false;
  return std::nullopt;
}

std::string home_directory(const EnvLookup& env) {
  const char* home = env("HOME");
  if (home != nullptr && home[0] == '/') return home;
  // No usable $HOME (daemons, some containers): ask the password database.
  struct passwd pw {};
  struct passwd* result = nullptr;
  char buf[4096];
  if (getpwuid_r(getuid(), &pw, buf, sizeof buf, &result) == 0 && result != nullptr && pw.pw_dir != nullptr &&
      pw.pw_dir[0] == '/')
    return pw.pw_dir;
  return {};
}

std::string default_cache_dir(const EnvLookup& env) {
  // XDG base directory spec: a relative $XDG_CACHE_HOME is invalid and ignored.
  const char* xdg = env("XDG_CACHE_HOME");
  if (xdg != nullptr && xdg[0] == '/') return std::string(xdg) + "/kiln";
  std::string home = home_directory(env);
  return home.empty() ? std::string{} : home + "/.cache/kiln";
}

}  // namespace

int default_num_threads() {
  unsigned hc = std::thread::hardware_concurrency();
  return hc == 0 ? 1 : static_cast<int>(std::min(hc, 1024u));
}

Config parse_config(const EnvLookup& env, std::vector<std::string>& warnings) {
  Config c;
  if (const char* v = env("KILN_LOG")) c.log_channels = parse_log(v, warnings);
  if (const char* v = env("KILN_DEBUG_DIR")) c.debug_dir = std::string(trim(v));
  c.num_threads = parse_num_threads(env("KILN_NUM_THREADS"), warnings);

  if (const char* v = env("KILN_CACHE_DIR"); v != nullptr && !trim(v).empty()) {
    c.cache_dir = std::string(trim(v));
  } else {
    c.cache_dir = default_cache_dir(env);
  }
  if (const char* v = env("KILN_DISABLE_CACHE")) {
    auto b = parse_bool(v);
    if (!b) warnings.push_back(fmt::format("KILN_DISABLE_CACHE='{}' is not one of 1/0/true/false/yes/no/on/off; "
                                           "the disk cache stays enabled", v));
    c.disable_cache = b.value_or(false);
  }
  if (const char* v = env("KILN_CACHE_SIZE"); v != nullptr && !trim(v).empty()) {
    std::string t = lower(trim(v));
    int64_t unit = 1;
    if (!t.empty() && (t.back() == 'k' || t.back() == 'm' || t.back() == 'g')) {
      unit = t.back() == 'k' ? int64_t{1} << 10 : t.back() == 'm' ? int64_t{1} << 20 : int64_t{1} << 30;
      t.pop_back();
    }
    auto n = parse_int(t);
    if (!n || *n < 0 || *n > (int64_t{1} << 62) / unit) {
      warnings.push_back(fmt::format("KILN_CACHE_SIZE='{}' is not a size such as 500M or 2G; using {} bytes", v,
                                     c.cache_size_bytes));
    } else {
      c.cache_size_bytes = *n * unit;
    }
  }
  if (const char* v = env("KILN_REMOTE_CACHE")) c.remote_cache = std::string(trim(v));
  if (const char* v = env("KILN_REMOTE_CACHE_KEY")) c.remote_cache_key = v;  // a secret: taken as it is
  if (const char* v = env("KILN_REMOTE_CACHE_KEY_FILE")) c.remote_cache_key_file = std::string(trim(v));
  if (c.cache_dir.empty() && !c.disable_cache)
    warnings.push_back("no home directory found and KILN_CACHE_DIR is unset; the disk compile cache is off");

  if (const char* v = env("KILN_ALLOCATOR")) {
    std::string a = lower(trim(v));
    if (a == "system") {
      c.allocator = AllocatorKind::System;
    } else if (a != "caching" && !a.empty()) {
      warnings.push_back(fmt::format("KILN_ALLOCATOR='{}' is not 'caching' or 'system'; using caching", v));
    }
  }
  if (const char* v = env("KILN_ALLOCATOR_CACHE_MB"); v != nullptr && !trim(v).empty()) {
    auto mb = parse_int(v);
    constexpr int64_t kMaxMb = int64_t{1} << 30;  // 1 PiB: far past any machine, no overflow
    if (!mb || *mb < 0 || *mb > kMaxMb) {
      warnings.push_back(fmt::format("KILN_ALLOCATOR_CACHE_MB='{}' is not a non-negative integer; using {}", v,
                                     c.allocator_cache_bytes >> 20));
    } else {
      c.allocator_cache_bytes = static_cast<size_t>(*mb) << 20;
    }
  }
  if (const char* v = env("KILN_SGEMM")) {
    std::string a = lower(trim(v));
    if (a == "kiln") {
      c.sgemm = SgemmChoice::Kiln;
    } else if (a == "onednn") {
      c.sgemm = SgemmChoice::OneDnn;
    } else if (!a.empty()) {
      warnings.push_back(fmt::format("KILN_SGEMM='{}' is not 'onednn' or 'kiln'; using onednn", v));
    }
  }
  if (const char* v = env("KILN_VERIFY")) {
    auto b = parse_bool(v);
    if (!b) warnings.push_back(fmt::format("KILN_VERIFY='{}' is not one of 1/0/true/false/yes/no/on/off; "
                                           "verification stays off", v));
    c.verify = b.value_or(false);
  }
  if (const char* v = env("KILN_ALLOW_TF32")) {
    auto b = parse_bool(v);
    if (!b) warnings.push_back(fmt::format("KILN_ALLOW_TF32='{}' is not one of 1/0/true/false/yes/no/on/off; "
                                           "f32 matmul on cuda stays exact", v));
    c.allow_tf32 = b.value_or(false);
  }
  if (const char* v = env("KILN_CUDA_ROW_THREADS")) {
    auto n = parse_int(v);
    if (!trim(v).empty() && (!n || (*n != 0 && (*n < 32 || *n > 1024 || *n % 32 != 0))))
      warnings.push_back(fmt::format("KILN_CUDA_ROW_THREADS='{}' is not 0 or a multiple of 32 in [32, 1024]; "
                                     "using the rule", v));
    else if (n) c.cuda_row_threads = *n;
  }
  if (const char* v = env("KILN_CUDA_ROW_CACHE")) {
    auto b = parse_bool(v);
    if (!b) warnings.push_back(fmt::format("KILN_CUDA_ROW_CACHE='{}' is not one of 1/0/true/false/yes/no/on/off; "
                                           "row kernels keep repeated loads in registers", v));
    c.cuda_row_cache = b.value_or(true);
  }
  if (const char* v = env("KILN_PERF_MAP")) {
    auto b = parse_bool(v);
    if (!b) warnings.push_back(fmt::format("KILN_PERF_MAP='{}' is not one of 1/0/true/false/yes/no/on/off; "
                                           "no perf map is written", v));
    c.perf_map = b.value_or(false);
  }
  if (const char* v = env("KILN_REPRO_DIR")) c.repro_dir = std::string(trim(v));
  return c;
}

namespace {

std::mutex& config_mutex() {
  static std::mutex m;
  return m;
}

// Every snapshot ever published; never freed, so references to old ones stay valid.
std::vector<std::unique_ptr<Config>>& snapshots() {
  static auto* v = new std::vector<std::unique_ptr<Config>>();
  return *v;
}

const Config& parse_and_publish() {
  std::vector<std::string> warnings;
  auto c = std::make_unique<Config>(parse_config([](const char* name) { return std::getenv(name); }, warnings));
  const Config* p = c.get();
  snapshots().push_back(std::move(c));
  detail::g_config.store(p, std::memory_order_release);
  // Warnings go out after publishing: warn() does not read the configuration, but a sink
  // installed by a test might.
  for (const auto& w : warnings) warn(w);
  return *p;
}

}  // namespace

const Config& detail::load_config_slow() {
  std::lock_guard<std::mutex> lock(config_mutex());
  if (const Config* c = g_config.load(std::memory_order_acquire)) return *c;
  return parse_and_publish();
}

void reload_config_for_testing() {
  std::lock_guard<std::mutex> lock(config_mutex());
  parse_and_publish();
}

const std::vector<std::string_view>& config_variable_names() {
  static const std::vector<std::string_view> names = {
      "KILN_LOG",       "KILN_DEBUG_DIR",     "KILN_NUM_THREADS",       "KILN_CACHE_DIR",
      "KILN_DISABLE_CACHE", "KILN_ALLOCATOR", "KILN_ALLOCATOR_CACHE_MB", "KILN_VERIFY",
      "KILN_REPRO_DIR", "KILN_ALLOW_TF32", "KILN_CUDA_ROW_THREADS", "KILN_CUDA_ROW_CACHE", "KILN_PERF_MAP",
  };
  return names;
}

}  // namespace kiln::rt
