// kiln/test/test_support/fuzz_program.h — the differential fuzzer's program model, op table,
// generator and runner (test/test_fuzz_diff.cpp, test/test_fuzz_golden.cpp).
//
// A Program is a straight-line sequence of nodes at the user-API level: input declarations
// (dtype, shape over size variables, layout, value kind) and steps (`%3 = add %1 %2 alpha=2`)
// that call one frontend function each. It prints to text and parses back, so failures can be
// replayed and the golden files (test/fuzz_golden/) do not depend on the generator. Size
// variables have two values (`sizes s0=5/7`): variant 0 and variant 1 are consistent programs,
// so a Dynamic::True compile can be called at both. Every op is one row of op_table()
// (fuzz_ops*.cpp): its name, an argument generator, the kiln call and its PyTorch spelling.
// docs/testing.md describes the fuzzer, its environment variables and the golden files.
#pragma once

#include "kiln/kiln.h"

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::fuzz {

// splitmix64: small, seedable, identical everywhere.
class Rng {
 public:
  explicit Rng(uint64_t seed) : s_(seed) {}
  uint64_t next();
  int64_t range(int64_t lo, int64_t hi);  // inclusive
  double real();                          // [0, 1)
  bool chance(double p) { return real() < p; }
  template <typename T> const T& pick(const std::vector<T>& v) { return v.at(static_cast<size_t>(range(0, static_cast<int64_t>(v.size()) - 1))); }

 private:
  uint64_t s_;
};

// Attributes in text form, in order: key=value, values without spaces. Integers `2`, floats
// always with a '.' or exponent (`2.0`), lists `[1,2]`, bools True/False, dtypes f32/i64/...,
// strings bare (`tanh`).
struct Attrs {
  std::vector<std::pair<std::string, std::string>> kv;
  bool has(std::string_view k) const;
  const std::string& raw(std::string_view k) const;
  int64_t i(std::string_view k) const;
  double f(std::string_view k) const;
  bool b(std::string_view k) const;
  std::vector<int64_t> ints(std::string_view k) const;
  ScalarType dt(std::string_view k) const;
  Scalar scalar(std::string_view k) const;  // an int or a float, as written
  // Sets k to v: replaces an earlier value of k (a program names each attribute once), else appends.
  void set(std::string k, std::string v) {
    for (auto& [key, value] : kv)
      if (key == k) {
        value = std::move(v);
        return;
      }
    kv.emplace_back(std::move(k), std::move(v));
  }
};

std::string dtype_text(ScalarType t);  // f32, i64, bool, bf16, ...
ScalarType dtype_parse(std::string_view s);
std::string fmt_double(double v);      // shortest round-trip text, always with '.' or 'e'
std::string fmt_ints(const std::vector<int64_t>& v);  // [1,2]

enum class Layout { Contiguous, Transposed, Expanded, Sliced };

// One node: an input (op == "input") or a step.
struct Node {
  std::string op;
  std::vector<int> args;  // value ids (earlier nodes)
  Attrs attrs;            // for inputs: dtype, shape (tokens), layout, vals
};

struct Program {
  uint64_t seed = 0;  // input values
  std::vector<std::pair<std::string, std::array<int64_t, 2>>> sizes;
  std::vector<Node> nodes;  // value id == index
  std::vector<int> outputs;

  std::string text() const;
  static Program parse(std::string_view text);  // throws std::runtime_error on bad text
  std::vector<int> input_ids() const;
  std::vector<int64_t> shape_of_input(int id, int variant) const;
};

// ---- ops --------------------------------------------------------------------------------------

enum OpFlags : uint32_t {
  kRandom = 1,       // values not compared (shape and dtype only); never an operand
  kExact = 2,        // float results equal in every mode when inputs are exact (views, max, where...)
  kFragile = 4,      // discontinuous or ill-conditioned: inexact float inputs make the result unreliable
  kReduces = 8,      // accumulates: error scales with the reduced count
};

struct GenCtx;
struct OpSpec {
  std::string name;
  int weight = 1;
  uint32_t flags = 0;
  std::function<bool(GenCtx&, Node&)> gen;  // fills args and attrs; false: not applicable now
  std::function<Tensor(const std::vector<Tensor>&, const Attrs&)> run;
  // Python expression over the operand names (v3, v4) and attributes.
  std::function<std::string(const std::vector<std::string>&, const Attrs&)> torch;
};

const std::vector<OpSpec>& op_table();
const OpSpec* find_op(std::string_view name);

// Renders attributes as Python keyword arguments (`, dim=1, keepdim=True`), skipping `skip`.
std::string py_kwargs(const Attrs& a, std::initializer_list<std::string_view> skip = {});
std::string py_value(const std::string& raw);
// `torch.<fn>(a, b, k=v...)` for the common case.
std::function<std::string(const std::vector<std::string>&, const Attrs&)> torch_fn(std::string fn);

// ---- generator --------------------------------------------------------------------------------

struct GenValue {
  ScalarType dtype;
  std::vector<std::array<int64_t, 2>> dims;  // size in variant 0 and 1
  std::array<Tensor, 2> t;                   // eager values, used to choose valid attributes
  bool random = false;
  bool is_input = false;
};

struct GenCtx {
  Rng& rng;
  Program& prog;
  std::vector<GenValue> vals;
  bool allow_errors = true;

  // A value (biased to recent ones) satisfying pred, or -1.
  int pick(const std::function<bool(const GenValue&)>& pred = {});
  ScalarType random_dtype(bool float_bias = true);
  // Declares a new input; dims are (variant 0, variant 1) sizes, new size variables as needed.
  int add_input(ScalarType dtype, const std::vector<std::array<int64_t, 2>>& dims, std::string vals = "",
                std::optional<Layout> layout = std::nullopt);
  // A new input broadcastable with `dims` (some dims 1, some leading dims dropped).
  int broadcast_input(const std::vector<std::array<int64_t, 2>>& dims, ScalarType dtype);
  std::vector<std::array<int64_t, 2>> random_dims(int max_rank = 3);
  int64_t rank(int v) const { return static_cast<int64_t>(vals.at(v).dims.size()); }
  std::array<int64_t, 2> dim(int v, int64_t d) const;
  int64_t min_size(int v, int64_t d) const { auto p = dim(v, d); return std::min(p[0], p[1]); }
  std::string scalar_for(ScalarType t);  // a scalar literal suited to dtype t
};

struct GenOptions {
  int max_steps = 8;
  bool large = false;  // one input of ~70k elements (split reductions)
};
Program generate(uint64_t seed, const GenOptions& opts = {});

// ---- runner -----------------------------------------------------------------------------------

// Input tensors for a variant, values drawn from the program's seed.
std::vector<Tensor> make_inputs(const Program& p, int variant);
// Input `id` for a variant: values drawn from the program's seed, then build_input.
Tensor input_tensor(const Program& p, int id, int variant);
// Builds one input with its layout from row-major logical values.
Tensor build_input(const Program& p, int id, int variant, const std::vector<double>& logical);
// Replays the program on the inputs (in id order); returns the outputs. With functional_views,
// `view` runs as `reshape`, as a trace records it (traced views are functional): the eager
// values the traced modes compute where eager `view` raises.
std::vector<Tensor> replay(const Program& p, const std::vector<Tensor>& inputs, std::vector<Tensor>* all = nullptr,
                           bool functional_views = false);

// Per-output facts the comparison needs: random (shape/dtype only), fragile (shape/dtype only),
// and the error scale (typical magnitude of the values an output accumulates).
struct OutputInfo {
  bool random = false;
  bool fragile = false;
  double scale = 1;
  // The relative tolerance of the least precise float dtype the value was computed through (an
  // f32 log2 cast to f64 carries f32's error).
  double tol = 0;
};
std::vector<OutputInfo> output_info(const Program& p, const std::vector<Tensor>& all_values);

// Compares got with ref; empty when they agree.
std::string compare(const Tensor& ref, const Tensor& got, const OutputInfo& info);

struct Outcome {
  enum Kind { Ok, UserError, InternalError, OtherError } kind = Ok;
  std::string message;
  std::vector<Tensor> outs;
};
std::string kind_name(Outcome::Kind k);

enum class Mode { Eager, Static, DynamicV0, DynamicV1, Interp, EagerV1 };
std::string mode_name(Mode m);

struct Failure {
  Mode mode;
  std::string message;
};
struct RunStats {
  int64_t programs = 0, runs = 0, mismatches = 0, errors_expected = 0;
};

// Runs every mode of p, compares with the interpreter backend's results and returns the
// failures. `modes` selects which modes run.
std::vector<Failure> run_program(const Program& p, RunStats& stats, bool dynamic = true);

// Runs every mode on explicit inputs (variant 0 only) and compares with `expected`
// (torch's outputs) or expects kiln::Error when `expected` is empty and expect_error
// (`torch_error`: torch's message, which decides the exceptions, e.g. a view traced modes allow).
std::vector<Failure> run_against(const Program& p, const std::vector<Tensor>& inputs,
                                 const std::vector<Tensor>& expected, bool expect_error, RunStats& stats,
                                 const std::string& torch_error = {});

uint64_t env_u64(const char* name, uint64_t fallback);

// ---- golden files (test/fuzz_golden, test/fuzz_golden_grad) ---------------------------------
// A block between "begin" and "end": the program's text, its "input %id <dtype> [shape] :
// values" lines and its results ("out ...", "error ...", "grad ...", "skip ...").
struct GoldenRecord {
  std::string program;
  std::vector<std::string> inputs, results;
};
std::vector<GoldenRecord> read_golden_records(const std::string& file);
// The "<dtype> [shape] : values" part of a line, after its first `skip` tokens.
void parse_value_line(const std::string& line, int skip, ScalarType* dt, std::vector<int64_t>* shape,
                      std::vector<double>* vals);
// A tensor of dtype `dt` and `shape` holding `vals` (row-major).
Tensor tensor_of(ScalarType dt, const std::vector<int64_t>& shape, const std::vector<double>& vals);
// p's inputs (in id order) rebuilt, with their layouts, from a record's input lines.
std::vector<Tensor> golden_inputs(const Program& p, const GoldenRecord& r);
// What an emitter writes for p before its results: "begin", the text, one "torch: vK = ..."
// line per op (tools/fuzz_golden*.py run them) and the inputs of variant 0.
std::string golden_head(const Program& p);
// An emitter's file: golden_head of the programs of seeds first..first + n - 1 that `keep`
// accepts (all when it is empty).
void write_golden_heads(const std::string& path, uint64_t first, uint64_t n, const GenOptions& opts,
                        const std::function<bool(const Program&)>& keep = {});

}  // namespace kiln::fuzz
