// kiln/test/test_support/fuzz_runner.cpp — runs a fuzz program in every mode and compares.
//
// Modes: eager; compile(backend "cpu", static); compile(cpu, Dynamic::True) called at size
// variant 0 then 1; eager at variant 1. The reference is compile(backend "interpreter",
// static) at each variant. If the reference raises kiln::Error, every mode must raise
// kiln::Error; an InternalError or another exception anywhere is a failure. Float outputs are
// compared with per-dtype tolerances scaled by the magnitude the value accumulates
// (output_info); outputs that depend discontinuously on inexact floats (comparisons, casts to
// integers, argmax, floor... of rounded values) are "fragile" and compared by shape and dtype
// only, as are random outputs.
#include "test_support/fuzz_program.h"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace kiln::fuzz {

std::string kind_name(Outcome::Kind k) {
  switch (k) {
    case Outcome::Ok: return "ok";
    case Outcome::UserError: return "kiln::Error";
    case Outcome::InternalError: return "kiln::InternalError";
    case Outcome::OtherError: return "other exception";
  }
  return "?";
}

std::string mode_name(Mode m) {
  switch (m) {
    case Mode::Eager: return "eager";
    case Mode::Static: return "compiled(cpu, static)";
    case Mode::DynamicV0: return "compiled(cpu, Dynamic::True) at sizes 0";
    case Mode::DynamicV1: return "compiled(cpu, Dynamic::True) at sizes 1";
    case Mode::Interp: return "interpreter";
    case Mode::EagerV1: return "eager at sizes 1";
  }
  return "?";
}

namespace {

double maxabs(const Tensor& t) {
  if (!t.defined() || t.numel() == 0) return 0;
  double m = 0;
  for (double v : t.to_vector<double>())
    if (std::isfinite(v)) m = std::max(m, std::abs(v));
  return m;
}

bool is_matmul(const std::string& op) { return op == "mm" || op == "bmm" || op == "matmul" || op == "linear"; }
bool adds_a_product(const std::string& op) {  // self + mat1 @ mat2
  return op == "addmm" || op == "baddbmm" || op == "addmm_activation";
}
// Ops whose output's relative error is their input's absolute error (d exp(x) = exp(x) dx).
// (poisson_nll_loss takes exp of its input unless log_input=False.)
bool exponential(const Node& n) {
  if (n.op == "smooth_loss")
    return n.attrs.raw("fn") == "poisson_nll_loss" && !(n.attrs.has("log_input") && !n.attrs.b("log_input"));
  return n.op == "exp" || n.op == "exp2" || n.op == "expm1" || n.op == "sinh" || n.op == "cosh";
}

template <typename F> Outcome guarded(F&& f) {
  Outcome o;
  try {
    o.outs = f();
  } catch (const kiln::Error& e) {
    o.kind = Outcome::UserError, o.message = e.what();
  } catch (const kiln::InternalError& e) {
    o.kind = Outcome::InternalError, o.message = e.what();
  } catch (const std::exception& e) {
    o.kind = Outcome::OtherError, o.message = e.what();
  }
  return o;
}

detail::TraceFn trace_fn(const Program& p) {
  return [&p](const std::vector<detail::ArgValue>& args) {
    std::vector<Tensor> ts;
    for (const auto& a : args) ts.push_back(std::get<Tensor>(a));
    return replay(p, ts);
  };
}
std::vector<detail::ArgValue> to_args(const std::vector<Tensor>& ts) { return {ts.begin(), ts.end()}; }

constexpr const char* kViewErrorText = "view size is not compatible with input tensor's size and stride";

// Compares a mode's outcome with the reference's; appends a failure if they disagree.
void check(const Outcome& ref, const Outcome& got, const std::vector<OutputInfo>& info, Mode m,
           std::vector<Failure>& out, RunStats& stats) {
  ++stats.runs;
  std::string msg;
  // Traced views are functional (docs/decisions.md): view() of a tensor whose strides cannot
  // express it records a reshape in a trace, while eagerly it raises PyTorch's error, as it must.
  auto view_error = [](const std::string& text) { return text.find(kViewErrorText) != std::string::npos; };
  const bool eager = m == Mode::Eager || m == Mode::EagerV1;
  if (ref.kind == Outcome::UserError && !eager && got.kind == Outcome::Ok && view_error(ref.message)) {
    ++stats.errors_expected;  // PyTorch (the golden reference) raised it; a traced mode did not
  } else if (ref.kind == Outcome::UserError) {
    if (got.kind != Outcome::UserError)
      msg = "reference raised kiln::Error (" + ref.message + ") but this mode gave " + kind_name(got.kind) + " " + got.message;
  } else if (got.kind == Outcome::UserError && eager && view_error(got.message)) {
    ++stats.errors_expected;  // the reference is a traced mode; eager raised
  } else if (got.kind != Outcome::Ok) {
    msg = "reference succeeded but this mode raised " + kind_name(got.kind) + ": " + got.message;
  } else if (got.outs.size() != ref.outs.size()) {
    msg = "output count " + std::to_string(got.outs.size()) + " != " + std::to_string(ref.outs.size());
  } else {
    for (size_t i = 0; i < ref.outs.size() && msg.empty(); ++i) {
      std::string c = compare(ref.outs[i], got.outs[i], i < info.size() ? info[i] : OutputInfo{});
      if (!c.empty()) msg = "output " + std::to_string(i) + ": " + c;
    }
  }
  if (!msg.empty()) {
    ++stats.mismatches;
    out.push_back({m, msg});
  }
}

}  // namespace

namespace {
// The relative tolerance of results of dtype dt (0: compared exactly).
double dtype_tol(ScalarType dt) {
  switch (dt) {
    case kDouble: return 1e-9;
    case kFloat: return 2e-5;
    case kHalf: return 1e-2;
    case kBFloat16: return 6e-2;
    default: return 0;
  }
}
}  // namespace

std::vector<OutputInfo> output_info(const Program& p, const std::vector<Tensor>& all) {
  const size_t n = p.nodes.size();
  std::vector<bool> exact(n, true), fragile(n, false), random(n, false);
  std::vector<double> scale(n, 1), tol(n, 0);
  for (size_t i = 0; i < n && i < all.size(); ++i) {
    const Node& node = p.nodes[i];
    const double out_max = maxabs(all[i]);
    tol[i] = all[i].defined() ? dtype_tol(all[i].dtype()) : 0;
    if (node.op == "input") {
      scale[i] = std::max(1.0, out_max);
      continue;
    }
    if (tol[i] > 0)
      for (int a : node.args) tol[i] = std::max(tol[i], tol[static_cast<size_t>(a)]);
    const OpSpec* spec = find_op(node.op);
    const uint32_t flags = spec->flags;
    bool inexact_float = false, all_exact = true, all_nonfloat = true, any_fragile = false;
    double s = 1;
    for (int a : node.args) {
      const size_t ai = static_cast<size_t>(a);
      const bool fl = all[ai].defined() && all[ai].is_floating_point();
      inexact_float |= fl && !exact[ai];
      all_exact = all_exact && exact[ai];
      all_nonfloat = all_nonfloat && !fl;
      any_fragile |= fragile[ai] || random[ai];
      s = std::max(s, scale[ai]);
    }
    const bool out_float = all[i].defined() && all[i].is_floating_point();
    random[i] = flags & kRandom;
    exact[i] = all_exact && ((flags & kExact) || (all_nonfloat && !out_float));
    fragile[i] = any_fragile || ((flags & kFragile) && inexact_float) || (!out_float && inexact_float);
    // An exponential's relative error is its input's absolute error, about the tolerance times
    // the magnitude the input accumulated: past 50 times the tolerance the comparison allows,
    // the output is ill-conditioned and compared by shape and dtype only.
    if (exponential(node) && inexact_float && s > 50) fragile[i] = true;
    // A product of values a and b sums K terms of the operands' scales.
    auto product_scale = [&](int a, int b) {
      const Tensor& t = all[static_cast<size_t>(a)];
      return scale[static_cast<size_t>(a)] * scale[static_cast<size_t>(b)] *
             static_cast<double>(std::max<int64_t>(1, t.dim() ? t.size(-1) : 1));
    };
    if (is_matmul(node.op) && node.args.size() >= 2) {
      s = product_scale(node.args[0], node.args[1]);
    } else if (adds_a_product(node.op) && node.args.size() >= 3) {
      s = std::max(scale[static_cast<size_t>(node.args[0])], product_scale(node.args[1], node.args[2]));
    } else if ((flags & kReduces) && !node.args.empty()) {
      const Tensor& a = all[static_cast<size_t>(node.args[0])];
      const double ratio = static_cast<double>(a.numel()) / static_cast<double>(std::max<int64_t>(1, all[i].numel()));
      s *= std::max(1.0, ratio) * (node.op == "var" ? s : 1.0);
      if (node.op.rfind("cum", 0) == 0 && a.dim() > 0) s *= static_cast<double>(a.numel());
    } else if ((node.op == "mul" || node.op == "mul_" || node.op == "square") && node.args.size() >= 1) {
      s = scale[static_cast<size_t>(node.args[0])] * (node.args.size() > 1 ? scale[static_cast<size_t>(node.args[1])] : s);
    }
    scale[i] = std::max(s, out_max);
  }
  std::vector<OutputInfo> info;
  for (int o : p.outputs) {
    const size_t oi = static_cast<size_t>(o);
    info.push_back({static_cast<bool>(random[oi]), static_cast<bool>(fragile[oi]), scale[oi], tol[oi]});
  }
  return info;
}

std::string compare(const Tensor& ref, const Tensor& got, const OutputInfo& info) {
  std::ostringstream os;
  if (ref.dtype() != got.dtype()) {
    os << "dtype " << dtype_text(got.dtype()) << ", expected " << dtype_text(ref.dtype());
    return os.str();
  }
  if (ref.sizes().vec() != got.sizes().vec()) {
    os << "sizes " << fmt_ints(got.sizes().vec()) << ", expected " << fmt_ints(ref.sizes().vec());
    return os.str();
  }
  if (info.random || info.fragile) return "";
  std::vector<double> r = ref.to_vector<double>(), g = got.to_vector<double>();
  const double tol = dtype_tol(ref.dtype()) > 0 ? std::max(dtype_tol(ref.dtype()), info.tol) : 0;
  const double atol = tol * info.scale;
  int bad = 0;
  for (size_t i = 0; i < r.size(); ++i) {
    const double a = r[i], b = g[i];
    bool ok;
    if (tol == 0) ok = a == b;
    else if (std::isnan(a) || std::isnan(b)) ok = std::isnan(a) && std::isnan(b);
    else if (std::isinf(a) || std::isinf(b)) ok = a == b;
    else ok = std::abs(a - b) <= atol + tol * std::abs(a);
    if (!ok && bad++ < 4) os << (bad > 1 ? "; " : "") << "element " << i << ": got " << b << ", expected " << a;
  }
  if (bad) os << " (" << bad << " of " << r.size() << " elements differ; rtol " << tol << ", atol " << atol << ")";
  return os.str();
}

std::vector<Failure> run_program(const Program& p, RunStats& stats, bool dynamic) {
  ++stats.programs;
  std::vector<Failure> fails;
  const std::vector<Tensor> in0 = make_inputs(p, 0), in1 = make_inputs(p, 1);
  const detail::TraceFn fn = trace_fn(p);
  CompileOptions io;
  io.backend = "interpreter";
  io.dynamic = Dynamic::False;
  auto interp = detail::make_compiled_state(io);
  Outcome ref0 = guarded([&] { return detail::call_compiled(*interp, to_args(in0), fn); });
  Outcome ref1 = guarded([&] { return detail::call_compiled(*interp, to_args(in1), fn); });
  for (const Outcome* r : {&ref0, &ref1}) {
    if (r->kind == Outcome::InternalError || r->kind == Outcome::OtherError) {
      ++stats.mismatches;
      fails.push_back({Mode::Interp, "the reference raised " + kind_name(r->kind) + ": " + r->message});
      return fails;
    }
  }
  if (ref0.kind == Outcome::UserError) ++stats.errors_expected;
  std::vector<Tensor> all0;
  Outcome eager0 = guarded([&] { return replay(p, in0, &all0); });
  std::vector<Tensor> all1;
  Outcome eager1 = guarded([&] { return replay(p, in1, &all1); });
  const std::vector<OutputInfo> info0 = output_info(p, all0), info1 = output_info(p, all1);
  check(ref0, eager0, info0, Mode::Eager, fails, stats);
  check(ref1, eager1, info1, Mode::EagerV1, fails, stats);
  CompileOptions so;
  so.backend = "cpu";
  so.dynamic = Dynamic::False;
  auto st = detail::make_compiled_state(so);
  check(ref0, guarded([&] { return detail::call_compiled(*st, to_args(in0), fn); }), info0, Mode::Static, fails, stats);
  if (dynamic) {
    CompileOptions dyo;
    dyo.backend = "cpu";
    dyo.dynamic = Dynamic::True;
    auto dy = detail::make_compiled_state(dyo);
    check(ref0, guarded([&] { return detail::call_compiled(*dy, to_args(in0), fn); }), info0, Mode::DynamicV0, fails, stats);
    check(ref1, guarded([&] { return detail::call_compiled(*dy, to_args(in1), fn); }), info1, Mode::DynamicV1, fails, stats);
  }
  return fails;
}

std::vector<Failure> run_against(const Program& p, const std::vector<Tensor>& inputs, const std::vector<Tensor>& expected,
                                 bool expect_error, RunStats& stats, const std::string& torch_error) {
  ++stats.programs;
  std::vector<Failure> fails;
  Outcome ref;
  if (expect_error) ref.kind = Outcome::UserError, ref.message = "torch raised: " + torch_error;
  else ref.outs = expected;
  if (expect_error) ++stats.errors_expected;
  const detail::TraceFn fn = trace_fn(p);
  std::vector<Tensor> all;
  Outcome eager = guarded([&] { return replay(p, inputs, &all); });
  check(ref, eager, output_info(p, all), Mode::Eager, fails, stats);
  // Where torch and eager refuse a view that traced modes record as a reshape (functional
  // views), the traced modes' results are compared with an eager replay that reshapes there.
  // When that replay raises too, they are held to torch's error as before.
  const bool view_refused = expect_error && torch_error.find(kViewErrorText) != std::string::npos &&
                            eager.kind == Outcome::UserError && eager.message.find(kViewErrorText) != std::string::npos;
  Outcome functional;
  if (view_refused) functional = guarded([&] { return replay(p, inputs, &all, /*functional_views=*/true); });
  const Outcome& traced_ref = view_refused && functional.kind == Outcome::Ok ? functional : ref;
  const std::vector<OutputInfo> info = output_info(p, all);
  auto opts = [](const char* backend, Dynamic d) {
    CompileOptions o;
    o.backend = backend;
    o.dynamic = d;
    return o;
  };
  const std::vector<std::pair<Mode, CompileOptions>> modes = {{Mode::Interp, opts("interpreter", Dynamic::False)},
                                                              {Mode::Static, opts("cpu", Dynamic::False)},
                                                              {Mode::DynamicV0, opts("cpu", Dynamic::True)}};
  for (const auto& [m, o] : modes) {
    auto s = detail::make_compiled_state(o);
    check(traced_ref, guarded([&] { return detail::call_compiled(*s, to_args(inputs), fn); }), info, m, fails, stats);
  }
  return fails;
}

}  // namespace kiln::fuzz
