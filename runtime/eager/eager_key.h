// kiln/runtime/eager/eager_key.h — the cache key of an eager op's compiled code: the op, its
// attributes, the inputs' device and, per tensor input, its rank, dtype and layout class. Shared by the prims'
// kernel cache (runtime/eager/eager.cpp) and the composites' program cache
// (runtime/eager/eager_composite.cpp). Building one allocates nothing but the attribute copy.
#pragma once

#include "base/tensor_impl.h"
#include "frontend/tensor.h"
#include "ir/attr.h"
#include "ir/op.h"

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

namespace kiln::rt {

// Layout classes: contiguous; unit stride in the last dim; anything else.
enum EagerLayout : uint8_t { Contiguous = 0, InnerUnit = 1, General = 2 };
EagerLayout layout_of(const TensorImpl& t);

struct EagerKey {
  static constexpr size_t kMaxInputs = 8;
  ir::OpKind op{};
  uint8_t n_inputs = 0;
  int8_t device = -1;  // -1: the cpu; else the cuda device index of the inputs
  std::array<uint16_t, kMaxInputs> inputs{};  // per input: rank << 8 | dtype << 2 | layout
  // Ops whose inputs differ in shape (duck_sized): which of their dims have equal sizes
  // (size_classes). 0 for the other ops, whose inputs share one shape.
  uint64_t size_classes = 0;
  uint32_t unused_outputs = 0;  // an eager composite's outputs left out (OpCall::unused_outputs)
  // Ops whose inputs share one shape: the dims (bit d) of size 1, compiled as 1 rather than as a
  // symbol (compile()'s 1-specialization), so that a kernel over [1, C, H, W] shares C among the
  // threads, not its leading 1 (passes/lower_index.h grid_vars). Dims past 31 are never marked.
  uint32_t unit_dims = 0;
  ir::AttrList attrs;

  size_t rank(size_t i) const { return inputs[i] >> 8; }
  EagerLayout layout(size_t i) const { return static_cast<EagerLayout>(inputs[i] & 3); }
  bool operator==(const EagerKey& o) const = default;
};

// Whether make_eager_key can describe these inputs (at most kMaxInputs, ranks below 256).
bool keyable(const std::vector<Tensor>& inputs);

// The inputs' dims in order (input 0's, then input 1's, ...), each numbered by its size: the
// first dim of each distinct size gets the next number, and a dim of a size met before gets
// that dim's number; 4 bits per dim, the first dim lowest. One kernel with a symbol per number
// then serves every call with the same pattern of equal sizes, and can prove what those
// equalities allow (an index no larger than its source: a gather read inside the kernel), as a
// compiled function's duck-sized symbols do. nullopt past kMaxClassDims dims.
inline constexpr size_t kMaxClassDims = 16;
// The prims whose inputs (or output) differ in shape and whose keys hold size_classes: the index
// prims (gather, index_select, the scatters), the matrix products (mm, bmm) and the shape
// prims (cat, constant_pad).
bool duck_sized(ir::OpKind op);
std::optional<uint64_t> size_classes(const std::vector<Tensor>& inputs);
// The number of dim j (in size_classes' order) in a pattern.
inline size_t size_class(uint64_t classes, size_t j) { return static_cast<size_t>(classes >> (4 * j) & 15); }
EagerKey make_eager_key(ir::OpKind op, const std::vector<Tensor>& inputs, const ir::AttrList& attrs);

struct EagerKeyHash {
  size_t operator()(const EagerKey& k) const;
};

}  // namespace kiln::rt
