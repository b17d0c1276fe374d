// kiln/runtime/log.h — KILN_LOG channels, warnings and KILN_DEBUG_DIR stage dumps.
//
// Logging goes to stderr as "[kiln:<channel>] message\n", each message in one write(2) under
// a mutex, so lines from several threads never interleave. Channels are enabled by KILN_LOG
// (runtime/config.h); log_enabled() is an atomic load and a bit test, and KILN_LOG_IF formats
// its message only when the channel is on:
//
//   KILN_LOG_IF(rt::LogChannel::Recompiles, "{}: guard {} failed", fn_name, guard);
//
// Warnings ("[kiln:warning] ...") are always printed; warn_once prints a given key once per
// process. Tests capture everything with set_log_sink_for_testing. Debug dumps: with
// KILN_DEBUG_DIR set, each compilation asks debug_dump_dir(fn) for a fresh numbered directory
// <dir>/<fn>_<n>/ and writes its stages there with debug_dump. Dump failures warn, never throw.
#pragma once

#include "runtime/config.h"

#include <fmt/format.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace kiln::rt {

enum class LogChannel : uint8_t { Graph, Decomp, Fusion, Kernels, Guards, Recompiles, Cache, Perf, Repro };
inline constexpr int kNumLogChannels = 9;

// "graph", "decomp", ... (the names KILN_LOG accepts).
std::string_view log_channel_name(LogChannel c);
// The channel of a (lower-case) name; nullopt for unknown names.
std::optional<LogChannel> parse_log_channel(std::string_view name);

inline uint32_t log_channel_bit(LogChannel c) { return uint32_t{1} << static_cast<unsigned>(c); }

inline bool log_enabled(LogChannel c) { return (config().log_channels & log_channel_bit(c)) != 0; }

// Writes "[kiln:<channel>] msg\n" (to stderr or the test sink), whether or not c is enabled:
// callers test log_enabled first (KILN_LOG_IF does).
void log(LogChannel c, std::string_view msg);

// Writes "[kiln:warning] msg\n".
void warn(std::string_view msg);
// Like warn, but only the first call with a given key prints.
void warn_once(std::string_view key, std::string_view msg);

// Replaces stderr by `sink` for logs and warnings; each call receives one complete line
// including the prefix and the trailing newline. An empty function restores stderr.
void set_log_sink_for_testing(std::function<void(std::string_view)> sink);

// KILN_DEBUG_DIR is set.
bool debug_dir_enabled();
// Creates and returns a fresh directory <KILN_DEBUG_DIR>/<fn>_<n>/ (n counts up from 0 and
// skips existing directories; fn is sanitized to [A-Za-z0-9_.-]). Returns "" when dumps are
// off or the directory cannot be created (after a warning).
std::string debug_dump_dir(std::string_view function_name);
// Creates and returns a fresh directory <base>/<name>_<n>/ as debug_dump_dir does, for any
// base directory (KILN_REPRO_DIR uses it); `what` names the variable in warnings. "" on failure.
std::string fresh_numbered_dir(const std::string& base, std::string_view name, std::string_view what);
// Writes `text` to <dir>/<file>; does nothing when dir is empty; warns on failure.
void debug_dump(const std::string& dir, std::string_view file, std::string_view text);

}  // namespace kiln::rt

// Logs fmt::format(fmt, args...) on `channel` (a LogChannel expression) if it is enabled; the
// arguments are not evaluated otherwise.
#define KILN_LOG_IF(channel, ...)                                          \
  do {                                                                     \
    if (::kiln::rt::log_enabled(channel)) {                                \
      ::kiln::rt::log((channel), ::fmt::format(__VA_ARGS__));              \
    }                                                                      \
  } while (0)
