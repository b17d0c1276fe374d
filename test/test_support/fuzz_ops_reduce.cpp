// kiln/test/test_support/fuzz_ops_reduce.cpp — the fuzzer's reductions, scans and row-wise nn
// ops (softmax, norms, var, cross_entropy): one OpSpec row each (fuzz_program.h).
#include "test_support/fuzz_ops.h"

namespace kiln::fuzz {

namespace {

std::optional<ScalarType> opt_dtype(const Attrs& a) {
  if (a.has("dtype")) return a.dt("dtype");
  return std::nullopt;
}

// Reduction over `dims` (absent: every dim) with keepdim and optional dtype.
GenFn g_reduce(Pref p, bool list, bool allow_dtype, bool allow_all = true) {
  return [=](GenCtx& c, Node& n) {
    int a = pick_pref(c, p);
    if (a < 0) return false;
    n.args = {a};
    int64_t r = c.rank(a);
    if (r > 0 && (!allow_all || c.rng.chance(0.8))) {
      if (list) n.attrs.set("dim", fmt_ints(random_dims_subset(c, r, true)));
      else n.attrs.set("dim", std::to_string(random_dim(c, r)));
      n.attrs.set("keepdim", c.rng.chance(0.4) ? "True" : "False");
    } else if (r == 0 && !allow_all) {
      n.attrs.set("dim", list ? "[0]" : "0");
    }
    if (allow_dtype && c.rng.chance(0.15)) n.attrs.set("dtype", dtype_text(c.random_dtype()));
    return true;
  };
}

}  // namespace

void add_reduction_ops(std::vector<OpSpec>& t) {
  const uint32_t R = kReduces;
  t.push_back({"sum", 4, R, g_reduce(Pref::Any, true, true),
               [](const std::vector<Tensor>& in, const Attrs& a) {
                 if (!a.has("dim")) return kiln::sum(in[0], opt_dtype(a));
                 return kiln::sum(in[0], a.ints("dim"), a.b("keepdim"), opt_dtype(a));
               },
               torch_fn("torch.sum")});
  t.push_back({"prod", 1, R | kFragile, g_reduce(Pref::Any, false, true),
               [](const std::vector<Tensor>& in, const Attrs& a) {
                 if (!a.has("dim")) return kiln::prod(in[0], opt_dtype(a));
                 return kiln::prod(in[0], a.i("dim"), a.b("keepdim"), opt_dtype(a));
               },
               torch_fn("torch.prod")});
  t.push_back({"mean", 2, R, g_reduce(Pref::Float, true, true),
               [](const std::vector<Tensor>& in, const Attrs& a) {
                 if (!a.has("dim")) return kiln::mean(in[0], opt_dtype(a));
                 return kiln::mean(in[0], a.ints("dim"), a.b("keepdim"), opt_dtype(a));
               },
               torch_fn("torch.mean")});
  t.push_back({"logsumexp", 1, R, g_reduce(Pref::Any, true, false, false),
               [](const std::vector<Tensor>& in, const Attrs& a) {
                 return kiln::logsumexp(in[0], a.ints("dim"), a.has("keepdim") && a.b("keepdim"));
               },
               torch_fn("torch.logsumexp")});
  for (bool mx : {true, false}) {
    t.push_back({mx ? "amax" : "amin", 2, kExact, g_reduce(Pref::Any, true, false),
                 [mx](const std::vector<Tensor>& in, const Attrs& a) {
                   std::vector<int64_t> d = a.has("dim") ? a.ints("dim") : std::vector<int64_t>{};
                   bool k = a.has("keepdim") && a.b("keepdim");
                   return mx ? kiln::amax(in[0], d, k) : kiln::amin(in[0], d, k);
                 },
                 torch_fn(mx ? "torch.amax" : "torch.amin")});
    t.push_back({mx ? "argmax" : "argmin", 2, kExact | kFragile, g_reduce(Pref::Any, false, false),
                 [mx](const std::vector<Tensor>& in, const Attrs& a) {
                   std::optional<int64_t> d;
                   if (a.has("dim")) d = a.i("dim");
                   bool k = a.has("keepdim") && a.b("keepdim");
                   return mx ? kiln::argmax(in[0], d, k) : kiln::argmin(in[0], d, k);
                 },
                 torch_fn(mx ? "torch.argmax" : "torch.argmin")});
    t.push_back({mx ? "any" : "all", 1, kExact | kFragile, g_reduce(Pref::Any, false, false),
                 [mx](const std::vector<Tensor>& in, const Attrs& a) {
                   if (!a.has("dim")) return mx ? kiln::any(in[0]) : kiln::all(in[0]);
                   return mx ? kiln::any(in[0], a.i("dim"), a.b("keepdim")) : kiln::all(in[0], a.i("dim"), a.b("keepdim"));
                 },
                 torch_fn(mx ? "torch.any" : "torch.all")});
  }
  for (bool s : {true, false}) {
    t.push_back({s ? "cumsum" : "cumprod", 2, R | (s ? 0u : kFragile), g_reduce(Pref::Any, false, true, false),
                 [s](const std::vector<Tensor>& in, const Attrs& a) {
                   return s ? kiln::cumsum(in[0], a.i("dim"), opt_dtype(a)) : kiln::cumprod(in[0], a.i("dim"), opt_dtype(a));
                 },
                 [s](const std::vector<std::string>& o, const Attrs& a) {
                   return std::string(s ? "torch.cumsum(" : "torch.cumprod(") + o[0] + py_kwargs(a, {"keepdim"}) + ")";
                 }});
  }
  // Running extremes (values; the indices are built from the same prim) and logcumsumexp.
  for (bool mx : {true, false}) {
    t.push_back({mx ? "cummax" : "cummin", 1, kExact, g_reduce(Pref::Any, false, false, false),
                 [mx](const std::vector<Tensor>& in, const Attrs& a) {
                   return std::get<0>(mx ? kiln::cummax(in[0], a.i("dim")) : kiln::cummin(in[0], a.i("dim")));
                 },
                 [mx](const std::vector<std::string>& o, const Attrs& a) {
                   return std::string(mx ? "torch.cummax(" : "torch.cummin(") + o[0] + py_kwargs(a, {"keepdim"}) + ")[0]";
                 }});
  }
  t.push_back({"logcumsumexp", 1, R, g_reduce(Pref::Float, false, false, false),
               [](const std::vector<Tensor>& in, const Attrs& a) { return kiln::logcumsumexp(in[0], a.i("dim")); },
               [](const std::vector<std::string>& o, const Attrs& a) {
                 return "torch.logcumsumexp(" + o[0] + py_kwargs(a, {"keepdim"}) + ")";
               }});
  // Sorting: argsort is stable in kiln; PyTorch's is only when asked, so the expression asks.
  t.push_back({"argsort", 1, kExact | kFragile,
               [](GenCtx& c, Node& n) {
                 if (!g_reduce(Pref::NonBool, false, false, false)(c, n)) return false;
                 if (c.rng.chance(0.5)) n.attrs.set("descending", "True");
                 return true;
               },
               [](const std::vector<Tensor>& in, const Attrs& a) {
                 return kiln::argsort(in[0], a.i("dim"), a.has("descending") && a.b("descending"));
               },
               [](const std::vector<std::string>& o, const Attrs& a) {
                 return "torch.argsort(" + o[0] + py_kwargs(a, {"keepdim"}) + ", stable=True)";
               }});
  t.push_back({"var", 2, R | kFragile,
               [](GenCtx& c, Node& n) {
                 int a = pick_pref(c, Pref::Float);
                 if (a < 0) return false;
                 n.args = {a};
                 if (c.rank(a) > 0 && c.rng.chance(0.8)) {
                   n.attrs.set("dim", fmt_ints(random_dims_subset(c, c.rank(a), true)));
                   if (c.rng.chance(0.6)) n.attrs.set("correction", std::to_string(c.rng.range(0, 1)));
                   n.attrs.set("keepdim", c.rng.chance(0.4) ? "True" : "False");
                 }
                 return true;
               },
               [](const std::vector<Tensor>& in, const Attrs& a) {
                 if (!a.has("dim")) return kiln::var(in[0]);
                 std::optional<Scalar> corr;
                 if (a.has("correction")) corr = a.scalar("correction");
                 return kiln::var(in[0], a.ints("dim"), corr, a.b("keepdim"));
               },
               torch_fn("torch.var")});
  for (bool lg : {false, true}) {
    t.push_back({lg ? "log_softmax" : "softmax", 2, R, g_reduce(Pref::Float, false, true, false),
                 [lg](const std::vector<Tensor>& in, const Attrs& a) {
                   return lg ? kiln::log_softmax(in[0], a.i("dim"), opt_dtype(a)) : kiln::softmax(in[0], a.i("dim"), opt_dtype(a));
                 },
                 [lg](const std::vector<std::string>& o, const Attrs& a) {
                   return std::string(lg ? "torch.log_softmax(" : "torch.softmax(") + o[0] + ", " + a.raw("dim") +
                          py_kwargs(a, {"dim", "keepdim"}) + ")";
                 }});
  }
  // layer_norm / rms_norm over the last k dims, read off the input (x.sizes()), with optional
  // affine parameters (usually the input's dtype, sometimes another).
  for (bool rms : {false, true}) {
    t.push_back({rms ? "rms_norm" : "layer_norm", 2, R | kFragile,
                 [rms](GenCtx& c, Node& n) {
                   int a = pick_pref(c, Pref::Float);
                   if (a < 0 || c.rank(a) == 0) return false;
                   int64_t k = c.rng.range(1, std::min<int64_t>(2, c.rank(a)));
                   n.args = {a};
                   n.attrs.set("ndims", std::to_string(k));
                   Dims tail(c.vals[static_cast<size_t>(a)].dims.end() - k, c.vals[static_cast<size_t>(a)].dims.end());
                   ScalarType dt = c.rng.chance(0.85) ? c.vals[static_cast<size_t>(a)].dtype : c.random_dtype();
                   int params = static_cast<int>(c.rng.range(0, rms ? 1 : 2));
                   for (int i = 0; i < params; ++i) n.args.push_back(c.add_input(dt, tail));
                   if (c.rng.chance(0.3)) n.attrs.set("eps", fmt_double(c.rng.chance(0.5) ? 1e-3 : 0.1));
                   return true;
                 },
                 [rms](const std::vector<Tensor>& in, const Attrs& a) {
                   int64_t k = a.i("ndims");
                   std::vector<int64_t> shape(in[0].sizes().end() - k, in[0].sizes().end());
                   std::optional<Tensor> w, b;
                   if (in.size() > 1) w = in[1];
                   if (in.size() > 2) b = in[2];
                   if (rms) {
                     std::optional<double> eps;
                     if (a.has("eps")) eps = a.f("eps");
                     return kiln::rms_norm(in[0], shape, w, eps);
                   }
                   return kiln::layer_norm(in[0], shape, w, b, a.has("eps") ? a.f("eps") : 1e-5);
                 },
                 [rms](const std::vector<std::string>& o, const Attrs& a) {
                   std::string s = std::string(rms ? "torch.nn.functional.rms_norm(" : "torch.nn.functional.layer_norm(") +
                                   o[0] + ", " + o[0] + ".shape[-" + a.raw("ndims") + ":]";
                   s += ", " + (o.size() > 1 ? o[1] : "None");
                   if (!rms) s += ", " + (o.size() > 2 ? o[2] : "None");
                   if (a.has("eps")) s += ", eps=" + a.raw("eps");
                   return s + ")";
                 }});
  }
  // cross_entropy: input [N, C] (or [C]), class-index targets with some ignore_index (-100).
  t.push_back({"cross_entropy", 2, R | kFragile,
               [](GenCtx& c, Node& n) {
                 int a = c.pick([](const GenValue& g) {
                   return is_floating_point(g.dtype) && (g.dims.size() == 1 || g.dims.size() == 2);
                 });
                 if (a < 0) {
                   const int64_t rows = c.rng.range(1, 4), cls = c.rng.range(2, 5);
                   a = c.add_input(kFloat, {{rows, rows}, {cls, cls}});
                 }
                 const Dims adims = c.vals[static_cast<size_t>(a)].dims;
                 const ScalarType adt = c.vals[static_cast<size_t>(a)].dtype;
                 const bool batched = adims.size() == 2;
                 const auto C = adims[batched ? 1 : 0];
                 const int64_t cmin = std::min(C[0], C[1]);
                 if (cmin < 1) return false;
                 Dims tdims;
                 if (batched) tdims.push_back(adims[0]);
                 int tgt = c.add_input(kLong, tdims, "tgt:" + std::to_string(cmin), Layout::Contiguous);
                 n.args = {a, tgt};
                 if (c.rng.chance(0.3)) n.args.push_back(c.add_input(adt, {C}, "pos"));
                 static const std::vector<std::string> red = {"mean", "sum", "none"};
                 n.attrs.set("reduction", c.rng.pick(red));
                 if (c.rng.chance(0.3)) n.attrs.set("label_smoothing", fmt_double(0.25));
                 return true;
               },
               [](const std::vector<Tensor>& in, const Attrs& a) {
                 std::optional<Tensor> w;
                 if (in.size() > 2) w = in[2];
                 return kiln::cross_entropy(in[0], in[1], w, a.raw("reduction"), -100,
                                            a.has("label_smoothing") ? a.f("label_smoothing") : 0.0);
               },
               [](const std::vector<std::string>& o, const Attrs& a) {
                 return "torch.nn.functional.cross_entropy(" + o[0] + ", " + o[1] +
                        (o.size() > 2 ? ", weight=" + o[2] : std::string()) + py_kwargs(a) + ")";
               }});
  // The trapezoidal rule along a dim (frontend/ops_moments_statistics.cpp), with a spacing or
  // the running integral; integer samples integrate to the default float dtype.
  for (bool cumulative : {false, true}) {
    t.push_back({cumulative ? "cumulative_trapezoid" : "trapezoid", 1, R,
                 [](GenCtx& c, Node& n) {
                   int a = pick_pref(c, Pref::NonBool);
                   if (a < 0 || c.rank(a) == 0) return false;
                   n.args = {a};
                   n.attrs.set("dim", std::to_string(random_dim(c, c.rank(a))));
                   if (c.rng.chance(0.5)) n.attrs.set("dx", fmt_double(c.rng.chance(0.5) ? 0.5 : -2.0));
                   return true;
                 },
                 [cumulative](const std::vector<Tensor>& in, const Attrs& a) {
                   const Scalar dx = a.has("dx") ? a.f("dx") : 1.0;
                   return cumulative ? kiln::cumulative_trapezoid(in[0], dx, a.i("dim")) : kiln::trapezoid(in[0], dx, a.i("dim"));
                 },
                 torch_fn(cumulative ? "torch.cumulative_trapezoid" : "torch.trapezoid")});
  }
  // torch.nn's losses of an input and targets of its shape (frontend/ops_linear_losses.cpp).
  // Smooth ones compare values in every mode; those with kinks (|x - t|, margins, clamps) are
  // fragile. binary_cross_entropy reads fresh inputs and targets in (0, 1), since a value outside
  // raises eagerly and is NaN once traced, as on PyTorch's GPU.
  for (bool kinked : {false, true}) {
    t.push_back({kinked ? "kinked_loss" : "smooth_loss", 2, R | (kinked ? kFragile : 0u),
                 [kinked](GenCtx& c, Node& n) {
                   static const std::vector<std::string> smooth = {"mse_loss", "soft_margin_loss",
                                                                   "binary_cross_entropy_with_logits", "binary_cross_entropy",
                                                                   "kl_div", "poisson_nll_loss", "logsigmoid"};
                   static const std::vector<std::string> kinks = {"l1_loss", "smooth_l1_loss", "huber_loss",
                                                                  "hinge_embedding_loss", "margin_ranking_loss"};
                   const std::string fn = c.rng.pick(kinked ? kinks : smooth);
                   int a = c.pick([](const GenValue& g) { return is_floating_point(g.dtype); });
                   if (fn == "binary_cross_entropy") {
                     const ScalarType dt = a >= 0 ? c.vals[static_cast<size_t>(a)].dtype : kFloat;
                     a = c.add_input(dt, a >= 0 ? c.vals[static_cast<size_t>(a)].dims : c.random_dims(), "unit");
                   }
                   if (a < 0) return false;
                   const Dims adims = c.vals[static_cast<size_t>(a)].dims;
                   const ScalarType adt = c.vals[static_cast<size_t>(a)].dtype;
                   n.args = {a};
                   n.attrs.set("fn", fn);
                   if (fn == "logsigmoid") return true;
                   // Targets: the input's dtype, sometimes f32 or f64 (promoted where PyTorch promotes).
                   auto target = [&](std::string vals) {
                     const ScalarType dt = fn == "binary_cross_entropy" || c.rng.chance(0.85) ? adt : (c.rng.chance(0.5) ? kFloat : kDouble);
                     return c.add_input(dt, adims, std::move(vals));
                   };
                   if (fn == "margin_ranking_loss") n.args.push_back(target(""));
                   n.args.push_back(target(fn == "binary_cross_entropy" ? "unit" : fn == "kl_div" || fn == "poisson_nll_loss" ? "pos" : ""));
                   static const std::vector<std::string> red = {"mean", "sum", "none"};
                   n.attrs.set("reduction", c.rng.pick(red));
                   if (fn == "smooth_l1_loss" && c.rng.chance(0.5)) n.attrs.set("beta", fmt_double(c.rng.chance(0.5) ? 0.5 : 2.0));
                   if (fn == "huber_loss" && c.rng.chance(0.5)) n.attrs.set("delta", fmt_double(c.rng.chance(0.5) ? 0.5 : 2.0));
                   if ((fn == "hinge_embedding_loss" || fn == "margin_ranking_loss") && c.rng.chance(0.5))
                     n.attrs.set("margin", fmt_double(0.5));
                   if (fn == "kl_div" && c.rng.chance(0.5)) n.attrs.set("log_target", "True");
                   if (fn == "poisson_nll_loss") {
                     if (c.rng.chance(0.3)) n.attrs.set("log_input", "False");
                     if (c.rng.chance(0.3)) n.attrs.set("full", "True");
                   }
                   return true;
                 },
                 [](const std::vector<Tensor>& in, const Attrs& a) {
                   const std::string fn = a.raw("fn");
                   if (fn == "logsigmoid") return kiln::log_sigmoid(in[0]);
                   const std::string r = a.raw("reduction");
                   auto f = [&](std::string_view k, double d) { return a.has(k) ? a.f(k) : d; };
                   if (fn == "mse_loss") return kiln::mse_loss(in[0], in[1], r);
                   if (fn == "l1_loss") return kiln::l1_loss(in[0], in[1], r);
                   if (fn == "smooth_l1_loss") return kiln::smooth_l1_loss(in[0], in[1], r, f("beta", 1.0));
                   if (fn == "huber_loss") return kiln::huber_loss(in[0], in[1], r, f("delta", 1.0));
                   if (fn == "soft_margin_loss") return kiln::soft_margin_loss(in[0], in[1], r);
                   if (fn == "binary_cross_entropy") return kiln::binary_cross_entropy(in[0], in[1], std::nullopt, r);
                   if (fn == "binary_cross_entropy_with_logits")
                     return kiln::binary_cross_entropy_with_logits(in[0], in[1], std::nullopt, std::nullopt, r);
                   if (fn == "kl_div") return kiln::kl_div(in[0], in[1], r, a.has("log_target") && a.b("log_target"));
                   if (fn == "poisson_nll_loss")
                     return kiln::poisson_nll_loss(in[0], in[1], !a.has("log_input") || a.b("log_input"), a.has("full") && a.b("full"),
                                                   1e-8, r);
                   if (fn == "hinge_embedding_loss") return kiln::hinge_embedding_loss(in[0], in[1], f("margin", 1.0), r);
                   return kiln::margin_ranking_loss(in[0], in[1], in[2], f("margin", 0.0), r);
                 },
                 [](const std::vector<std::string>& o, const Attrs& a) {
                   std::string s = "torch.nn.functional." + a.raw("fn") + "(" + o[0];
                   for (size_t i = 1; i < o.size(); ++i) s += ", " + o[i];
                   return s + py_kwargs(a, {"fn"}) + ")";
                 }});
  }
}

}  // namespace kiln::fuzz
