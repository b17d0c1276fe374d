// kiln/test/test_compile_util.h — helpers for the compile() tests: log capture and env scopes.
//
// LogCapture replaces the log sink (rt::set_log_sink_for_testing) for its lifetime and keeps
// every line; EnvScope sets one environment variable, re-reads the configuration, and on
// destruction restores the previous value (or unsets it) and re-reads again, so a test that
// turns on KILN_LOG or KILN_DEBUG_DIR leaves no trace in the next one.
#pragma once

#include "runtime/config.h"
#include "runtime/log.h"

#include <cstdlib>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::test {

class LogCapture {
 public:
  LogCapture() {
    rt::set_log_sink_for_testing([this](std::string_view line) {
      std::lock_guard<std::mutex> lock(mu_);
      lines_.emplace_back(line);
    });
  }
  ~LogCapture() { rt::set_log_sink_for_testing({}); }
  LogCapture(const LogCapture&) = delete;
  LogCapture& operator=(const LogCapture&) = delete;

  std::vector<std::string> lines() const {
    std::lock_guard<std::mutex> lock(mu_);
    return lines_;
  }
  // The lines that contain `s`.
  std::vector<std::string> matching(std::string_view s) const {
    std::vector<std::string> out;
    for (const std::string& l : lines())
      if (l.find(s) != std::string::npos) out.push_back(l);
    return out;
  }

 private:
  mutable std::mutex mu_;
  std::vector<std::string> lines_;
};

class EnvScope {
 public:
  EnvScope(const char* name, const std::string& value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    ::setenv(name, value.c_str(), 1);
    rt::reload_config_for_testing();
  }
  ~EnvScope() {
    if (old_) ::setenv(name_, old_->c_str(), 1);
    else ::unsetenv(name_);
    rt::reload_config_for_testing();
  }
  EnvScope(const EnvScope&) = delete;
  EnvScope& operator=(const EnvScope&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

}  // namespace kiln::test
