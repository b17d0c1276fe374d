// kiln/test/test_support/opdb.h — the op database: every op's samples, its PyTorch spelling and
// its tolerances, keyed by op.
//
// An entry is one frontend call pattern ("elu", "elu:alpha", "sum:dim") with sample inputs
// (broadcast, non-contiguous, zero-size, 0-dim, several dtypes, and inputs PyTorch rejects), the
// same call written in PyTorch (a Python expression over a0, a1, ...) and, where the default
// is not right, its float tolerances. The part of a name before ':' is the op it covers.
// An entry's family is its op's family in ir/ops.def, lowercased, as in every other layer:
// opdb_<family>.cpp adds the family's entries and test/opdb_golden/<family>.txt holds PyTorch's
// outputs for every sample, written by tools/opdb_golden.py from what OpDbGolden.Emit prints
// (docs/testing.md). One family has no ops.def counterpart: model holds whole models. The tests
// that use the database are test/test_opdb_*.cpp.
#pragma once

#include "kiln/kiln.h"

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace kiln::opdb {

using Fn = std::function<std::vector<Tensor>(const std::vector<Tensor>&)>;
using Sample = std::vector<Tensor>;

struct Tolerance {
  double rtol = 0, atol = 0;
};

struct OpEntry {
  OpEntry(std::string name_, std::string family_, Fn fn_, std::string torch_, std::vector<Sample> samples_,
          std::optional<Tolerance> tol_ = std::nullopt, bool random_ = false, bool data_dependent_ = false)
      : name(std::move(name_)), family(std::move(family_)), fn(std::move(fn_)), torch(std::move(torch_)),
        samples(std::move(samples_)), tol(tol_), random(random_), data_dependent(data_dependent_) {}

  std::string name;    // unique; "<op>" or "<op>:<variant>"
  std::string family;  // unary, binary, reduction, softmax, ..., model: opdb_<family>.cpp, the golden file
  Fn fn;
  std::string torch;   // a Python expression over a0, a1, ... giving a tensor or a tuple of tensors
  std::vector<Sample> samples;
  // Float tolerances by dtype when the defaults (tolerance_for) do not fit; empty: defaults.
  std::optional<Tolerance> tol;
  // Outputs are random draws: compared by dtype and shape only.
  bool random = false;
  // The output's size depends on input values (nonzero, unique): tracing raises
  // DataDependentError, and compile() runs the function eagerly (Mode::Traced checks the raise
  // and then runs eagerly too).
  bool data_dependent = false;

  std::string op() const { return name.substr(0, name.find(':')); }
};

// The whole database, built once.
const std::vector<OpEntry>& database();
const OpEntry* find(const std::string& name);

// The default float tolerance against PyTorch and between kiln's modes for `dt`.
Tolerance tolerance_for(ScalarType dt);

// ---- sample builders ---------------------------------------------------------------------------

// start, start + step, ... in `shape`, cast to dtype.
Tensor seq(std::vector<int64_t> shape, ScalarType dtype = kFloat, double start = -2.5, double step = 0.75);
Tensor ints(std::vector<int64_t> shape, int64_t start = -3);
// An int64 or float32 tensor of `values`: 1-D, or of `shape` when one is given.
Tensor i64(std::vector<int64_t> values, std::vector<int64_t> shape = {});
Tensor f32(std::vector<double> values, std::vector<int64_t> shape = {});
// Same shape, transposed, empty, 0-dim, strided slice.
std::vector<Sample> unary_samples(ScalarType dtype);
// Same shape, broadcast, transposed, empty broadcast, 0-dim operand.
std::vector<Sample> binary_samples(ScalarType da, ScalarType db);
// A sine-shaped wave in [-1, 1] sampled at phase, phase + step, ... in `shape`, cast to dtype.
// Computed in plain double arithmetic (a parabola per half period), not with kiln's sin, whose
// last bit follows the host's vector width: golden inputs must be the same on every host.
Tensor wave(std::vector<int64_t> shape, ScalarType dtype = kFloat, double phase = 0.0, double step = 0.37);
// NaN, ±inf, ±0, tiny and large values of a floating dtype (1-D).
Tensor specials(ScalarType dtype = kFloat);
// unary_samples(kFloat) plus specials, f16, bf16 and f64 rows: for floating activations.
std::vector<Sample> float_samples();
// A Python list literal of `t`'s values with its shape (torch.tensor(...) argument).
std::string py_tensor(const Tensor& t);

// Wraps a one-result function.
template <typename F> Fn one(F f) {
  return [f](const std::vector<Tensor>& in) { return std::vector<Tensor>{f(in)}; };
}

// ---- the families ------------------------------------------------------------------------------

void add_unary(std::vector<OpEntry>& db);       // abs, exp, sin, sigmoid, round, isnan, bitwise_not, ...
void add_binary(std::vector<OpEntry>& db);      // add, mul, div, pow, comparisons, logical and bitwise ops, ...
void add_ternary(std::vector<OpEntry>& db);     // where, clamp
void add_cast(std::vector<OpEntry>& db);        // to, clone
void add_pointwise(std::vector<OpEntry>& db);   // lerp, addcmul, addcdiv, nan_to_num, tril, triu
void add_reduction(std::vector<OpEntry>& db);   // sum, prod, amax, amin, any, all, argmax, argmin, max, min
void add_scan(std::vector<OpEntry>& db);        // cumsum, cumprod, cummax, cummin, logcumsumexp
void add_moments(std::vector<OpEntry>& db);     // mean, var
void add_softmax(std::vector<OpEntry>& db);     // softmax, log_softmax, logsumexp
void add_activation(std::vector<OpEntry>& db);  // gelu, silu, relu, elu, hardtanh, ...
void add_norm(std::vector<OpEntry>& db);        // layer/rms/batch/instance/group norm and the native_* forms
void add_linear(std::vector<OpEntry>& db);      // linear, matmul, addmm, baddbmm, cross_entropy, einsum, cdist, pdist
void add_matmul(std::vector<OpEntry>& db);      // mm, bmm
void add_dropout(std::vector<OpEntry>& db);     // dropout, native_dropout
void add_attention(std::vector<OpEntry>& db);   // scaled_dot_product_attention
void add_conv(std::vector<OpEntry>& db);        // convolutions, transposed convolutions
void add_pool(std::vector<OpEntry>& db);        // max/avg/adaptive pooling, unfold, fold
void add_resample(std::vector<OpEntry>& db);    // grid_sample, interpolate, upsample_*, pad by mode
void add_view(std::vector<OpEntry>& db);        // reshape, transpose, select, slice, expand, squeeze, alias, ...
void add_shape(std::vector<OpEntry>& db);       // cat, stack, constant padding
void add_index(std::vector<OpEntry>& db);       // gather/scatter, masked ops, index, embedding, nonzero
void add_sort(std::vector<OpEntry>& db);        // sort, topk, median, mode, unique, randperm, searchsorted
void add_rearrange(std::vector<OpEntry>& db);   // repeat, repeat_interleave, roll, flip, diff
void add_factory(std::vector<OpEntry>& db);     // arange, zeros, full, fill
void add_random(std::vector<OpEntry>& db);      // rand_like, randn_like
void add_models(std::vector<OpEntry>& db);      // family model: a ResNet block, a transformer block, a text classifier

// ---- running an entry ---------------------------------------------------------------------------

enum class Mode { Eager, Traced, Compiled, Dynamic, InterpreterBackend, CudaEager, CudaCompiled, CudaDynamic };
inline constexpr Mode kModes[] = {Mode::Eager, Mode::Traced, Mode::Compiled, Mode::Dynamic, Mode::InterpreterBackend};
// eager; traced and run by rt::interpret on the printed-and-parsed graph; compile() on the cpu
// backend, static and Dynamic::True; compile() on the interpreter backend. The Cuda modes (not
// in kModes: they need a GPU) copy the sample to cuda:0, run eagerly or compiled (static,
// Dynamic::True) there with cuda:0 as the factories' default device, and copy the outputs back
// to the cpu. (Tensors an entry's function captured, such as gather's index, stay on the cpu.)
const char* mode_name(Mode m);
std::vector<Tensor> run(const OpEntry& e, const Sample& in, Mode m);

// The entry's function as `m` runs it, kept for calls on samples of `inputs` tensors: in the
// compiled modes one compile() object, so that the calls after the first are warm.
Fn runner(const OpEntry& e, size_t inputs, Mode m);

// Empty when `got` matches `want`: same dtype and sizes, integers and bools equal, floats
// within `tol` (NaN equal to NaN); random outputs by dtype and sizes only. Else what differs.
std::string compare(const Tensor& want, const Tensor& got, const Tolerance& tol, bool random = false);
// The tolerance of `e` for an output of dtype dt.
Tolerance tolerance_of(const OpEntry& e, ScalarType dt);

// ---- golden values -----------------------------------------------------------------------------

std::string dtype_text(ScalarType t);  // f32, i64, bool, bf16, ...
ScalarType dtype_parse(const std::string& s);
std::string values_line(const Tensor& t);  // "f32 [2,3] : 1.5 -0.25 ..."

struct GoldenValue {
  ScalarType dtype;
  std::vector<int64_t> shape;
  std::vector<double> values;
  bool random = false;
};
struct GoldenRecord {
  std::string torch;
  std::vector<std::string> inputs;  // values_line() of each input, as emitted
  std::optional<std::string> error;  // PyTorch raised this
  std::vector<GoldenValue> outputs;
};
// Records of test/opdb_golden/*.txt keyed by "<entry name>#<sample index>".
const std::map<std::string, GoldenRecord>& golden();
// A contiguous tensor holding a golden value.
Tensor to_tensor(const GoldenValue& v);

}  // namespace kiln::opdb
