// kiln/test/test_support/scoped_env.h — one environment variable set for a scope.
//
// Sets (or unsets, for nullptr) the variable and reloads kiln's configuration; the destructor
// restores the old value and reloads again.
#pragma once

#include "runtime/config.h"

#include <cstdlib>
#include <optional>
#include <string>

namespace kiln::test {

class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value) {
      ::setenv(name, value, 1);
    } else {
      ::unsetenv(name);
    }
    rt::reload_config_for_testing();
  }
  ~ScopedEnv() {
    if (old_) {
      ::setenv(name_.c_str(), old_->c_str(), 1);
    } else {
      ::unsetenv(name_.c_str());
    }
    rt::reload_config_for_testing();
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  std::string name_;
  std::optional<std::string> old_;
};

}  // namespace kiln::test
