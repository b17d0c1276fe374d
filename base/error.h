// kiln/base/error.h — the exception types every layer throws.
//
// User mistakes (bad shapes, dtypes, arguments) throw kiln::Error whose message starts with
// the op in brackets: "[matmul] shapes [2, 3] and [4, 5] cannot be multiplied". Broken
// internal invariants throw kiln::InternalError. Library code never aborts.
#pragma once

#include <fmt/format.h>

#include <stdexcept>
#include <string>
#include <string_view>

namespace kiln {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& msg) : std::runtime_error(msg) {}
};

// An op whose result's size or dtype depends on tensor values (nonzero, unique, item()) was
// called on a traced tensor. compile() catches it and runs the function eagerly for that
// signature (a graph break; CompileOptions::fullgraph makes it an error instead).
class DataDependentError : public Error {
 public:
  explicit DataDependentError(const std::string& msg) : Error(msg) {}
};

class InternalError : public std::logic_error {
 public:
  explicit InternalError(const std::string& msg) : std::logic_error("internal error: " + msg) {}
};

// Throws kiln::Error("[op] message").
template <typename... Args>
[[noreturn]] void fail(std::string_view op, fmt::format_string<Args...> f, Args&&... args) {
  throw Error(fmt::format("[{}] ", op) + fmt::format(f, std::forward<Args>(args)...));
}

// Throws kiln::DataDependentError("[op] message").
template <typename... Args>
[[noreturn]] void fail_data_dependent(std::string_view op, fmt::format_string<Args...> f, Args&&... args) {
  throw DataDependentError(fmt::format("[{}] ", op) + fmt::format(f, std::forward<Args>(args)...));
}

template <typename... Args>
[[noreturn]] void internal_fail(fmt::format_string<Args...> f, Args&&... args) {
  throw InternalError(fmt::format(f, std::forward<Args>(args)...));
}

#define KILN_CHECK(cond, op, ...)                   \
  do {                                              \
    if (!(cond)) ::kiln::fail((op), __VA_ARGS__);   \
  } while (0)

#define KILN_INTERNAL_ASSERT(cond)                                                       \
  do {                                                                                  \
    if (!(cond)) ::kiln::internal_fail("{}:{}: assertion failed: {}", __FILE__, __LINE__, #cond); \
  } while (0)

}  // namespace kiln
