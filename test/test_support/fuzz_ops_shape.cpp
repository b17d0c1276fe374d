// kiln/test/test_support/fuzz_ops_shape.cpp — the fuzzer's views, joining, padding and
// indexing ops: one OpSpec row each (fuzz_program.h). Attributes that depend on sizes are
// chosen valid for both size variants (GenValue::dims holds both).
#include "test_support/fuzz_ops.h"

#include <algorithm>

namespace kiln::fuzz {

namespace {

int64_t numel_of(const Dims& d, int v) {
  int64_t n = 1;
  for (const auto& p : d) n *= p[static_cast<size_t>(v)];
  return n;
}
// A small k dividing both variants' element counts (1 if none).
int64_t common_factor(GenCtx& c, int64_t n0, int64_t n1) {
  std::vector<int64_t> ks;
  for (int64_t k : {2, 3, 4, 6})
    if (n0 % k == 0 && n1 % k == 0) ks.push_back(k);
  return ks.empty() || c.rng.chance(0.1) ? 1 : c.rng.pick(ks);
}
int64_t norm_dim(int64_t d, int64_t r) { return d < 0 ? d + r : d; }
std::string ops_list(const std::vector<std::string>& o, size_t from = 0) {
  std::string s = "[";
  for (size_t i = from; i < o.size(); ++i) s += (i > from ? ", " : "") + o[i];
  return s + "]";
}
std::vector<Tensor> tail(const std::vector<Tensor>& in, size_t from = 0) { return {in.begin() + static_cast<long>(from), in.end()}; }
GenFn with_rank(int64_t min_rank, std::function<bool(GenCtx&, Node&, int)> f) {
  return [=](GenCtx& c, Node& n) {
    int a = c.pick([&](const GenValue& g) { return static_cast<int64_t>(g.dims.size()) >= min_rank; });
    if (a < 0) return false;
    n.args = {a};
    return f(c, n, a);
  };
}
RunFn method(std::function<Tensor(const Tensor&, const Attrs&)> f) {
  return [f](const std::vector<Tensor>& in, const Attrs& a) { return f(in[0], a); };
}
TorchFn py(std::function<std::string(const std::vector<std::string>&, const Attrs&)> f) { return f; }

}  // namespace

void add_shape_ops(std::vector<OpSpec>& t) {
  const uint32_t E = kExact;
  for (const char* name : {"reshape", "view"}) {
    const bool view = std::string(name) == "view";
    t.push_back({name, view ? 1 : 3, E, with_rank(0, [](GenCtx& c, Node& n, int a) {
                   const Dims& d = c.vals[static_cast<size_t>(a)].dims;
                   int64_t k = common_factor(c, numel_of(d, 0), numel_of(d, 1));
                   int64_t k2 = common_factor(c, numel_of(d, 0) / k, numel_of(d, 1) / k);
                   double x = c.rng.real();
                   n.attrs.set("shape", x < 0.2 ? "[-1]" : x < 0.5 ? fmt_ints({-1, k}) : x < 0.7 ? fmt_ints({k, -1}) : fmt_ints({k2, -1, k}));
                   return true;
                 }),
                 method([view](const Tensor& x, const Attrs& a) { return view ? x.view(a.ints("shape")) : x.reshape(a.ints("shape")); }),
                 py([name](const std::vector<std::string>& o, const Attrs& a) { return o[0] + "." + name + "(" + a.raw("shape") + ")"; })});
  }
  t.push_back({"transpose", 2, E, with_rank(1, [](GenCtx& c, Node& n, int a) {
                 n.attrs.set("dim0", std::to_string(random_dim(c, c.rank(a))));
                 n.attrs.set("dim1", std::to_string(random_dim(c, c.rank(a))));
                 return true;
               }),
               method([](const Tensor& x, const Attrs& a) { return x.transpose(a.i("dim0"), a.i("dim1")); }),
               torch_fn("torch.transpose")});
  t.push_back({"t", 1, E, with_rank(0, [](GenCtx& c, Node&, int a) { return c.rank(a) <= 2; }),
               method([](const Tensor& x, const Attrs&) { return x.t(); }),
               py([](const std::vector<std::string>& o, const Attrs&) { return o[0] + ".t()"; })});
  t.push_back({"permute", 2, E, with_rank(1, [](GenCtx& c, Node& n, int a) {
                 std::vector<int64_t> p = random_dims_subset(c, c.rank(a), true);
                 std::vector<int64_t> full;
                 for (int64_t d = 0; d < c.rank(a); ++d) full.push_back(d);
                 for (int64_t k = c.rank(a) - 1; k > 0; --k) std::swap(full[static_cast<size_t>(k)], full[static_cast<size_t>(c.rng.range(0, k))]);
                 n.attrs.set("dims", fmt_ints(full));
                 (void)p;
                 return true;
               }),
               method([](const Tensor& x, const Attrs& a) { return x.permute(a.ints("dims")); }),
               torch_fn("torch.permute")});
  t.push_back({"movedim", 1, E, with_rank(1, [](GenCtx& c, Node& n, int a) {
                 n.attrs.set("source", std::to_string(random_dim(c, c.rank(a))));
                 n.attrs.set("destination", std::to_string(random_dim(c, c.rank(a))));
                 return true;
               }),
               method([](const Tensor& x, const Attrs& a) { return x.movedim(a.i("source"), a.i("destination")); }),
               torch_fn("torch.movedim")});
  t.push_back({"slice", 3, E, with_rank(1, [](GenCtx& c, Node& n, int a) {
                 n.attrs.set("dim", std::to_string(random_dim(c, c.rank(a))));
                 n.attrs.set("start", std::to_string(c.rng.range(-4, 3)));
                 n.attrs.set("end", std::to_string(c.rng.chance(0.3) ? 100 : c.rng.range(-3, 6)));
                 n.attrs.set("step", std::to_string(c.rng.range(1, 3)));
                 return true;
               }),
               method([](const Tensor& x, const Attrs& a) { return x.slice(a.i("dim"), a.i("start"), a.i("end"), a.i("step")); }),
               py([](const std::vector<std::string>& o, const Attrs& a) {
                 return "torch.ops.aten.slice.Tensor(" + o[0] + ", " + a.raw("dim") + ", " + a.raw("start") + ", " + a.raw("end") +
                        ", " + a.raw("step") + ")";
               })});
  t.push_back({"select", 2, E, with_rank(1, [](GenCtx& c, Node& n, int a) {
                 int64_t d = random_dim(c, c.rank(a)), m = c.min_size(a, d);
                 if (m < 1) return false;
                 n.attrs.set("dim", std::to_string(d));
                 n.attrs.set("index", std::to_string(c.rng.range(-m, m - 1)));
                 return true;
               }),
               method([](const Tensor& x, const Attrs& a) { return x.select(a.i("dim"), a.i("index")); }),
               torch_fn("torch.select")});
  t.push_back({"narrow", 2, E, with_rank(1, [](GenCtx& c, Node& n, int a) {
                 int64_t d = random_dim(c, c.rank(a)), m = c.min_size(a, d);
                 int64_t start = c.rng.range(0, m), len = c.rng.range(0, m - start);
                 n.attrs.set("dim", std::to_string(d));
                 n.attrs.set("start", std::to_string(start));
                 n.attrs.set("length", std::to_string(len));
                 return true;
               }),
               method([](const Tensor& x, const Attrs& a) { return x.narrow(a.i("dim"), a.i("start"), a.i("length")); }),
               torch_fn("torch.narrow")});
  t.push_back({"expand", 2, E, with_rank(0, [](GenCtx& c, Node& n, int a) {
                 std::vector<int64_t> s;
                 if (c.rng.chance(0.3)) s.push_back(c.rng.range(1, 3));
                 for (const auto& p : c.vals[static_cast<size_t>(a)].dims)
                   s.push_back(p == std::array<int64_t, 2>{1, 1} && c.rng.chance(0.7) ? c.rng.range(0, 3) : -1);
                 n.attrs.set("size", fmt_ints(s));
                 return true;
               }),
               method([](const Tensor& x, const Attrs& a) { return x.expand(a.ints("size")); }),
               py([](const std::vector<std::string>& o, const Attrs& a) { return o[0] + ".expand(" + a.raw("size") + ")"; })});
  t.push_back({"expand_as", 1, E,
               [](GenCtx& c, Node& n) {
                 int b = c.pick();
                 if (b < 0) return false;
                 Dims db = c.vals[static_cast<size_t>(b)].dims;
                 int a = c.pick([&](const GenValue& g) { return g.dims.size() <= db.size() && broadcastable(g.dims, db); });
                 if (a < 0 || c.rng.chance(0.3)) {
                   Dims da;
                   for (const auto& p : db) da.push_back(c.rng.chance(0.5) ? std::array<int64_t, 2>{1, 1} : p);
                   a = c.add_input(c.random_dtype(), da);
                 }
                 n.args = {a, b};
                 return true;
               },
               [](const std::vector<Tensor>& in, const Attrs&) { return in[0].expand_as(in[1]); },
               py([](const std::vector<std::string>& o, const Attrs&) { return o[0] + ".expand_as(" + o[1] + ")"; })});
  t.push_back({"squeeze", 2, E, with_rank(0, [](GenCtx& c, Node& n, int a) {
                 double x = c.rng.real();
                 if (c.rank(a) == 0 || x < 0.3) return true;
                 if (x < 0.7) n.attrs.set("dim", std::to_string(random_dim(c, c.rank(a))));
                 else n.attrs.set("dims", fmt_ints(random_dims_subset(c, c.rank(a), false)));
                 return true;
               }),
               method([](const Tensor& x, const Attrs& a) {
                 if (a.has("dim")) return x.squeeze(a.i("dim"));
                 if (a.has("dims")) return x.squeeze(IntArrayRef(a.ints("dims")));
                 return x.squeeze();
               }),
               py([](const std::vector<std::string>& o, const Attrs& a) {
                 if (a.has("dim")) return o[0] + ".squeeze(" + a.raw("dim") + ")";
                 if (a.has("dims")) return o[0] + ".squeeze(tuple(" + a.raw("dims") + "))";
                 return o[0] + ".squeeze()";
               })});
  t.push_back({"unsqueeze", 2, E, with_rank(0, [](GenCtx& c, Node& n, int a) {
                 n.attrs.set("dim", std::to_string(c.rng.range(-c.rank(a) - 1, c.rank(a))));
                 return true;
               }),
               method([](const Tensor& x, const Attrs& a) { return x.unsqueeze(a.i("dim")); }),
               torch_fn("torch.unsqueeze")});
  t.push_back({"diagonal", 1, E, with_rank(2, [](GenCtx& c, Node& n, int a) {
                 int64_t r = c.rank(a), d1 = random_dim(c, r), d2 = random_dim(c, r);
                 if (norm_dim(d1, r) == norm_dim(d2, r) && c.rng.chance(0.9)) return false;
                 n.attrs.set("offset", std::to_string(c.rng.range(-2, 2)));
                 n.attrs.set("dim1", std::to_string(d1));
                 n.attrs.set("dim2", std::to_string(d2));
                 return true;
               }),
               method([](const Tensor& x, const Attrs& a) { return x.diagonal(a.i("offset"), a.i("dim1"), a.i("dim2")); }),
               torch_fn("torch.diagonal")});
  t.push_back({"flatten", 1, E, with_rank(0, [](GenCtx& c, Node& n, int a) {
                 int64_t r = std::max<int64_t>(1, c.rank(a));
                 int64_t s = c.rng.range(0, r - 1), e = c.rng.range(s, r - 1);
                 n.attrs.set("start_dim", std::to_string(s));
                 n.attrs.set("end_dim", std::to_string(e));
                 return true;
               }),
               method([](const Tensor& x, const Attrs& a) { return x.flatten(a.i("start_dim"), a.i("end_dim")); }),
               torch_fn("torch.flatten")});
  t.push_back({"unflatten", 1, E, with_rank(1, [](GenCtx& c, Node& n, int a) {
                 int64_t d = random_dim(c, c.rank(a));
                 auto p = c.dim(a, d);
                 n.attrs.set("dim", std::to_string(d));
                 n.attrs.set("sizes", fmt_ints({-1, common_factor(c, p[0], p[1])}));
                 return true;
               }),
               method([](const Tensor& x, const Attrs& a) { return x.unflatten(a.i("dim"), a.ints("sizes")); }),
               py([](const std::vector<std::string>& o, const Attrs& a) {
                 return o[0] + ".unflatten(" + a.raw("dim") + ", " + a.raw("sizes") + ")";
               })});
  // as_strided on a fresh contiguous copy (eager as_strided addresses storage; the prim the
  // input's row-major elements: the two agree on a fresh contiguous tensor).
  t.push_back({"as_strided", 1, E, with_rank(0, [](GenCtx& c, Node& n, int a) {
                 const Dims& d = c.vals[static_cast<size_t>(a)].dims;
                 int64_t m = std::min(numel_of(d, 0), numel_of(d, 1));
                 if (m < 1) return false;
                 int64_t s0 = c.rng.range(0, 2), rows = c.rng.range(1, 3), cols = c.rng.range(1, 3);
                 int64_t off = c.rng.range(0, 1);
                 if (off + (rows - 1) * s0 + (cols - 1) >= m) rows = 1, cols = 1, off = 0;
                 n.attrs.set("size", fmt_ints({rows, cols}));
                 n.attrs.set("stride", fmt_ints({s0, 1}));
                 n.attrs.set("storage_offset", std::to_string(off));
                 return true;
               }),
               method([](const Tensor& x, const Attrs& a) {
                 return x.contiguous().clone().as_strided(a.ints("size"), a.ints("stride"), a.i("storage_offset"));
               }),
               py([](const std::vector<std::string>& o, const Attrs& a) {
                 return o[0] + ".contiguous().clone().as_strided(" + a.raw("size") + ", " + a.raw("stride") + ", " +
                        a.raw("storage_offset") + ")";
               })});

  // cat / stack of a and 1-2 fresh inputs shaped to match.
  for (bool stk : {false, true}) {
    t.push_back({stk ? "stack" : "cat", 2, E, with_rank(stk ? 0 : 1, [stk](GenCtx& c, Node& n, int a) {
                   int64_t r = c.rank(a);
                   int64_t d = stk ? c.rng.range(-r - 1, r) : random_dim(c, r);
                   n.attrs.set("dim", std::to_string(d));
                   int k = static_cast<int>(c.rng.range(1, 2));
                   for (int i = 0; i < k; ++i) {
                     Dims dims = c.vals[static_cast<size_t>(a)].dims;
                     if (!stk && c.rng.chance(0.7)) {
                       int64_t s = c.rng.range(0, 3);
                       dims[static_cast<size_t>(norm_dim(d, r))] = {s, s};
                     }
                     ScalarType dt = c.rng.chance(0.8) ? c.vals[static_cast<size_t>(a)].dtype : c.random_dtype();
                     n.args.push_back(c.add_input(dt, dims));
                   }
                   return true;
                 }),
                 [stk](const std::vector<Tensor>& in, const Attrs& a) {
                   return stk ? kiln::stack(in, a.i("dim")) : kiln::cat(in, a.i("dim"));
                 },
                 py([stk](const std::vector<std::string>& o, const Attrs& a) {
                   return std::string(stk ? "torch.stack(" : "torch.cat(") + ops_list(o) + ", " + a.raw("dim") + ")";
                 })});
  }
  t.push_back({"constant_pad_nd", 2, E, with_rank(1, [](GenCtx& c, Node& n, int a) {
                 int64_t r = c.rank(a), k = c.rng.range(1, std::min<int64_t>(r, 3));
                 std::vector<int64_t> pad;
                 for (int64_t i = 0; i < k; ++i) {
                   int64_t m = c.min_size(a, r - 1 - i);
                   int64_t lo = c.rng.range(-1, 2), hi = c.rng.range(-1, 2);
                   if (m + lo + hi < 0) lo = hi = 0;
                   pad.push_back(lo);
                   pad.push_back(hi);
                 }
                 n.attrs.set("pad", fmt_ints(pad));
                 n.attrs.set("value", c.scalar_for(c.vals[static_cast<size_t>(a)].dtype));
                 return true;
               }),
               method([](const Tensor& x, const Attrs& a) { return kiln::constant_pad_nd(x, a.ints("pad"), a.scalar("value")); }),
               torch_fn("torch.constant_pad_nd")});
  (void)tail;
}

}  // namespace kiln::fuzz
