// kiln/runtime/log.cpp — channel names, the serialized stderr writer, warn_once, debug dumps.
//
// One mutex serializes every message, whether it goes to stderr (a single write(2) of the
// whole line, retried only on EINTR or a short write) or to a test sink. Debug directories
// are created with mkdir(2), which fails on an existing name, so two compilations (or two
// processes) never share one.
#include "runtime/log.h"

#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <set>
#include <unordered_map>

namespace kiln::rt {

namespace {

constexpr std::array<std::string_view, kNumLogChannels> kChannelNames = {
    "graph", "decomp", "fusion", "kernels", "guards", "recompiles", "cache", "perf", "repro"};

struct LogState {
  std::mutex mutex;
  std::function<void(std::string_view)> sink;  // empty: stderr
  std::set<std::string, std::less<>> warned_keys;
  std::unordered_map<std::string, int> dump_counters;  // next n per sanitized function name
};

LogState& state() {
  static auto* s = new LogState();  // never destroyed: logging works during static destruction
  return *s;
}

void write_stderr(std::string_view line) {
  const char* p = line.data();
  size_t left = line.size();
  while (left > 0) {
    ssize_t n = ::write(STDERR_FILENO, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      return;  // stderr closed or broken: logging must never fail the caller
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
}

void emit(std::string_view prefix, std::string_view msg) {
  std::string line;
  line.reserve(prefix.size() + msg.size() + 9);
  line += "[kiln:";
  line += prefix;
  line += "] ";
  line += msg;
  line += '\n';
  LogState& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (s.sink) {
    s.sink(line);
  } else {
    write_stderr(line);
  }
}

std::string sanitize(std::string_view name) {
  std::string out;
  for (char ch : name.substr(0, 100)) {
    bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '_' ||
              ch == '-' || ch == '.';
    out += ok ? ch : '_';
  }
  if (out.empty() || out == "." || out == "..") out = "fn";
  return out;
}

}  // namespace

std::string_view log_channel_name(LogChannel c) {
  switch (c) {
    case LogChannel::Graph:
    case LogChannel::Decomp:
    case LogChannel::Fusion:
    case LogChannel::Kernels:
    case LogChannel::Guards:
    case LogChannel::Recompiles:
    case LogChannel::Cache:
    case LogChannel::Perf:
    case LogChannel::Repro:
      return kChannelNames[static_cast<size_t>(c)];
  }
  return "?";
}

std::optional<LogChannel> parse_log_channel(std::string_view name) {
  for (size_t i = 0; i < kChannelNames.size(); ++i)
    if (kChannelNames[i] == name) return static_cast<LogChannel>(i);
  return std::nullopt;
}

void log(LogChannel c, std::string_view msg) { emit(log_channel_name(c), msg); }

void warn(std::string_view msg) { emit("warning", msg); }

void warn_once(std::string_view key, std::string_view msg) {
  {
    LogState& s = state();
    std::lock_guard<std::mutex> lock(s.mutex);
    if (!s.warned_keys.emplace(key).second) return;
  }
  warn(msg);
}

void set_log_sink_for_testing(std::function<void(std::string_view)> sink) {
  LogState& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.sink = std::move(sink);
}

bool debug_dir_enabled() { return !config().debug_dir.empty(); }

std::string debug_dump_dir(std::string_view function_name) {
  return fresh_numbered_dir(config().debug_dir, function_name, "KILN_DEBUG_DIR");
}

std::string fresh_numbered_dir(const std::string& base, std::string_view function_name, std::string_view what) {
  if (base.empty()) return {};
  std::error_code ec;
  std::filesystem::create_directories(base, ec);
  if (ec) {
    warn_once("debug_dir:" + base,
              fmt::format("{}='{}' cannot be created ({}); nothing written", what, base, ec.message()));
    return {};
  }
  std::string name = sanitize(function_name);
  int n;
  {
    LogState& s = state();
    std::lock_guard<std::mutex> lock(s.mutex);
    n = s.dump_counters[name];
  }
  // mkdir fails on an existing entry: skip numbers used by earlier runs or other processes.
  for (int tries = 0; tries < 100000; ++tries, ++n) {
    std::string dir = fmt::format("{}/{}_{}", base, name, n);
    if (::mkdir(dir.c_str(), 0755) == 0) {
      LogState& s = state();
      std::lock_guard<std::mutex> lock(s.mutex);
      int& next = s.dump_counters[name];
      next = std::max(next, n + 1);
      return dir;
    }
    if (errno != EEXIST) {
      warn_once("debug_dir:" + base, fmt::format("cannot create dump directory '{}': {}", dir, std::strerror(errno)));
      return {};
    }
  }
  warn_once("debug_dir:" + base, fmt::format("{}='{}': no free directory name for '{}'", what, base, name));
  return {};
}

void debug_dump(const std::string& dir, std::string_view file, std::string_view text) {
  if (dir.empty()) return;
  std::string path = dir + "/" + std::string(file);
  if (const size_t slash = path.rfind('/'); slash != std::string::npos && slash > dir.size()) {
    std::error_code ec;  // a file in a subdirectory ("passes/02_decompose.kir"): create it
    std::filesystem::create_directories(path.substr(0, slash), ec);
  }
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (out) out.write(text.data(), static_cast<std::streamsize>(text.size()));
  if (!out) warn_once("debug_dump:" + dir, fmt::format("cannot write debug dump '{}'", path));
}

}  // namespace kiln::rt
