// kiln/test/test_opdb_modes.cpp — the op database run across modes.
//
// Each entry is a frontend op with several sample inputs (broadcast, non-contiguous,
// zero-size, 0-dim, several dtypes). Every sample runs eagerly and as a traced graph executed
// by the interpreter; the two must agree exactly (dtype, sizes, values), and each traced graph
// must verify and survive a print -> parse -> print round trip. The interpreter itself is
// checked against hand-computed values in the test_interp_* suites; this suite checks that
// the frontend records the same program it runs.
#include "frontend/kiln.h"
#include "ir/text.h"
#include "ir/verifier.h"
#include "runtime/interpreter.h"
#include "test_support/make.h"

#include <gtest/gtest.h>

#include <functional>
#include <string>

namespace kiln {
namespace {

using Fn = std::function<Tensor(const std::vector<Tensor>&)>;

struct OpEntry {
  std::string name;
  Fn fn;
  std::vector<std::vector<Tensor>> samples;
};

Tensor seq(std::vector<int64_t> shape, ScalarType dtype = kFloat, double start = -2.5, double step = 0.75) {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  std::vector<double> v;
  for (int64_t i = 0; i < n; ++i) v.push_back(start + step * static_cast<double>(i));
  return test::make<double>(v, std::move(shape)).to(dtype);
}

Tensor ints(std::vector<int64_t> shape, int64_t start = -3) {
  return seq(std::move(shape), kLong, static_cast<double>(start), 1.0);
}

// Samples shared by pointwise entries: same shape, broadcast, non-contiguous, empty, 0-dim.
std::vector<std::vector<Tensor>> unary_samples(ScalarType dtype) {
  return {{seq({2, 3}, dtype)},
          {seq({3, 2}, dtype).t()},
          {seq({0, 4}, dtype)},
          {seq({}, dtype, 0.5)},
          {seq({2, 4}, dtype).slice(1, 0, 4, 2)}};
}

std::vector<std::vector<Tensor>> binary_samples(ScalarType da, ScalarType db) {
  return {{seq({2, 3}, da), seq({2, 3}, db, 1.25, 0.5)},
          {seq({3, 1}, da), seq({4}, db, 1.25, 0.5)},
          {seq({3, 2}, da).t(), seq({2, 3}, db, 0.5, 1.0)},
          {seq({0, 3}, da), seq({3}, db)},
          {seq({2, 3}, da), seq({}, db, 2.0)}};
}

std::vector<OpEntry> database() {
  std::vector<OpEntry> db;
  auto unary = [&](std::string name, Tensor (*f)(const Tensor&), ScalarType dt = kFloat) {
    db.push_back({name, [f](const std::vector<Tensor>& in) { return f(in[0]); }, unary_samples(dt)});
  };
  for (auto [name, f] : std::vector<std::pair<std::string, Tensor (*)(const Tensor&)>>{
           {"abs", abs},         {"neg", neg},       {"exp", exp},     {"exp2", exp2},     {"expm1", expm1},
           {"log", log},         {"log2", log2},     {"log10", log10}, {"log1p", log1p},   {"sqrt", sqrt},
           {"rsqrt", rsqrt},     {"reciprocal", reciprocal},           {"sin", sin},       {"cos", cos},
           {"tan", tan},         {"asin", asin},     {"acos", acos},   {"atan", atan},     {"sinh", sinh},
           {"cosh", cosh},       {"tanh", tanh},     {"asinh", asinh}, {"acosh", acosh},   {"atanh", atanh},
           {"erf", erf},         {"erfc", erfc},     {"erfinv", erfinv}, {"lgamma", lgamma}, {"sigmoid", sigmoid},
           {"floor", floor},     {"ceil", ceil},     {"round", round}, {"trunc", trunc},   {"frac", frac},
           {"sign", sign},       {"signbit", signbit}, {"isnan", isnan}, {"isinf", isinf}, {"isfinite", isfinite},
           {"logical_not", logical_not}, {"relu", relu}, {"square", square}}) {
    unary(name, f);
  }
  // Integer inputs: float ops promote to the default dtype, the rest keep the dtype.
  unary("exp:int", exp, kLong);
  unary("sqrt:int", sqrt, kInt);
  unary("abs:int", abs, kInt);
  unary("neg:int8", neg, kChar);
  unary("bitwise_not:int", bitwise_not, kLong);
  unary("sigmoid:f16", sigmoid, kHalf);
  unary("tanh:bf16", tanh, kBFloat16);

  auto binary = [&](std::string name, Tensor (*f)(const Tensor&, const Tensor&), ScalarType da, ScalarType dbt) {
    db.push_back({name, [f](const std::vector<Tensor>& in) { return f(in[0], in[1]); }, binary_samples(da, dbt)});
  };
  using BinFn = Tensor (*)(const Tensor&, const Tensor&);
  for (auto [name, f] : std::vector<std::pair<std::string, BinFn>>{
           {"mul", mul},       {"div", div},         {"remainder", remainder}, {"fmod", fmod},
           {"pow", pow},       {"atan2", atan2},     {"hypot", hypot},         {"copysign", copysign},
           {"maximum", maximum}, {"minimum", minimum}, {"fmax", fmax},         {"fmin", fmin},
           {"eq", eq},         {"ne", ne},           {"lt", lt},               {"le", le},
           {"gt", gt},         {"ge", ge},           {"logical_and", logical_and}, {"logical_or", logical_or},
           {"logical_xor", logical_xor}, {"floor_divide", floor_divide}}) {
    binary(name, f, kFloat, kFloat);
    binary(name + ":f32,i64", f, kFloat, kLong);
    binary(name + ":i32,f64", f, kInt, kDouble);
  }
  for (auto [name, f] : std::vector<std::pair<std::string, BinFn>>{{"bitwise_and", bitwise_and},
                                                                   {"bitwise_or", bitwise_or},
                                                                   {"bitwise_xor", bitwise_xor}}) {
    binary(name, f, kLong, kInt);
  }
  db.push_back({"add_alpha", [](const std::vector<Tensor>& in) { return add(in[0], in[1], 2); },
                binary_samples(kFloat, kFloat)});
  db.push_back({"sub_alpha:int", [](const std::vector<Tensor>& in) { return sub(in[0], in[1], 3); },
                binary_samples(kInt, kShort)});
  db.push_back({"add_scalar", [](const std::vector<Tensor>& in) { return in[0] + 2.5; }, unary_samples(kInt)});
  db.push_back({"rsub_scalar", [](const std::vector<Tensor>& in) { return 1 - in[0]; }, unary_samples(kHalf)});
  db.push_back({"div_floor:int",
                [](const std::vector<Tensor>& in) { return div(in[0], in[1].abs() + 1, "floor"); },
                binary_samples(kLong, kLong)});
  db.push_back({"div_trunc", [](const std::vector<Tensor>& in) { return div(in[0], in[1], "trunc"); },
                binary_samples(kFloat, kDouble)});
  db.push_back({"shifts",
                [](const std::vector<Tensor>& in) { return bitwise_left_shift(in[0], in[1].abs()) >> 1; },
                {{ints({2, 3}), ints({2, 3}, 0)}, {ints({3, 1}), ints({4}, 0)}}});
  db.push_back({"where",
                [](const std::vector<Tensor>& in) { return where(in[0] > 0, in[0], in[1]); },
                binary_samples(kFloat, kLong)});
  db.push_back({"clamp_scalar", [](const std::vector<Tensor>& in) { return clamp(in[0], -1.0, 1.5); },
                unary_samples(kFloat)});
  db.push_back({"clamp_tensor",
                [](const std::vector<Tensor>& in) { return clamp(in[0], std::optional<Tensor>(in[1]), std::nullopt); },
                binary_samples(kFloat, kFloat)});
  db.push_back({"to_f16", [](const std::vector<Tensor>& in) { return in[0].to(kHalf); }, unary_samples(kFloat)});
  db.push_back({"to_i8", [](const std::vector<Tensor>& in) { return in[0].to(kChar); }, unary_samples(kFloat)});
  db.push_back({"clone", [](const std::vector<Tensor>& in) { return in[0].clone(); }, unary_samples(kFloat)});

  // Reductions and scans.
  auto red = [&](std::string name, Fn f) {
    db.push_back({name, f, {{seq({2, 3})}, {seq({3, 4}).t()}, {seq({2, 0})}, {seq({2, 3}, kLong)}}});
  };
  red("sum_all", [](const std::vector<Tensor>& in) { return in[0].sum(); });
  red("sum_dim", [](const std::vector<Tensor>& in) { return in[0].sum({-1}, true); });
  red("prod_dim", [](const std::vector<Tensor>& in) { return in[0].prod(0); });
  red("any_dim", [](const std::vector<Tensor>& in) { return in[0].any(1); });
  red("all", [](const std::vector<Tensor>& in) { return in[0].all(); });
  red("cumsum", [](const std::vector<Tensor>& in) { return in[0].cumsum(1); });
  red("cumprod", [](const std::vector<Tensor>& in) { return in[0].cumprod(0); });
  auto red_nonempty = [&](std::string name, Fn f) {
    db.push_back({name, f, {{seq({2, 3})}, {seq({3, 4}).t()}, {seq({2, 3}, kLong)}, {seq({5})}}});
  };
  red_nonempty("amax", [](const std::vector<Tensor>& in) { return in[0].amax({0}); });
  red_nonempty("amin_all", [](const std::vector<Tensor>& in) { return in[0].amin(); });
  red_nonempty("argmax", [](const std::vector<Tensor>& in) { return in[0].argmax(-1, true); });
  red_nonempty("argmin_flat", [](const std::vector<Tensor>& in) { return in[0].argmin(); });
  red_nonempty("mean", [](const std::vector<Tensor>& in) { return in[0].to(kFloat).mean({-1}); });

  // Views, joining, padding, indexing, matmul.
  auto views = [&](std::string name, Fn f) { db.push_back({name, f, {{seq({2, 3, 4})}, {seq({4, 3, 2}).permute({2, 1, 0})}}}); };
  views("reshape", [](const std::vector<Tensor>& in) { return in[0].reshape({4, -1}) * 2; });
  views("transpose", [](const std::vector<Tensor>& in) { return in[0].transpose(0, 2) + 1; });
  views("select_narrow", [](const std::vector<Tensor>& in) { return in[0].select(1, -1).narrow(1, 1, 2) + 0; });
  views("slice_step", [](const std::vector<Tensor>& in) { return in[0].slice(2, 0, 4, 3) - 1; });
  views("flatten", [](const std::vector<Tensor>& in) { return in[0].flatten(1) * 1; });
  views("unsqueeze_expand",
        [](const std::vector<Tensor>& in) { return in[0].unsqueeze(0).expand({2, 2, 3, 4}) + 0; });
  views("diagonal", [](const std::vector<Tensor>& in) { return in[0].diagonal(1, 1, 2) + 0; });
  views("movedim", [](const std::vector<Tensor>& in) { return in[0].movedim(0, -1).contiguous(); });
  views("chunk_cat", [](const std::vector<Tensor>& in) { return cat(in[0].chunk(2, 2), 0); });
  views("unbind_stack", [](const std::vector<Tensor>& in) { return stack(in[0].unbind(1), 2); });
  views("pad", [](const std::vector<Tensor>& in) { return constant_pad_nd(in[0], {1, -1, 2, 0}, 9); });
  db.push_back({"gather",
                [](const std::vector<Tensor>& in) { return in[0].gather(1, test::make<int64_t>({2, 0, 1, 1}, {2, 2})); },
                {{seq({2, 3})}, {seq({3, 2}).t()}}});
  db.push_back({"scatter_add",
                [](const std::vector<Tensor>& in) {
                  return in[0].scatter_add(1, test::make<int64_t>({2, 0, 1, 1}, {2, 2}), ones({2, 2}));
                },
                {{seq({2, 3})}, {seq({3, 2}).t()}}});
  db.push_back({"index_select",
                [](const std::vector<Tensor>& in) { return in[0].index_select(0, test::make<int64_t>({1, 1, 0})); },
                {{seq({2, 3})}, {seq({3, 2}).t()}}});
  db.push_back({"matmul",
                [](const std::vector<Tensor>& in) { return matmul(in[0], in[1]); },
                {{seq({2, 3}), seq({3, 4})},
                 {seq({3}), seq({3, 2})},
                 {seq({2, 2, 3}), seq({3, 4})},
                 {seq({4, 3}).t(), seq({2, 1, 4, 2})},
                 {seq({2, 0}), seq({0, 3})}}});
  // Composite ops: traced as one node, run through their decomposition eagerly and by the interpreter.
  auto rows = [&](std::string name, Fn f) {
    db.push_back({name, f, {{seq({2, 3})}, {seq({3, 2}).t()}, {seq({2, 0})}, {seq({2, 3}, kHalf)}, {seq({4}, kDouble)}}});
  };
  rows("softmax", [](const std::vector<Tensor>& in) { return softmax(in[0], -1); });
  rows("softmax_dim0", [](const std::vector<Tensor>& in) { return in[0].softmax(0, kDouble); });
  rows("log_softmax", [](const std::vector<Tensor>& in) { return log_softmax(in[0], -1); });
  rows("gelu", [](const std::vector<Tensor>& in) { return gelu(in[0]); });
  rows("gelu_tanh", [](const std::vector<Tensor>& in) { return gelu(in[0], "tanh"); });
  rows("silu", [](const std::vector<Tensor>& in) { return silu(in[0]); });
  rows("layer_norm", [](const std::vector<Tensor>& in) { return layer_norm(in[0], {in[0].size(-1)}); });
  rows("rms_norm", [](const std::vector<Tensor>& in) { return rms_norm(in[0], {in[0].size(-1)}); });
  rows("var", [](const std::vector<Tensor>& in) { return in[0].var({-1}, std::nullopt, true); });
  rows("var_all_c0", [](const std::vector<Tensor>& in) { return var(in[0], false); });
  db.push_back({"layer_norm_affine",
                [](const std::vector<Tensor>& in) { return layer_norm(in[0], {3}, in[1], in[2], 1e-3); },
                {{seq({2, 3}), seq({3}), seq({3}, kFloat, 1.0)}, {seq({2, 2, 3}), seq({3}), seq({3})}}});
  db.push_back({"rms_norm_weight", [](const std::vector<Tensor>& in) { return rms_norm(in[0], {2, 3}, in[1]); },
                {{seq({2, 3}), seq({2, 3})}, {seq({4, 2, 3}, kHalf), seq({2, 3}, kHalf)}}});
  db.push_back({"linear",
                [](const std::vector<Tensor>& in) { return linear(in[0], in[1], in[2]); },
                {{seq({2, 3}), seq({4, 3}), seq({4})}, {seq({3}), seq({2, 3}), seq({2})}, {seq({2, 2, 3}), seq({1, 3}), seq({})}}});
  db.push_back({"cross_entropy",
                [](const std::vector<Tensor>& in) { return cross_entropy(in[0], test::make<int64_t>({2, -100, 0})); },
                {{seq({3, 4})}, {seq({4, 3}).t()}, {seq({3, 4}, kDouble)}}});
  db.push_back({"cross_entropy_weight_smoothing",
                [](const std::vector<Tensor>& in) {
                  return cross_entropy(in[0], test::make<int64_t>({2, 1, 0}), in[1], "none", 1, 0.25);
                },
                {{seq({3, 4}), seq({4}, kFloat, 0.5, 0.5)}}});
  db.push_back({"factories",
                [](const std::vector<Tensor>& in) { return in[0] + arange(3) + zeros({3}) + full({3}, 2.0); },
                {{seq({2, 3})}}});
  return db;
}

void expect_same(const Tensor& a, const Tensor& b) {
  ASSERT_EQ(a.dtype(), b.dtype());
  ASSERT_EQ(a.sizes().vec(), b.sizes().vec());
  // equal() treats NaN as unequal; compare NaN positions separately for float results.
  if (a.is_floating_point()) {
    std::vector<double> x = a.to_vector<double>(), y = b.to_vector<double>();
    for (size_t i = 0; i < x.size(); ++i) {
      if (std::isnan(x[i])) {
        EXPECT_TRUE(std::isnan(y[i])) << "element " << i;
      } else {
        EXPECT_EQ(x[i], y[i]) << "element " << i;
      }
    }
  } else {
    EXPECT_TRUE(equal(a, b));
  }
}

TEST(OpDb, EagerAndTracedInterpreterAgree) {
  int checked = 0;
  for (const OpEntry& e : database()) {
    for (size_t s = 0; s < e.samples.size(); ++s) {
      SCOPED_TRACE(e.name + " sample " + std::to_string(s));
      const std::vector<Tensor>& in = e.samples[s];
      Tensor eager = e.fn(in);
      TracedProgram p = trace([&](const std::vector<Tensor>& x) { return std::vector<Tensor>{e.fn(x)}; }, in);
      ASSERT_NO_THROW(ir::verify(*p.graph));
      std::string text = ir::print_graph(*p.graph);
      std::unique_ptr<ir::Graph> parsed;
      ASSERT_NO_THROW(parsed = ir::parse_graph(text)) << text;
      EXPECT_EQ(ir::print_graph(*parsed), text);
      std::vector<Tensor> args = in;
      args.insert(args.end(), p.lifted.begin(), p.lifted.end());
      std::vector<Tensor> traced = rt::interpret(*parsed, args);
      ASSERT_EQ(traced.size(), 1u);
      expect_same(eager, traced[0]);
      ++checked;
    }
  }
  EXPECT_GT(checked, 300);
}


// Compiled execution (fused, generated kernels) against the interpreter on the same traced
// graph. Integers and bools must agree exactly; floats within the generated code's documented
// accuracy (libmvec transcendental functions: 4 ulp; float sums accumulate in the result
// dtype, in a different order than the interpreter's double accumulation).
std::vector<Tensor> run_compiled(const OpEntry& e, const std::vector<Tensor>& in, CompileOptions o = {}) {
  switch (in.size()) {
    case 1: return {compile([&](const Tensor& a) { return e.fn({a}); }, o)(in[0])};
    case 2: return {compile([&](const Tensor& a, const Tensor& b) { return e.fn({a, b}); }, o)(in[0], in[1])};
    case 3:
      return {compile([&](const Tensor& a, const Tensor& b, const Tensor& c) { return e.fn({a, b, c}); }, o)(
          in[0], in[1], in[2])};
    default: break;
  }
  ADD_FAILURE() << e.name << ": run_compiled handles 1 to 3 inputs, got " << in.size();
  return {};
}

void expect_close_compiled(const Tensor& ref, const Tensor& got) {
  ASSERT_EQ(ref.dtype(), got.dtype());
  ASSERT_EQ(ref.sizes().vec(), got.sizes().vec());
  if (!is_floating_point(ref.dtype())) {
    EXPECT_TRUE(equal(ref, got)) << "expected " << ref << "\ngot " << got;
    return;
  }
  double rtol = 1e-5, atol = 1e-6;
  if (ref.dtype() == kDouble) rtol = atol = 1e-12;
  if (ref.dtype() == kHalf) rtol = atol = 2e-3;
  if (ref.dtype() == kBFloat16) rtol = atol = 1.6e-2;
  EXPECT_TRUE(allclose(got, ref, rtol, atol, /*equal_nan=*/true)) << "expected " << ref << "\ngot " << got;
}

// Runs every sample compiled for `o` and compares with the interpreter.
int check_compiled(const CompileOptions& o) {
  int checked = 0;
  for (const OpEntry& e : database()) {
    for (size_t s = 0; s < e.samples.size(); ++s) {
      SCOPED_TRACE(e.name + " sample " + std::to_string(s));
      const std::vector<Tensor>& in = e.samples[s];
      TracedProgram p = trace([&](const std::vector<Tensor>& x) { return std::vector<Tensor>{e.fn(x)}; }, in);
      std::vector<Tensor> args = in;
      args.insert(args.end(), p.lifted.begin(), p.lifted.end());
      std::vector<Tensor> ref = rt::interpret(*p.graph, args);
      std::vector<Tensor> got;
      EXPECT_NO_THROW(got = run_compiled(e, in, o));
      if (got.size() != 1u) {
        ADD_FAILURE() << "no result";
        continue;
      }
      expect_close_compiled(ref[0], got[0]);
      ++checked;
    }
  }
  return checked;
}

TEST(OpDb, CompiledAgreesWithInterpreter) { EXPECT_GT(check_compiled({}), 300); }

// The same with every contiguous input dim of size >= 2 symbolic: the kernels read their
// sizes at run time and the frontend records symbolic shapes.
TEST(OpDb, DynamicCompiledAgreesWithInterpreter) {
  CompileOptions o;
  o.dynamic = Dynamic::True;
  EXPECT_GT(check_compiled(o), 300);
}

}  // namespace
}  // namespace kiln
