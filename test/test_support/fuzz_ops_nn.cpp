// kiln/test/test_support/fuzz_ops_nn.cpp — the fuzzer's indexing, matmul, activation,
// factory, random and in-place ops, and op_table() itself (fuzz_program.h).
#include "test_support/fuzz_ops.h"

#include <algorithm>

namespace kiln::fuzz {

namespace {

std::array<int64_t, 2> same(int64_t v) { return {v, v}; }
int64_t nn_dim(int64_t d, int64_t r) { return d < 0 ? d + r : d; }
ScalarType index_dtype(GenCtx& c) { return c.rng.chance(0.05) ? kInt : kLong; }  // int32: known bug 6
TensorOptions opts_of(const Attrs& a) { return a.has("dtype") ? TensorOptions(a.dt("dtype")) : TensorOptions(); }

// An index input for dim d of value a: dims k != d are constants <= a's (in both variants).
Dims index_dims(GenCtx& c, int a, int64_t d, int64_t len_d) {
  Dims dims;
  for (int64_t k = 0; k < c.rank(a); ++k) {
    int64_t m = c.min_size(a, k);
    dims.push_back(same(k == d ? len_d : (c.rng.chance(0.7) ? m : c.rng.range(0, m))));
  }
  return dims;
}

// A fresh matrix operand [k, m] (k shared with the other operand), any layout.
int fresh(GenCtx& c, ScalarType dt, Dims d) { return c.add_input(dt, d); }

}  // namespace

void add_nn_ops(std::vector<OpSpec>& t) {
  // gather / scatter / scatter_add / index_select, indices valid in both variants.
  t.push_back({"gather", 2, kExact, [](GenCtx& c, Node& n) {
                 int a = c.pick([](const GenValue& g) { return !g.dims.empty(); });
                 if (a < 0) return false;
                 int64_t r = c.rank(a), d = random_dim(c, r), m = c.min_size(a, nn_dim(d, r));
                 if (m < 1) return false;
                 int idx = c.add_input(index_dtype(c), index_dims(c, a, nn_dim(d, r), c.rng.range(1, 3)),
                                       "idx:" + std::to_string(m), Layout::Contiguous);
                 n.args = {a, idx};
                 n.attrs.set("dim", std::to_string(d));
                 return true;
               },
               [](const std::vector<Tensor>& in, const Attrs& a) { return kiln::gather(in[0], a.i("dim"), in[1]); },
               [](const std::vector<std::string>& o, const Attrs& a) { return "torch.gather(" + o[0] + ", " + a.raw("dim") + ", " + o[1] + ")"; }});
  for (bool add : {false, true}) {
    t.push_back({add ? "scatter_add" : "scatter", 2, add ? kReduces : kExact, [add](GenCtx& c, Node& n) {
                   int a = c.pick([](const GenValue& g) { return !g.dims.empty(); });
                   if (a < 0) return false;
                   int64_t r = c.rank(a), d = random_dim(c, r), nd = nn_dim(d, r), m = c.min_size(a, nd);
                   int64_t len = add ? c.rng.range(std::min<int64_t>(m, 1), 3) : c.rng.range(0, m);
                   if (add && m < 1) len = 0;
                   std::string vals = add ? "idx:" + std::to_string(std::max<int64_t>(m, 1))
                                          : "perm:" + std::to_string(m) + ":" + std::to_string(nd);
                   Dims idims = index_dims(c, a, nd, len);
                   int idx = c.add_input(index_dtype(c), idims, vals, Layout::Contiguous);
                   n.args = {a, idx};
                   n.attrs.set("dim", std::to_string(d));
                   ScalarType dt = c.vals[static_cast<size_t>(a)].dtype;
                   if (!add && c.rng.chance(0.3)) n.attrs.set("value", c.scalar_for(dt));
                   else n.args.push_back(c.add_input(c.rng.chance(0.9) ? dt : c.random_dtype(), idims));
                   return true;
                 },
                 [add](const std::vector<Tensor>& in, const Attrs& a) {
                   if (add) return kiln::scatter_add(in[0], a.i("dim"), in[1], in[2]);
                   if (in.size() > 2) return kiln::scatter(in[0], a.i("dim"), in[1], in[2]);
                   return kiln::scatter(in[0], a.i("dim"), in[1], a.scalar("value"));
                 },
                 [add](const std::vector<std::string>& o, const Attrs& a) {
                   return std::string(add ? "torch.scatter_add(" : "torch.scatter(") + o[0] + ", " + a.raw("dim") + ", " + o[1] +
                          ", " + (o.size() > 2 ? o[2] : "value=" + py_value(a.raw("value"))) + ")";
                 }});
  }
  t.push_back({"scatter_reduce", 1, kReduces | kFragile, [](GenCtx& c, Node& n) {
                 int a = c.pick([](const GenValue& g) { return !g.dims.empty(); });
                 if (a < 0) return false;
                 int64_t r = c.rank(a), d = random_dim(c, r), nd = nn_dim(d, r), m = c.min_size(a, nd);
                 const int64_t len = m < 1 ? 0 : c.rng.range(1, 3);
                 Dims idims = index_dims(c, a, nd, len);
                 int idx = c.add_input(index_dtype(c), idims, "idx:" + std::to_string(std::max<int64_t>(m, 1)), Layout::Contiguous);
                 ScalarType dt = c.vals[static_cast<size_t>(a)].dtype;
                 n.args = {a, idx, c.add_input(c.rng.chance(0.9) ? dt : c.random_dtype(), idims)};
                 n.attrs.set("dim", std::to_string(d));
                 static const char* kReduce[] = {"sum", "prod", "mean", "amax", "amin"};
                 n.attrs.set("reduce", kReduce[c.rng.range(0, 4)]);
                 n.attrs.set("include_self", c.rng.chance(0.5) ? "True" : "False");
                 return true;
               },
               [](const std::vector<Tensor>& in, const Attrs& a) {
                 return kiln::scatter_reduce(in[0], a.i("dim"), in[1], in[2], a.raw("reduce"), a.b("include_self"));
               },
               [](const std::vector<std::string>& o, const Attrs& a) {
                 return "torch.scatter_reduce(" + o[0] + ", " + a.raw("dim") + ", " + o[1] + ", " + o[2] + ", " + py_value(a.raw("reduce")) +
                        ", include_self=" + a.raw("include_self") + ")";
               }});
  t.push_back({"index_select", 2, kExact, [](GenCtx& c, Node& n) {
                 int a = c.pick();
                 if (a < 0) return false;
                 int64_t r = std::max<int64_t>(1, c.rank(a)), d = random_dim(c, r);
                 int64_t m = c.rank(a) == 0 ? 1 : c.min_size(a, nn_dim(d, r));
                 int64_t len = m < 1 ? 0 : c.rng.range(0, 4);
                 int idx = c.add_input(index_dtype(c), {same(len)}, "idx:" + std::to_string(std::max<int64_t>(m, 1)), Layout::Contiguous);
                 n.args = {a, idx};
                 n.attrs.set("dim", std::to_string(d));
                 return true;
               },
               [](const std::vector<Tensor>& in, const Attrs& a) { return kiln::index_select(in[0], a.i("dim"), in[1]); },
               [](const std::vector<std::string>& o, const Attrs& a) { return "torch.index_select(" + o[0] + ", " + a.raw("dim") + ", " + o[1] + ")"; }});

  // Matrix products: the second operand is fresh (any layout: expanded and 1-sized dims included).
  auto mat = [&](const char* name, int rank, Tensor (*f)(const Tensor&, const Tensor&)) {
    t.push_back({name, 2, kReduces, [rank](GenCtx& c, Node& n) {
                   int a = c.pick([&](const GenValue& g) {
                     return rank ? static_cast<int>(g.dims.size()) == rank : (!g.dims.empty() && g.dims.size() <= 3);
                   });
                   if (a < 0 || c.rng.chance(0.2)) {
                     Dims d = c.random_dims(rank ? rank : 3);
                     while (static_cast<int>(d.size()) < std::max(rank, 1)) d.push_back(same(c.rng.range(1, 3)));
                     if (rank) d.resize(static_cast<size_t>(rank));
                     a = c.add_input(c.rng.chance(0.8) ? kFloat : c.random_dtype(), d);
                   }
                   const Dims da = c.vals[static_cast<size_t>(a)].dims;
                   const ScalarType dt = c.rng.chance(0.9) ? c.vals[static_cast<size_t>(a)].dtype : c.random_dtype();
                   const auto k = da.back();
                   const auto m = c.rng.chance(0.3) ? same(1) : same(c.rng.range(0, 4));
                   Dims db;
                   if (rank == 3) db = {da[0], k, m};
                   else if (rank == 2) db = {k, m};
                   else if (da.size() == 1 || c.rng.chance(0.3)) db = c.rng.chance(0.5) ? Dims{k} : Dims{k, m};
                   else db = {da.size() == 3 && c.rng.chance(0.5) ? da[0] : same(1), k, m};
                   n.args = {a, fresh(c, dt, db)};
                   return true;
                 },
                 [f](const std::vector<Tensor>& in, const Attrs&) { return f(in[0], in[1]); },
                 torch_fn(std::string("torch.") + name)});
  };
  mat("mm", 2, kiln::mm);
  // addmm / baddbmm: self broadcast to the product ([m], [n, m] or [b, n, m]).
  for (bool batched : {false, true}) {
    t.push_back({batched ? "baddbmm" : "addmm", 1, kReduces, [batched](GenCtx& c, Node& n) {
                   int a = c.pick([&](const GenValue& g) {
                     return is_floating_point(g.dtype) && static_cast<int>(g.dims.size()) == (batched ? 3 : 2);
                   });
                   if (a < 0) return false;
                   const ScalarType dt = c.vals[static_cast<size_t>(a)].dtype;
                   const Dims da = c.vals[static_cast<size_t>(a)].dims;
                   const auto m = same(c.rng.range(1, 4));
                   Dims db = batched ? Dims{da[0], da[2], m} : Dims{da[1], m};
                   Dims out = batched ? Dims{da[0], da[1], m} : Dims{da[0], m};
                   Dims self = c.rng.chance(0.5) ? out : Dims{m};
                   n.args = {c.add_input(dt, self), a, fresh(c, dt, db)};
                   if (c.rng.chance(0.5)) n.attrs.set("beta", c.rng.chance(0.3) ? "0" : "0.5");
                   if (c.rng.chance(0.5)) n.attrs.set("alpha", "-2");
                   return true;
                 },
                 [batched](const std::vector<Tensor>& in, const Attrs& a) {
                   Scalar beta = a.has("beta") ? a.scalar("beta") : Scalar(int64_t{1});
                   Scalar alpha = a.has("alpha") ? a.scalar("alpha") : Scalar(int64_t{1});
                   return batched ? kiln::baddbmm(in[0], in[1], in[2], beta, alpha) : kiln::addmm(in[0], in[1], in[2], beta, alpha);
                 },
                 torch_fn(batched ? "torch.baddbmm" : "torch.addmm")});
  }
  // addmm_activation: act(self + mat1 @ mat2), self [m] (a linear's bias, what the backends fold
  // into their products' epilogues) or [n, m]; PyTorch's spelling of each activation composed
  // (torch._addmm_activation's gelu is erf on the CPU and tanh on cuBLASLt).
  t.push_back({"addmm_activation", 1, kReduces, [](GenCtx& c, Node& n) {
                 int a = c.pick([&](const GenValue& g) { return is_floating_point(g.dtype) && g.dims.size() == 2; });
                 if (a < 0) return false;
                 const ScalarType dt = c.vals[static_cast<size_t>(a)].dtype;
                 const Dims da = c.vals[static_cast<size_t>(a)].dims;
                 const auto m = same(c.rng.range(1, 4));
                 const Dims self = c.rng.chance(0.7) ? Dims{m} : Dims{da[0], m};
                 n.args = {c.add_input(dt, self), a, fresh(c, dt, Dims{da[1], m})};
                 n.attrs.set("activation", c.rng.pick(std::vector<std::string>{"none", "relu", "gelu_tanh"}));
                 return true;
               },
               [](const std::vector<Tensor>& in, const Attrs& a) { return kiln::addmm_activation(in[0], in[1], in[2], a.raw("activation")); },
               [](const std::vector<std::string>& o, const Attrs& a) {
                 const std::string sum = "torch.addmm(" + o[0] + ", " + o[1] + ", " + o[2] + ")";
                 if (a.raw("activation") == "relu") return "torch.relu(" + sum + ")";
                 if (a.raw("activation") == "gelu_tanh") return "torch.nn.functional.gelu(" + sum + ", approximate='tanh')";
                 return sum;
               }});
  // tril / triu of the trailing matrices, diagonal in [-2, 2].
  for (bool lower : {true, false}) {
    t.push_back({lower ? "tril" : "triu", 1, kExact, [](GenCtx& c, Node& n) {
                   int a = c.pick([](const GenValue& g) { return g.dims.size() >= 2; });
                   if (a < 0) return false;
                   n.args = {a};
                   if (c.rng.chance(0.6)) n.attrs.set("diagonal", std::to_string(c.rng.range(-2, 2)));
                   return true;
                 },
                 [lower](const std::vector<Tensor>& in, const Attrs& a) {
                   const int64_t k = a.has("diagonal") ? a.i("diagonal") : 0;
                   return lower ? kiln::tril(in[0], k) : kiln::triu(in[0], k);
                 },
                 torch_fn(lower ? "torch.tril" : "torch.triu")});
  }
  mat("bmm", 3, kiln::bmm);
  // conv1d on a fresh [2, 3, 5] input and [4, 3, 3] weight (oneDNN; f64: im2col + BLAS), padding 0 or 1.
  t.push_back({"conv1d", 2, kReduces, [](GenCtx& c, Node& n) {
                 const ScalarType dt = c.rng.chance(0.7) ? kFloat : kDouble;
                 n.args = {c.add_input(dt, Dims{same(2), same(3), same(5)}), fresh(c, dt, Dims{same(4), same(3), same(3)})};
                 if (c.rng.chance(0.5)) n.attrs.set("padding", "1");
                 return true;
               },
               [](const std::vector<Tensor>& in, const Attrs& a) {
                 return kiln::conv1d(in[0], in[1], std::nullopt, 1, a.has("padding") ? a.i("padding") : 0);
               },
               torch_fn("torch.nn.functional.conv1d")});
  mat("matmul", 0, kiln::matmul);
  t.push_back({"linear", 2, kReduces, [](GenCtx& c, Node& n) {
                 int a = c.pick([](const GenValue& g) { return is_floating_point(g.dtype) && !g.dims.empty(); });
                 if (a < 0) return false;
                 const auto k = c.dim(a, -1);
                 const ScalarType dt = c.vals[static_cast<size_t>(a)].dtype;
                 const auto m = same(c.rng.range(1, 4));
                 n.args = {a, c.add_input(dt, c.rng.chance(0.1) ? Dims{k} : Dims{m, k})};
                 const bool vec_w = c.vals[static_cast<size_t>(n.args[1])].dims.size() == 1;
                 // A 1-D weight with a bias is an error in PyTorch (and in kiln since this fuzzer
                 // found it accepted).
                 if (c.rng.chance(0.6)) n.args.push_back(c.add_input(dt, vec_w || c.rng.chance(0.2) ? Dims{} : Dims{m}));
                 return true;
               },
               [](const std::vector<Tensor>& in, const Attrs&) {
                 std::optional<Tensor> b;
                 if (in.size() > 2) b = in[2];
                 return kiln::linear(in[0], in[1], b);
               },
               torch_fn("torch.nn.functional.linear")});
  t.push_back({"gelu", 1, 0, [](GenCtx& c, Node& n) {
                 int a = pick_pref(c, Pref::Float);
                 if (a < 0) return false;
                 n.args = {a};
                 if (c.rng.chance(0.5)) n.attrs.set("approximate", c.rng.chance(0.5) ? "tanh" : "none");
                 return true;
               },
               [](const std::vector<Tensor>& in, const Attrs& a) {
                 return kiln::gelu(in[0], a.has("approximate") ? a.raw("approximate") : "none");
               },
               torch_fn("torch.nn.functional.gelu")});

  // Factories.
  t.push_back({"full", 1, kExact, [](GenCtx& c, Node& n) {
                 std::vector<int64_t> s;
                 for (const auto& p : c.random_dims(2)) s.push_back(p[0]);
                 n.attrs.set("size", fmt_ints(s));
                 ScalarType dt = c.random_dtype();
                 n.attrs.set("fill_value", c.scalar_for(dt));
                 if (c.rng.chance(0.5)) n.attrs.set("dtype", dtype_text(dt));
                 return true;
               },
               [](const std::vector<Tensor>&, const Attrs& a) { return kiln::full(a.ints("size"), a.scalar("fill_value"), opts_of(a)); },
               torch_fn("torch.full")});
  t.push_back({"arange", 1, kExact, [](GenCtx& c, Node& n) {
                 if (c.rng.chance(0.5)) {
                   n.attrs.set("end", std::to_string(c.rng.range(0, 6)));
                 } else {
                   n.attrs.set("start", c.rng.chance(0.5) ? "-2" : "0.5");
                   n.attrs.set("end", std::to_string(c.rng.range(1, 7)));
                   n.attrs.set("step", c.rng.chance(0.5) ? "1" : "0.75");
                 }
                 if (c.rng.chance(0.3)) n.attrs.set("dtype", dtype_text(c.rng.chance(0.5) ? kFloat : kLong));
                 return true;
               },
               [](const std::vector<Tensor>&, const Attrs& a) {
                 if (!a.has("start")) return kiln::arange(a.scalar("end"), opts_of(a));
                 return kiln::arange(a.scalar("start"), a.scalar("end"), a.scalar("step"), opts_of(a));
               },
               torch_fn("torch.arange")});
  t.push_back({"scalar_tensor", 1, kExact, [](GenCtx& c, Node& n) {
                 // Integer literals included: scalar_tensor(-1) is of the default dtype, as in
                 // PyTorch (kiln gave int64 until this fuzzer found it).
                 n.attrs.set("s", c.scalar_for(c.rng.chance(0.5) ? kFloat : kLong));
                 if (c.rng.chance(0.3)) n.attrs.set("dtype", dtype_text(c.random_dtype()));
                 return true;
               },
               [](const std::vector<Tensor>&, const Attrs& a) { return kiln::scalar_tensor(a.scalar("s"), opts_of(a)); },
               torch_fn("torch.scalar_tensor")});
  using LikeFn = Tensor (*)(const Tensor&, TensorOptions);
  for (auto [name, fn, flags] : std::vector<std::tuple<const char*, LikeFn, uint32_t>>{
           {"zeros_like", kiln::zeros_like, kExact}, {"ones_like", kiln::ones_like, kExact},
           {"rand_like", kiln::rand_like, kRandom}, {"randn_like", kiln::randn_like, kRandom}}) {
    const bool rnd = flags & kRandom;
    t.push_back({name, 1, flags, [rnd](GenCtx& c, Node& n) {
                   int a = rnd ? pick_pref(c, Pref::Float) : c.pick();
                   if (a < 0) return false;
                   n.args = {a};
                   if (c.rng.chance(0.3)) n.attrs.set("dtype", dtype_text(rnd ? kDouble : c.random_dtype()));
                   return true;
                 },
                 [fn](const std::vector<Tensor>& in, const Attrs& a) { return fn(in[0], opts_of(a)); },
                 torch_fn(std::string("torch.") + name)});
  }
  t.push_back({"full_like", 1, kExact, [](GenCtx& c, Node& n) {
                 int a = c.pick();
                 if (a < 0) return false;
                 n.args = {a};
                 n.attrs.set("fill_value", c.scalar_for(c.vals[static_cast<size_t>(a)].dtype));
                 return true;
               },
               [](const std::vector<Tensor>& in, const Attrs& a) { return kiln::full_like(in[0], a.scalar("fill_value")); },
               torch_fn("torch.full_like")});

  // In-place ops on a fresh copy: t = x.clone(); t.op_(y); the result is t.
  using Inplace = std::function<void(Tensor&, const std::vector<Tensor>&, const Attrs&)>;
  auto inplace = [&](const char* name, uint32_t flags, int scalar_ok, Inplace f) {  // 0 tensor, 1 either, 2 scalar
    t.push_back({name, 1, flags, [scalar_ok](GenCtx& c, Node& n) {
                   int a = c.pick();
                   if (a < 0) return false;
                   int b = scalar_ok == 2 ? -1 : second_operand(c, a, scalar_ok == 1);
                   n.args = {a};
                   if (b >= 0) n.args.push_back(b);
                   else n.attrs.set("other", c.scalar_for(c.vals[static_cast<size_t>(a)].dtype));
                   return true;
                 },
                 [f](const std::vector<Tensor>& in, const Attrs& a) {
                   Tensor r = in[0].clone();
                   f(r, in, a);
                   return r;
                 },
                 [name](const std::vector<std::string>& o, const Attrs& a) {
                   return o[0] + ".clone()." + name + "(" + (o.size() > 1 ? o[1] : py_value(a.raw("other"))) + ")";
                 }});
  };
  inplace("add_", 0, 1, [](Tensor& r, const std::vector<Tensor>& in, const Attrs& a) {
    if (in.size() > 1) r.add_(in[1]); else r.add_(a.scalar("other"));
  });
  inplace("mul_", 0, 1, [](Tensor& r, const std::vector<Tensor>& in, const Attrs& a) {
    if (in.size() > 1) r.mul_(in[1]); else r.mul_(a.scalar("other"));
  });
  inplace("sub_", 0, 1, [](Tensor& r, const std::vector<Tensor>& in, const Attrs& a) {
    if (in.size() > 1) r.sub_(in[1]); else r.sub_(a.scalar("other"));
  });
  inplace("copy_", kExact, 0, [](Tensor& r, const std::vector<Tensor>& in, const Attrs&) { r.copy_(in[1]); });
  inplace("fill_", kExact, 2, [](Tensor& r, const std::vector<Tensor>&, const Attrs& a) { r.fill_(a.scalar("other")); });
  // A write through a view of the fresh copy: t.narrow(d, s, l).copy_(y). Weight 0 (never
  // generated, still parsed): tracing refuses in-place updates of views by design (kiln::Error
  // "in-place update of a view ... cannot be recorded") while eager allows them.
  t.push_back({"narrow_copy_", 0, kExact, [](GenCtx& c, Node& n) {
                 int a = c.pick([](const GenValue& g) { return !g.dims.empty(); });
                 if (a < 0) return false;
                 int64_t r = c.rank(a), d = random_dim(c, r), m = c.min_size(a, nn_dim(d, r));
                 int64_t s = c.rng.range(0, m), l = c.rng.range(0, m - s);
                 Dims dims = c.vals[static_cast<size_t>(a)].dims;
                 dims[static_cast<size_t>(nn_dim(d, r))] = same(l);
                 n.args = {a, c.broadcast_input(dims, c.rng.chance(0.7) ? c.vals[static_cast<size_t>(a)].dtype : c.random_dtype())};
                 n.attrs.set("dim", std::to_string(d));
                 n.attrs.set("start", std::to_string(s));
                 n.attrs.set("length", std::to_string(l));
                 return true;
               },
               [](const std::vector<Tensor>& in, const Attrs& a) {
                 Tensor r = in[0].clone();
                 r.narrow(a.i("dim"), a.i("start"), a.i("length")).copy_(in[1]);
                 return r;
               },
               [](const std::vector<std::string>& o, const Attrs& a) {
                 return "(lambda t: (t.narrow(" + a.raw("dim") + ", " + a.raw("start") + ", " + a.raw("length") + ").copy_(" + o[1] +
                        "), t)[1])(" + o[0] + ".clone())";
               }});
}

const std::vector<OpSpec>& op_table() {
  static const std::vector<OpSpec> table = [] {
    std::vector<OpSpec> t;
    add_pointwise_ops(t);
    add_reduction_ops(t);
    add_shape_ops(t);
    add_nn_ops(t);
    return t;
  }();
  return table;
}

const OpSpec* find_op(std::string_view name) {
  for (const OpSpec& s : op_table())
    if (s.name == name) return &s;
  return nullptr;
}

}  // namespace kiln::fuzz
