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
  ir::AttrList attrs;

  size_t rank(size_t i) const { return inputs[i] >> 8; }
  EagerLayout layout(size_t i) const { return static_cast<EagerLayout>(inputs[i] & 3); }
  bool operator==(const EagerKey& o) const = default;
};

// Whether make_eager_key can describe these inputs (at most kMaxInputs, ranks below 256).
bool keyable(const std::vector<Tensor>& inputs);
EagerKey make_eager_key(ir::OpKind op, const std::vector<Tensor>& inputs, const ir::AttrList& attrs);

struct EagerKeyHash {
  size_t operator()(const EagerKey& k) const;
};

}  // namespace kiln::rt
