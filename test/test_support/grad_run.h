// kiln/test/test_support/grad_run.h — running an op-database sample for its gradients, as
// test_opdb_gradcheck.cpp and test_opdb_golden_grad.cpp (and tools/opdb_golden_grad.py) do.
//
// The sample's floating inputs become f64 leaves that require grad; the entry's function runs
// on fresh copies of them (a function may write into its inputs, and a leaf that requires grad
// cannot be written); its floating outputs that require grad are the differentiable ones, and
// the scalar whose gradient is taken is sum_j <out_j, cotangent(out_j's sizes, j)>.
#pragma once

#include "test_support/opdb.h"

#include <optional>
#include <string>
#include <vector>

namespace kiln::opdb {

// The database's families (test_support/opdb.h), for tests made one per family at load time,
// before the database may be built; GradCheckFamilies.EveryFamilyIsChecked keeps it in step.
const std::vector<std::string>& families();

// ((7k + 5j) mod 13 - 6) / 4 at element k (row-major) of output j: exact in binary, the same in
// tools/opdb_golden_grad.py.
Tensor cotangent(IntArrayRef sizes, size_t j);

struct GradRun {
  Mode mode = Mode::Eager;
  Fn fn;                            // the entry's function as `mode` runs it (opdb::runner)
  std::vector<Tensor> leaves;       // the sample, floating inputs as f64 leaves
  std::vector<size_t> inputs;       // which inputs are leaves
  std::vector<Tensor> outputs;
  std::vector<size_t> diff_outputs;  // floating outputs that require grad
};

// Null when an input is not finite, no input is floating, or the function raises. `m`: how the
// function runs (Mode::Compiled and Mode::Dynamic: a compiled training entry, whose results'
// grad_fn runs the compiled backward).
// `error`, when given, receives the message of the kiln::Error that made it null.
std::optional<GradRun> grad_run(const OpEntry& e, const Sample& s, Mode m = Mode::Eager, std::string* error = nullptr);

// The contraction of the differentiable outputs of `outs` with their cotangents (f64, 0-dim);
// NaN where an output's size differs from `like`'s (a value-dependent size that changed).
Tensor contract(const std::vector<Tensor>& outs, const GradRun& like);

// The gradients of the contraction with respect to the leaves (undefined where unused).
std::vector<Tensor> grads_of(const GradRun& r);

}  // namespace kiln::opdb
