// kiln/runtime/eager/eager_key.cpp — building and hashing eager cache keys.
#include "runtime/eager/eager_key.h"

#include <cstring>
#include <functional>
#include <string>
#include <type_traits>
#include <variant>

namespace kiln::rt {

namespace {

uint64_t mix(uint64_t h, uint64_t v) { return h ^ (v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2)); }

uint64_t hash_attr(const ir::AttrValue& v) {
  uint64_t h = v.index();
  std::visit(
      [&](const auto& x) {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, std::monostate>) {
        } else if constexpr (std::is_same_v<T, int64_t> || std::is_same_v<T, bool>) {
          h = mix(h, static_cast<uint64_t>(x));
        } else if constexpr (std::is_same_v<T, double>) {
          uint64_t b;
          std::memcpy(&b, &x, sizeof b);
          h = mix(h, b);
        } else if constexpr (std::is_same_v<T, std::string>) {
          h = mix(h, std::hash<std::string>()(x));
        } else if constexpr (std::is_same_v<T, std::vector<int64_t>>) {
          for (int64_t i : x) h = mix(h, static_cast<uint64_t>(i));
        } else if constexpr (std::is_same_v<T, ScalarType>) {
          h = mix(h, static_cast<uint64_t>(x));
        } else if constexpr (std::is_same_v<T, Scalar>) {
          const double d = x.to_double();
          uint64_t b;
          std::memcpy(&b, &d, sizeof b);
          h = mix(mix(h, b), x.is_floating_point());
        } else if constexpr (std::is_same_v<T, ir::Expr>) {
          h = mix(h, x.hash());
        } else if constexpr (std::is_same_v<T, std::vector<ir::Expr>>) {
          for (const ir::Expr& e : x) h = mix(h, e.hash());
        } else {
          h = mix(h, std::hash<std::string>()(x.str()));
        }
      },
      v);
  return h;
}

}  // namespace

EagerLayout layout_of(const TensorImpl& t) {
  if (t.is_contiguous()) return Contiguous;
  if (!t.sizes().empty() && t.strides().back() == 1) return InnerUnit;
  return General;
}

bool keyable(const std::vector<Tensor>& inputs) {
  if (inputs.size() > EagerKey::kMaxInputs) return false;
  for (const Tensor& t : inputs)
    if (!t.impl() || t.impl()->sizes().size() > 255) return false;
  return true;
}

bool duck_sized(ir::OpKind op) {
  const ir::OpFamily f = ir::op_info(op).family;
  return f == ir::OpFamily::Index || f == ir::OpFamily::Matmul || f == ir::OpFamily::Shape;
}

std::optional<uint64_t> size_classes(const std::vector<Tensor>& inputs) {
  std::array<int64_t, kMaxClassDims> seen{};  // the size of each number
  size_t numbers = 0;
  uint64_t classes = 0;
  size_t j = 0;
  for (const Tensor& t : inputs)
    for (int64_t s : t.impl()->sizes()) {
      if (j == kMaxClassDims) return std::nullopt;
      size_t c = 0;
      while (c < numbers && seen[c] != s) ++c;
      if (c == numbers) seen[numbers++] = s;
      classes |= static_cast<uint64_t>(c) << (4 * j++);
    }
  return classes;
}

EagerKey make_eager_key(ir::OpKind op, const std::vector<Tensor>& inputs, const ir::AttrList& attrs) {
  EagerKey k;
  k.op = op;
  k.n_inputs = static_cast<uint8_t>(inputs.size());
  k.attrs = attrs;
  if (!inputs.empty() && inputs[0].impl()->device().is_cuda())
    k.device = static_cast<int8_t>(inputs[0].impl()->device().index);
  for (size_t i = 0; i < inputs.size(); ++i) {
    const TensorImpl& t = *inputs[i].impl();
    k.inputs[i] = static_cast<uint16_t>(t.sizes().size() << 8 | static_cast<unsigned>(t.dtype()) << 2 | layout_of(t));
  }
  if (duck_sized(op)) {
    k.size_classes = size_classes(inputs).value_or(0);
  } else if (!inputs.empty()) {
    const auto sizes = inputs[0].impl()->sizes();
    for (size_t d = 0; d < sizes.size() && d < 32; ++d)
      if (sizes[d] == 1) k.unit_dims |= uint32_t{1} << d;
  }
  return k;
}

size_t EagerKeyHash::operator()(const EagerKey& k) const {
  uint64_t h = mix(mix(static_cast<uint64_t>(k.op), k.n_inputs), static_cast<uint64_t>(k.device + 1));
  for (size_t i = 0; i < k.n_inputs; ++i) h = mix(h, k.inputs[i]);
  h = mix(h, k.size_classes);
  h = mix(h, k.unused_outputs);
  h = mix(h, k.unit_dims);
  for (const ir::AttrValue& a : k.attrs.values()) h = mix(h, hash_attr(a));
  return h;
}

}  // namespace kiln::rt
