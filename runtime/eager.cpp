// kiln/runtime/eager.cpp — the eager kernel cache and the choice between kernel and interpreter.
#include "runtime/eager.h"

#include "base/error.h"
#include "base/tensor_impl.h"
#include "frontend/dispatch.h"
#include "frontend/views.h"
#include "ir/shape_fns.h"
#include "runtime/backend.h"
#include "runtime/driver.h"
#include "runtime/interp_kernels.h"
#include "runtime/interpreter.h"
#include "runtime/program.h"

#include <fmt/format.h>

#include <array>
#include <atomic>
#include <cstring>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <unordered_map>

namespace kiln::rt {

namespace {

enum Layout : uint8_t { Contiguous = 0, InnerUnit = 1, General = 2 };

Layout layout_of(const TensorImpl& t) {
  if (t.is_contiguous()) return Contiguous;
  const auto& sz = t.sizes();
  if (!sz.empty() && t.strides().back() == 1) return InnerUnit;
  return General;
}

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

constexpr size_t kMaxKeyInputs = 4;  // the kernel families run here take at most three

struct Key {
  ir::OpKind op;
  uint8_t rank;
  uint8_t n_inputs;
  std::array<uint8_t, kMaxKeyInputs> inputs;  // dtype << 2 | layout, per input (no allocation)
  ir::AttrList attrs;
  bool operator==(const Key& o) const {
    return op == o.op && rank == o.rank && n_inputs == o.n_inputs && inputs == o.inputs && attrs == o.attrs;
  }
};
struct KeyHash {
  size_t operator()(const Key& k) const {
    uint64_t h = mix(static_cast<uint64_t>(k.op), k.rank);
    for (size_t i = 0; i < k.n_inputs; ++i) h = mix(h, k.inputs[i]);
    for (const ir::AttrValue& a : k.attrs.values()) h = mix(h, hash_attr(a));
    return h;
  }
};

// nullptr exe: this key runs on the interpreter (its shape function could not be
// specialized symbolically).
struct Entry {
  std::unique_ptr<Executable> exe;
};

struct Cache {
  std::shared_mutex mu;
  std::unordered_map<Key, std::shared_ptr<const Entry>, KeyHash> map;
  std::atomic<int64_t> built{0}, compiled_calls{0}, interpreted_calls{0};
};
Cache& cache() {
  static Cache* c = new Cache();  // never destroyed: kernels may run during static destruction
  return *c;
}

bool runs_compiled(ir::OpKind op, const std::vector<Tensor>& inputs) {
  const ir::OpInfo& info = ir::op_info(op);
  switch (info.family) {
    case ir::OpFamily::Unary:
    case ir::OpFamily::Ternary:
    case ir::OpFamily::Cast:
    case ir::OpFamily::Reduction: break;
    case ir::OpFamily::Binary: {
      const ir::BinaryOp b = ir::as_binary(op);
      const bool divides = b == ir::BinaryOp::div || b == ir::BinaryOp::remainder || b == ir::BinaryOp::fmod;
      if (divides && !is_floating_point(inputs.at(0).dtype())) return false;  // ZeroDivisionError
      break;
    }
    case ir::OpFamily::Scan:
    case ir::OpFamily::View:
    case ir::OpFamily::Shape:
    case ir::OpFamily::Index:
    case ir::OpFamily::Factory:
    case ir::OpFamily::Random:
    case ir::OpFamily::Matmul:
    case ir::OpFamily::Conv:
    case ir::OpFamily::Sort:
    case ir::OpFamily::Decomposable:
    case ir::OpFamily::Custom: return false;
  }
  if (inputs.empty() || inputs.size() > kMaxKeyInputs) return false;
  const size_t rank = inputs[0].impl()->sizes().size();
  for (const Tensor& t : inputs)
    if (!t.device().is_cpu() || t.impl()->sizes().size() != rank) return false;
  return rank < 64;
}

std::unique_ptr<Entry> build(const Key& key, const std::vector<Tensor>& inputs) {
  auto e = std::make_unique<Entry>();
  const size_t rank = key.rank;
  // Sizes s0.. of input 0 (all inputs have the same rank and, for these ops, broadcast-free
  // equal sizes); strides t<i>_<d> of inputs that are not contiguous. Each symbol's source is
  // recorded as it is made.
  DriverOptions opts;
  std::vector<ir::Expr> sizes;
  for (size_t d = 0; d < rank; ++d) {
    sizes.push_back(ir::Expr::symbol(fmt::format("s{}", d)));
    opts.params.emplace(sizes.back().symbol_name(), ParamSource{0, static_cast<int>(d), false});
  }
  auto g = std::make_shared<ir::Graph>();
  std::vector<ir::Value*> ins;
  for (size_t i = 0; i < inputs.size(); ++i) {
    ins.push_back(g->add_input(ir::TensorType(inputs[i].dtype(), sizes), fmt::format("in{}", i)));
    const Layout l = static_cast<Layout>(key.inputs[i] & 3);
    std::vector<ir::Expr> st;
    if (l == Contiguous) {
      st = ir::contiguous_strides(sizes);
    } else {
      for (size_t d = 0; d < rank; ++d) {
        if (l == InnerUnit && d + 1 == rank) {
          st.emplace_back(1);
          continue;
        }
        st.push_back(ir::Expr::symbol(fmt::format("t{}_{}", i, d)));
        opts.params.emplace(st.back().symbol_name(), ParamSource{static_cast<int>(i), static_cast<int>(d), true});
      }
    }
    opts.input_strides.push_back(std::move(st));
  }
  try {
    ir::Node* n = g->create(key.op, ins, key.attrs);
    for (ir::Value* o : n->outputs()) g->add_output(o);
  } catch (const Error&) {
    return e;  // the shape function needs concrete sizes: interpret
  }
  opts.name = fmt::format("eager_{}", ir::op_name(key.op));
  opts.use_lowerings = false;  // a user's extern call may run this very op eagerly
  Compilation c = compile_graph(std::move(g), *find_backend("cpu"), std::move(opts));
  if (!c.status.ok()) internal_fail("eager {}: {}", ir::op_name(key.op), c.status.error);
  e->exe = std::move(c.status.exe);
  return e;
}

Key make_key(ir::OpKind op, const std::vector<Tensor>& inputs, const ir::AttrList& attrs) {
  Key key{op, static_cast<uint8_t>(inputs[0].impl()->sizes().size()), static_cast<uint8_t>(inputs.size()), {}, attrs};
  for (size_t i = 0; i < inputs.size(); ++i)
    key.inputs[i] = static_cast<uint8_t>(static_cast<unsigned>(inputs[i].dtype()) << 2 | layout_of(*inputs[i].impl()));
  return key;
}

std::shared_ptr<const Entry> lookup(Cache& c, const Key& key) {
  std::shared_lock lock(c.mu);
  auto it = c.map.find(key);
  return it == c.map.end() ? nullptr : it->second;
}

bool is_pointwise(ir::OpFamily f) {
  return f == ir::OpFamily::Unary || f == ir::OpFamily::Binary || f == ir::OpFamily::Ternary || f == ir::OpFamily::Cast;
}

// frontend/dispatch.h's EagerFastPath: a pointwise prim on cpu tensors of one shape whose
// kernel is cached (its build ran the shape function on these dtypes and attributes).
bool eager_fast_path(ir::OpKind op, const std::vector<Tensor>& inputs, const ir::AttrList& attrs,
                     std::vector<Tensor>& out) {
  if (!is_pointwise(ir::op_info(op).family) || inputs.empty() || inputs.size() > kMaxKeyInputs) return false;
  const TensorImpl* first = inputs[0].impl();
  if (!first) return false;
  for (const Tensor& t : inputs) {
    const TensorImpl* ti = t.impl();
    if (!ti || ti->is_traced() || !ti->device().is_cpu() || ti->sizes() != first->sizes()) return false;
  }
  Cache& c = cache();
  const std::shared_ptr<const Entry> e = lookup(c, make_key(op, inputs, attrs));
  if (!e || !e->exe) return false;
  c.compiled_calls.fetch_add(1, std::memory_order_relaxed);
  out = e->exe->run(inputs);
  return true;
}

// The frontend reaches eager execution and in-place copies through these hooks
// (frontend/dispatch.h).
const bool installed = (install_eager_executor(&eager_execute), install_eager_fast_path(&eager_fast_path),
                        install_copy_kernel(&interp::copy_into), true);

}  // namespace

std::vector<Tensor> eager_execute(ir::OpKind op, const std::vector<Tensor>& inputs, const ir::AttrList& attrs) {
  Cache& c = cache();
  if (BuiltinExtern fn = builtin_extern(op)) {
    std::vector<ir::TensorType> types;
    for (const Tensor& t : inputs) types.emplace_back(t.dtype(), ir::to_exprs(t.sizes().vec()), t.device());
    const ir::TensorType type = ir::infer_types(op, types, attrs).at(0);
    const std::vector<int64_t> out = ir::to_ints(type.sizes);
    Tensor r = Tensor(make_intrusive<TensorImpl>(
        make_intrusive<StorageImpl>(static_cast<size_t>(checked_numel(ir::op_name(op), out)) * element_size(type.dtype),
                                    Device()),
        type.dtype, out, contiguous_strides(out), 0));
    fn(op, inputs, attrs, r);
    c.compiled_calls.fetch_add(1, std::memory_order_relaxed);
    return {r};
  }
  if (!runs_compiled(op, inputs)) {
    c.interpreted_calls.fetch_add(1, std::memory_order_relaxed);
    return interpret_op(op, inputs, attrs);
  }
  const Key key = make_key(op, inputs, attrs);
  std::shared_ptr<const Entry> e = lookup(c, key);
  if (!e) {
    std::shared_ptr<const Entry> fresh = build(key, inputs);
    std::unique_lock lock(c.mu);
    auto [it, inserted] = c.map.emplace(key, fresh);
    if (inserted && fresh->exe) c.built.fetch_add(1);
    e = it->second;
  }
  if (!e->exe) {
    c.interpreted_calls.fetch_add(1, std::memory_order_relaxed);
    return interpret_op(op, inputs, attrs);
  }
  c.compiled_calls.fetch_add(1, std::memory_order_relaxed);
  return e->exe->run(inputs);
}

EagerStats eager_stats() {
  Cache& c = cache();
  const auto [programs, decomposed] = eager_composite_counts();
  return {c.built.load(), c.compiled_calls.load(), c.interpreted_calls.load(), programs, decomposed};
}

}  // namespace kiln::rt
