// kiln/guards/guard_set.h — the checks a call's inputs must pass to reuse a compiled entry.
//
// A GuardSet is built from the inputs seen at trace time: per tensor its dtype, device, rank,
// sizes and strides (strides only where the size is > 1: they do not matter elsewhere), which
// earlier input it shares storage with, and the value of every scalar argument. Guards are
// kept in a canonical order and hashed into a signature. check() returns the first failing
// guard, so a miss can say why ("a.size(0) == 8, got 16"). Sizes are static in this version;
// symbolic sizes (ShapeEnv) add relational guards on the same structure.
#pragma once

#include "frontend/scalar.h"
#include "frontend/tensor.h"

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace kiln::guards {

// An argument of a compiled function: a tensor or a scalar (int64_t, double, bool).
using ArgValue = std::variant<Tensor, int64_t, double, bool>;

enum class GuardKind : uint8_t { ArgKind, Dtype, Device, Rank, Size, Stride, Alias, ScalarValue };

struct Guard {
  GuardKind kind = GuardKind::Dtype;
  int arg = 0;          // argument position
  int dim = 0;          // Size / Stride
  int64_t value = 0;    // expected: dtype, rank, size, stride, alias target (-1: none), arg kind
  double fvalue = 0;    // ScalarValue of a double
  Device device;        // Device
  bool fp = false;      // ScalarValue: the scalar is a double (fvalue)
  bool operator==(const Guard&) const = default;
};

// What a failed check reports.
struct GuardFailure {
  Guard guard;
  std::string expected;  // "a.size(0) == 8"
  std::string actual;    // "16"
  std::string str() const { return expected + ", got " + actual; }
};

class GuardSet {
 public:
  // Guards for the given arguments; names[i] names argument i in messages ("a", "arg1").
  static GuardSet from_args(const std::vector<ArgValue>& args, std::vector<std::string> names);

  bool check(const std::vector<ArgValue>& args) const { return !first_failure(args); }
  std::optional<GuardFailure> first_failure(const std::vector<ArgValue>& args) const;

  const std::vector<Guard>& guards() const { return guards_; }
  uint64_t signature() const { return signature_; }
  // One guard per line, readably: "a.dtype == f32", "a.size(0) == 4096", "b aliases a".
  std::string str() const;
  std::string describe(const Guard& g) const;

 private:
  std::vector<Guard> guards_;
  std::vector<std::string> names_;
  uint64_t signature_ = 0;
};

}  // namespace kiln::guards
