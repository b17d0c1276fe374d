// kiln/test/test_support/fuzz_known_bugs.h — the fuzzer's allowlist of known bugs.
//
// Bugs being fixed elsewhere (numbered as in the fuzzer's brief, issue 9); each entry matches
// narrowly and is deleted when its fix lands. known_bug() returns the bug number a failure
// matches, or 0. Used by test_fuzz_diff.cpp and test_fuzz_golden.cpp.
#pragma once

#include "test_support/fuzz_program.h"

#include <string>
#include <string_view>

namespace kiln::fuzz {

// Known bugs being fixed in main (the brief's list); delete each entry when its fix lands.
// Returns the bug number a failure matches, or 0. Matching is deliberately narrow.
inline int known_bug(const Program& p, const Failure& f) {
  auto has_op = [&](std::string_view op) {
    for (const Node& n : p.nodes)
      if (n.op == op) return true;
    return false;
  };
  const std::string& m = f.message;
  // 1: mm/matmul/linear with size-1 dims and unusual strides return an unwritten output.
  // Eager runs one-op compiled kernels, so it shows there too.
  if ((has_op("mm") || has_op("matmul") || has_op("linear") || has_op("bmm")) && m.find("element") != std::string::npos)
    return 1;
  // 2: keepdim reductions over leading size-1 dims raise an internal error (seen here as
  // "outer_reduction_tile needs a grid" for sum(x - amax(x, {1}, true)) with x of [1, 1, 2]).
  if (m.find("outer_reduction_tile needs a grid") != std::string::npos) return 2;
  // 3: Dynamic::True: a size that is 1 when traced, reached via reshape/slice, is not
  // specialized when broadcast.
  if (f.mode == Mode::DynamicV0 || f.mode == Mode::DynamicV1)
    if (m.find("[expand]") != std::string::npos && m.find("existing size (") != std::string::npos) return 3;
  return 0;
}

// Golden-only: PyTorch raises and kiln computes a value (a NEW divergence found by this fuzzer,
// not yet triaged): hypot on integer inputs ("hypot_cpu" not implemented for 'Byte'). Returns
// 100 when the program matches.
inline int torch_divergence(const Program& p, const Failure& f) {
  if (f.message.find("reference raised kiln::Error (torch raised)") == std::string::npos) return 0;
  for (const Node& n : p.nodes)
    if (n.op == "hypot") return 100;
  return 0;
}

// NEW finding (not yet triaged, reported with issue 9): a compiled kernel that fuses an
// f16/bf16 reduction (prod of f16[6]) into a consumer of a wider dtype (sub with an f32 0-dim)
// skips rounding the reduction's result to f16, so the value differs from the interpreter (and
// PyTorch) by up to one f16 ulp. Matches compiled-mode value mismatches in programs with an
// f16/bf16 input. Returns 101.
inline int unrounded_half_intermediate(const Program& p, const Failure& f) {
  if (f.mode != Mode::Static && f.mode != Mode::DynamicV0 && f.mode != Mode::DynamicV1) return 0;
  if (f.message.find("elements differ") == std::string::npos) return 0;
  for (const Node& n : p.nodes)
    if (n.op == "input" && (n.attrs.raw("dtype") == "f16" || n.attrs.raw("dtype") == "bf16")) return 101;
  return 0;
}

}  // namespace kiln::fuzz
