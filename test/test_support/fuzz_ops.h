// kiln/test/test_support/fuzz_ops.h — helpers shared by the fuzzer's op table files
// (fuzz_ops.cpp: pointwise, reductions, scans; fuzz_ops_shape.cpp: views, joining, indexing,
// matmul, nn ops, factories, in-place ops).
#pragma once

#include "test_support/fuzz_program.h"

#include <string>
#include <vector>

namespace kiln::fuzz {

using GenFn = std::function<bool(GenCtx&, Node&)>;
using RunFn = std::function<Tensor(const std::vector<Tensor>&, const Attrs&)>;
using TorchFn = std::function<std::string(const std::vector<std::string>&, const Attrs&)>;
using Dims = std::vector<std::array<int64_t, 2>>;

enum class Pref { Any, Float, Int, IntNoBool, NonBool };
bool prefers(const GenValue& v, Pref p);
// A value preferring `p` (most of the time), else any value; -1 if none.
int pick_pref(GenCtx& c, Pref p);
// Dims broadcastable in both variants.
bool broadcastable(const Dims& a, const Dims& b);
// A normalized-or-negative dim of a rank-r value (r >= 1).
int64_t random_dim(GenCtx& c, int64_t r);
// A distinct random subset of [0, r), in random order, possibly negative-indexed.
std::vector<int64_t> random_dims_subset(GenCtx& c, int64_t r, bool nonempty);
// A second operand for a binary op with a: a fresh broadcastable input, an existing
// broadcastable value, a itself, or (scalar_ok) nothing (the caller sets attr `other`).
int second_operand(GenCtx& c, int a, bool allow_scalar_none);

void add_pointwise_ops(std::vector<OpSpec>& t);
void add_reduction_ops(std::vector<OpSpec>& t);
void add_shape_ops(std::vector<OpSpec>& t);
void add_nn_ops(std::vector<OpSpec>& t);

}  // namespace kiln::fuzz
