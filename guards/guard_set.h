// kiln/guards/guard_set.h — the checks a call's inputs must pass to reuse a compiled entry.
//
// A GuardSet is built from the inputs seen at trace time: per tensor its dtype, device, rank,
// and each size: a static size is guarded by value; a symbolic one (ir/shape_env.h) binds its
// symbol at the first place it appears ("2 <= a.size(0)": dynamic sizes are never 0 or 1) and
// is compared with that place everywhere else ("b.size(0) == a.size(0)", duck sizing). Static
// tensors guard their strides (where the size is > 1); tensors with symbolic sizes guard
// that they are contiguous. Then aliasing with earlier inputs, the value of every scalar,
// and the predicates the trace decided on symbols ("a.size(0) % 4 == 0").
//
// Guards are kept in a canonical order, hashed into a signature and compiled into a flat
// check program (check(): a few nanoseconds per guard, no allocation). A miss asks
// first_failure() for the first failing guard with its expected and actual values.
#pragma once

#include "base/scalar.h"
#include "base/tensor_impl.h"
#include "ir/expr.h"
#include "ir/expr_eval.h"

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace kiln::ir {
class ShapeEnv;
}

namespace kiln::guards {

// What guards read of an argument of a compiled function: a tensor's metadata (its
// TensorImpl, owned by the caller for the duration of the check) or a scalar (int64_t,
// double, bool). The alternatives are in the order of kiln::detail::ArgValue (runtime/
// compile.h), which holds the Tensors themselves; runtime::guard_args converts.
using GuardArg = std::variant<const TensorImpl*, int64_t, double, bool>;
using GuardArgs = std::span<const GuardArg>;

enum class GuardKind : uint8_t {
  ArgKind, Dtype, Device, Rank,
  Size,        // arg.size(dim) == value
  SymbolBind,  // arg.size(dim) binds symbol `value` (a slot); guards 2 <= size
  SymbolEq,    // arg.size(dim) == the size that bound symbol `value`
  Stride,      // arg.stride(dim) == value
  Contiguous,  // arg is contiguous
  Alias, ScalarValue,
  Predicate,   // predicate `value` (an index into predicates()) holds on the symbols
};

struct Guard {
  GuardKind kind = GuardKind::Dtype;
  int arg = 0;          // argument position
  int dim = 0;          // Size / SymbolBind / SymbolEq / Stride
  int64_t value = 0;    // expected: dtype, rank, size, stride, alias target (-1: none), arg kind, slot
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

// The symbolic sizes a trace gave its tensor arguments (in argument order, one entry per
// tensor argument) and the ShapeEnv that owns their symbols and decided predicates.
struct SymbolicInputs {
  std::vector<std::vector<ir::Expr>> sizes;
  const ir::ShapeEnv* env = nullptr;
};

class GuardSet {
 public:
  // Guards for the given arguments; names[i] names argument i in messages ("a", "arg1").
  // Without `sym` every size is static.
  static GuardSet from_args(GuardArgs args, std::vector<std::string> names,
                            const SymbolicInputs* sym = nullptr);

  // Runs the compiled check program.
  bool check(GuardArgs args) const;
  std::optional<GuardFailure> first_failure(GuardArgs args) const;

  const std::vector<Guard>& guards() const { return guards_; }
  uint64_t signature() const { return signature_; }
  // One guard per line, readably: "a.dtype == f32", "a.size(0) == 4096", "2 <= a.size(1)",
  // "b.size(0) == a.size(0)", "b shares storage with a".
  std::string str() const;
  std::string describe(const Guard& g) const;
  // The symbol bound by each slot ("s0") and its source ("a.size(0)").
  const std::vector<std::string>& slot_symbols() const { return slot_symbols_; }
  const std::vector<std::string>& names() const { return names_; }

  // A text form that deserialize reads back into an equal set (same guards, messages and
  // signature), for exported programs (runtime/export/package.h): one record per line.
  std::string serialize() const;
  // Throws kiln::Error "[guards] line N: ..." for text serialize did not write (an unknown
  // kind, an argument or slot out of range, a predicate over a symbol no slot binds).
  static GuardSet deserialize(std::string_view text);

  // The same checks with every device guard expecting `device` instead (an exported cuda
  // program traced on host tensors: its inputs arrive on the device).
  GuardSet on_device(Device device) const;

 private:
  // One instruction of the check program; guards on one tensor's metadata merge into one.
  struct Op {
    enum Code : uint8_t { Tensor, Size, Bind, SlotEq, Stride, Contig, Alias, Int, Double, Bool, Pred } code;
    uint16_t arg = 0;
    uint16_t dim = 0;
    int64_t value = 0;   // Size/Stride/Int/Bool: expected; Bind/SlotEq: slot; Alias: target; Pred: index
    int64_t meta = 0;    // Tensor: dtype | rank << 8; Double: bit pattern
    Device device;       // Tensor
  };
  void compile();
  void sign();
  bool passes(const Guard& g, GuardArgs args, std::vector<int64_t>& slots) const;
  std::string actual_of(const Guard& g, GuardArgs args, const std::vector<int64_t>& slots) const;

  std::vector<Guard> guards_;
  std::vector<std::string> names_;
  std::vector<std::string> slot_symbols_;   // slot -> symbol name
  std::vector<std::string> slot_sources_;   // slot -> "a.size(0)"
  std::vector<ir::Expr> predicates_;        // over the slot symbols
  std::vector<std::string> predicate_text_; // with sources: "a.size(0) % 4 == 0"
  std::vector<ir::FastExpr> predicate_code_;
  std::vector<Op> program_;
  uint64_t signature_ = 0;
};

}  // namespace kiln::guards
