// kiln/test/test_support/opdb.cpp — the op database's assembly, sample builders and golden files.
#include "test_support/opdb.h"

#include "ir/text.h"
#include "ir/verifier.h"
#include "runtime/interpreter/interpreter.h"
#include "test_support/files.h"
#include "test_support/make.h"
#include "test_support/number_text.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <set>
#include <utility>
#include <sstream>
#include <stdexcept>

namespace kiln::opdb {

namespace {

std::string ints_text(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
  return s + "]";
}

// "<dtype> [shape] : values" (the part of a line after its keyword).
GoldenValue parse_value(std::istringstream& ss) {
  GoldenValue g;
  std::string tok;
  ss >> tok;
  if (tok == "random") {
    g.random = true;
    ss >> tok;
  }
  g.dtype = dtype_parse(tok);
  ss >> tok;
  std::string inner = tok.substr(1, tok.size() - 2);
  std::stringstream is(inner);
  for (std::string part; std::getline(is, part, ',');) g.shape.push_back(std::stoll(part));
  ss >> tok;  // ':'
  while (ss >> tok)
    g.values.push_back(tok == "nan" ? NAN : tok == "inf" ? INFINITY : tok == "-inf" ? -INFINITY : std::stod(tok));
  return g;
}

std::map<std::string, GoldenRecord> read_golden() {
  std::map<std::string, GoldenRecord> recs;
  const std::filesystem::path dir = std::filesystem::path(KILN_TEST_DATA_DIR) / "opdb_golden";
  if (!std::filesystem::exists(dir)) return recs;
  for (const std::filesystem::path& file : test::files_with_extension(dir, ".txt")) {
    std::istringstream in(test::read_file(file));
    std::string line, key;
    GoldenRecord r;
    while (std::getline(in, line)) {
      if (line.rfind("begin ", 0) == 0) {
        r = GoldenRecord{};
        std::istringstream ss(line.substr(6));
        std::string name, sample;
        ss >> name >> sample;
        key = name + "#" + sample;
      } else if (line == "end") {
        recs[key] = r;
      } else if (line.rfind("torch: ", 0) == 0) {
        r.torch = line.substr(7);
      } else if (line.rfind("in ", 0) == 0) {
        r.inputs.push_back(line.substr(3));
      } else if (line.rfind("error ", 0) == 0) {
        r.error = line.substr(6);
      } else if (line.rfind("out ", 0) == 0) {
        std::istringstream ss(line.substr(4));
        r.outputs.push_back(parse_value(ss));
      }
    }
  }
  return recs;
}

}  // namespace

namespace {

std::vector<OpEntry> build_database() {
  std::vector<OpEntry> d;
  add_unary(d);
  add_binary(d);
  add_ternary(d);
  add_cast(d);
  add_pointwise(d);
  add_reduction(d);
  add_scan(d);
  add_moments(d);
  add_softmax(d);
  add_activation(d);
  add_norm(d);
  add_linear(d);
  add_matmul(d);
  add_dropout(d);
  add_attention(d);
  add_conv(d);
  add_pool(d);
  add_resample(d);
  add_view(d);
  add_shape(d);
  add_index(d);
  add_sort(d);
  add_rearrange(d);
  add_factory(d);
  add_random(d);
  add_models(d);
  std::set<std::string> names;
  for (const OpEntry& e : d)
    if (!names.insert(e.name).second) throw std::logic_error("opdb: duplicate entry " + e.name);
  return d;
}

// The database built again with every tensor it makes on cuda:0 (test::MadeOn, and the
// factories' default device), so that the index tensors, masks and targets its entries
// capture are on the device, as PyTorch requires of a cuda call. Built on first use, on a
// machine with a GPU.
const std::vector<OpEntry>& cuda_database() {
  static const std::vector<OpEntry> db = [] {
    const DefaultDeviceScope scope(Device(kCUDA, 0));
    const test::MadeOn made(Device(kCUDA, 0));
    return build_database();
  }();
  return db;
}

// `e`'s twin in cuda_database() (the same position), or `e` for an entry of no database.
const OpEntry& on_cuda(const OpEntry& e) {
  const std::vector<OpEntry>& cpu = database();
  if (&e < cpu.data() || &e >= cpu.data() + cpu.size()) return e;
  const OpEntry& twin = cuda_database().at(static_cast<size_t>(&e - cpu.data()));
  if (twin.name != e.name) throw std::logic_error("opdb: the cuda database's order differs at " + e.name);
  return twin;
}

}  // namespace

const std::vector<OpEntry>& database() {
  static const std::vector<OpEntry> db = build_database();
  return db;
}

const OpEntry* find(const std::string& name) {
  for (const OpEntry& e : database())
    if (e.name == name) return &e;
  return nullptr;
}

Tolerance tolerance_for(ScalarType dt) {
  switch (dt) {
    case kDouble: return {1e-12, 1e-12};
    case kHalf: return {2e-3, 2e-3};
    case kBFloat16: return {1.6e-2, 1.6e-2};
    default: return {1e-5, 1e-6};
  }
}

Tensor seq(std::vector<int64_t> shape, ScalarType dtype, double start, double step) {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  std::vector<double> v;
  for (int64_t i = 0; i < n; ++i) v.push_back(start + step * static_cast<double>(i));
  return test::make<double>(v, std::move(shape)).to(dtype);
}

Tensor wave(std::vector<int64_t> shape, ScalarType dtype, double phase, double step) {
  const double pi = 3.141592653589793, two_pi = 2 * pi;
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  std::vector<double> v;
  for (int64_t i = 0; i < n; ++i) {
    const double x = phase + step * static_cast<double>(i);
    const double t = x - two_pi * std::floor((x + pi) / two_pi);  // in [-pi, pi)
    v.push_back(4.0 / (pi * pi) * t * (pi - std::abs(t)));
  }
  return test::make<double>(v, std::move(shape)).to(dtype);
}

Tensor ints(std::vector<int64_t> shape, int64_t start) {
  return seq(std::move(shape), kLong, static_cast<double>(start), 1.0);
}

Tensor i64(std::vector<int64_t> values, std::vector<int64_t> shape) {
  if (shape.empty()) shape = {static_cast<int64_t>(values.size())};
  return test::make<int64_t>(values, std::move(shape));
}

Tensor f32(std::vector<double> values, std::vector<int64_t> shape) {
  if (shape.empty()) shape = {static_cast<int64_t>(values.size())};
  return test::make<double>(values, std::move(shape)).to(kFloat);
}

std::vector<Sample> unary_samples(ScalarType dtype) {
  return {{seq({2, 3}, dtype)},
          {seq({3, 2}, dtype).t()},
          {seq({0, 4}, dtype)},
          {seq({}, dtype, 0.5)},
          {seq({2, 4}, dtype).slice(1, 0, 4, 2)}};
}

std::vector<Sample> binary_samples(ScalarType da, ScalarType db) {
  return {{seq({2, 3}, da), seq({2, 3}, db, 1.25, 0.5)},
          {seq({3, 1}, da), seq({4}, db, 1.25, 0.5)},
          {seq({3, 2}, da).t(), seq({2, 3}, db, 0.5, 1.0)},
          {seq({0, 3}, da), seq({3}, db)},
          {seq({2, 3}, da), seq({}, db, 2.0)}};
}

Tensor specials(ScalarType dtype) {
  const double inf = INFINITY;
  return test::make<double>({NAN, inf, -inf, 0.0, -0.0, 1e-30, -1e-30, 30.0, -30.0, 1e4, -1e4, 2.5}).to(dtype);
}

std::vector<Sample> float_samples() {
  std::vector<Sample> s = unary_samples(kFloat);
  s.push_back({specials()});
  s.push_back({seq({2, 3}, kHalf)});
  s.push_back({seq({2, 3}, kBFloat16)});
  s.push_back({seq({7}, kDouble, -4.0, 1.25)});
  return s;
}

std::string py_tensor(const Tensor& t) {
  std::vector<double> v = t.cpu().to(kDouble).to_vector<double>();
  std::string s = "torch.tensor([";
  for (size_t i = 0; i < v.size(); ++i) {
    const std::string x = test::shortest_double(v[i]);  // nan / inf / -inf as Python floats
    s += (i ? ", " : "") + (std::isfinite(v[i]) ? x : "float('" + x + "')");
  }
  return s + "], dtype=torch." + std::string(dtype_name(t.dtype())) + ").reshape(" + ints_text(t.sizes().vec()) + ")";
}

std::string dtype_text(ScalarType t) { return std::string(dtype_short_name(t)); }

ScalarType dtype_parse(const std::string& s) {
  if (std::optional<ScalarType> t = dtype_from_short_name(s)) return *t;
  throw std::runtime_error("opdb: unknown dtype " + s);
}

std::string values_line(const Tensor& t) {
  std::string s = dtype_text(t.dtype()) + " " + ints_text(t.sizes().vec()) + " :";
  for (double v : t.cpu().to(kDouble).to_vector<double>()) s += " " + test::shortest_double(v);
  return s;
}

const char* mode_name(Mode m) {
  switch (m) {
    case Mode::Eager: return "eager";
    case Mode::Traced: return "traced+interpret";
    case Mode::Compiled: return "compiled";
    case Mode::Dynamic: return "compiled Dynamic::True";
    case Mode::InterpreterBackend: return "compiled on the interpreter backend";
    case Mode::CudaEager: return "eager on cuda";
    case Mode::CudaCompiled: return "compiled on cuda";
    case Mode::CudaDynamic: return "compiled on cuda, Dynamic::True";
  }
  return "?";
}

namespace {

template <size_t> using TensorArg = const Tensor&;

// compile() of a function with one Tensor parameter per sample input, kept for calls on
// samples of that many inputs.
template <size_t... I>
Fn compiled_runner_n(const Fn& f, const CompileOptions& o, std::index_sequence<I...>) {
  auto call = [f](TensorArg<I>... a) { return f({a...}); };
  auto c = std::make_shared<CompiledFunction<decltype(call)>>(call, o);
  return [c](const Sample& in) { return (*c)(in[I]...); };
}

constexpr size_t kMaxInputs = 13;  // the transformer block's

template <size_t N = 1>
Fn compiled_runner(const OpEntry& e, size_t inputs, const CompileOptions& o) {
  if (inputs == N) return compiled_runner_n(e.fn, o, std::make_index_sequence<N>{});
  if constexpr (N < kMaxInputs) return compiled_runner<N + 1>(e, inputs, o);
  throw std::logic_error("opdb: " + e.name + " has " + std::to_string(inputs) + " inputs; run() handles 1 to " +
                         std::to_string(kMaxInputs));
}

// The options compile() gets in a compiled mode (the cuda modes' device is the inputs').
CompileOptions options_of(Mode m) {
  CompileOptions o;
  if (m == Mode::Dynamic || m == Mode::CudaDynamic) o.dynamic = Dynamic::True;
  if (m == Mode::InterpreterBackend) o.backend = "interpreter";
  return o;
}

}  // namespace

Fn runner(const OpEntry& e, size_t inputs, Mode m) {
  switch (m) {
    case Mode::Eager: return e.fn;
    case Mode::Compiled:
    case Mode::Dynamic:
    case Mode::InterpreterBackend: return compiled_runner(e, inputs, options_of(m));
    default: return [&e, m](const Sample& in) { return run(e, in, m); };
  }
}

std::vector<Tensor> run(const OpEntry& e, const Sample& in, Mode m) {
  switch (m) {
    case Mode::Eager: return e.fn(in);
    case Mode::Traced: {
      if (e.data_dependent) {
        try {
          trace(e.fn, in);
        } catch (const DataDependentError&) {
          return e.fn(in);
        }
        throw std::logic_error("opdb: " + e.name + " is marked data-dependent but traced without DataDependentError");
      }
      TracedProgram p = trace(e.fn, in);  // may raise kiln::Error for a bad input, as eager does
      const std::string text = ir::print_graph(*p.graph);
      std::unique_ptr<ir::Graph> parsed;
      try {  // a traced graph that does not verify or parse is a kiln bug, never an expected error
        ir::verify(*p.graph);
        parsed = ir::parse_graph(text);
      } catch (const Error& err) {
        throw std::logic_error(std::string("opdb: the traced graph does not verify or parse: ") + err.what() + "\n" + text);
      }
      if (ir::print_graph(*parsed) != text) throw std::logic_error("opdb: the traced graph does not round-trip:\n" + text);
      std::vector<Tensor> args = in;
      args.insert(args.end(), p.lifted.begin(), p.lifted.end());
      return rt::interpret(*parsed, args);
    }
    case Mode::Compiled:
    case Mode::Dynamic:
    case Mode::InterpreterBackend: return runner(e, in.size(), m)(in);
    case Mode::CudaEager:
    case Mode::CudaCompiled:
    case Mode::CudaDynamic: {
      // The entry's twin whose captured tensors are on the device; factories and test::make
      // inside the function make cuda tensors too (torch.set_default_device's analog).
      const OpEntry& ce = on_cuda(e);
      const DefaultDeviceScope scope(Device(kCUDA, 0));
      const test::MadeOn made(Device(kCUDA, 0));
      Sample dev;
      for (const Tensor& t : in) dev.push_back(t.defined() ? t.cuda() : t);
      std::vector<Tensor> out = m == Mode::CudaEager ? ce.fn(dev) : compiled_runner(ce, dev.size(), options_of(m))(dev);
      for (Tensor& t : out)
        if (t.defined()) t = t.cpu();
      return out;
    }
  }
  return {};
}

Tolerance tolerance_of(const OpEntry& e, ScalarType dt) {
  Tolerance t = tolerance_for(dt);
  if (e.tol && dt != kDouble && dt != kHalf && dt != kBFloat16) t = *e.tol;
  return t;
}

std::string compare(const Tensor& want, const Tensor& got, const Tolerance& tol, bool random) {
  if (want.dtype() != got.dtype())
    return "dtype " + dtype_text(got.dtype()) + ", expected " + dtype_text(want.dtype());
  if (want.sizes().vec() != got.sizes().vec())
    return "sizes " + shape_str(got.sizes()) + ", expected " + shape_str(want.sizes());
  if (random) return "";
  const std::vector<double> w = want.to(kDouble).to_vector<double>(), g = got.to(kDouble).to_vector<double>();
  const bool exact = !is_floating_point(want.dtype());
  for (size_t i = 0; i < w.size(); ++i) {
    const bool both_nan = std::isnan(w[i]) && std::isnan(g[i]);
    const bool ok = both_nan || (exact ? w[i] == g[i]
                                       : (w[i] == g[i] || std::abs(w[i] - g[i]) <= tol.atol + tol.rtol * std::abs(w[i])));
    if (!ok)
      return "element " + std::to_string(i) + " is " + test::shortest_double(g[i]) + ", expected " + test::shortest_double(w[i]) + "\n  got:  " +
             values_line(got) + "\n  want: " + values_line(want);
  }
  return "";
}

const std::map<std::string, GoldenRecord>& golden() {
  static const std::map<std::string, GoldenRecord> g = read_golden();
  return g;
}

Tensor to_tensor(const GoldenValue& v) {
  return dispatch_dtype(v.dtype, [&](auto tag) {
    using T = decltype(tag);
    int64_t n = 1;
    for (int64_t s : v.shape) n *= s;
    std::vector<double> vals = v.random ? std::vector<double>(static_cast<size_t>(n), 0.0) : v.values;
    if (static_cast<int64_t>(vals.size()) != n) throw std::runtime_error("opdb: a golden value's count does not match its shape");
    return test::mk<T>(vals, {n}).reshape(v.shape);
  });
}

}  // namespace kiln::opdb
