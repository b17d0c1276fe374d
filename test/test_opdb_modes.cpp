// kiln/test/test_opdb_modes.cpp — the op database (test_support/opdb.h) run across kiln's modes.
//
// Every sample runs eagerly and as a traced graph executed by the interpreter: the two must
// agree exactly (dtype, sizes, values) unless the result depends on the order of float
// additions — a library kernel (an Extern op: BLAS, oneDNN) or a float sum or product, which
// eager kernels vectorize — or on a transcendental function (kiln's own f32 exp, log, tanh,
// erf, ... and libmvec's others, within 4 ulp of the C library the interpreter calls,
// docs/compiler.md). And each traced graph must verify and survive a
// print -> parse -> print round trip. Compiled execution (fused, generated kernels), static and
// Dynamic::True, must agree with the interpreter on the same program within the entry's float
// tolerance (libmvec's transcendental functions are within 4 ulp; float sums accumulate in a
// different order). A sample that raises kiln::Error eagerly must raise it in every mode.
// Under AddressSanitizer the two compiled modes split the entries between them (runs_entry).
// test_opdb_golden.cpp checks the same samples against PyTorch.
#include "frontend/decompositions.h"
#include "ir/graph.h"
#include "passes/decompose.h"
#include "test_support/opdb.h"
#include "test_support/sanitizer.h"
#include "test_support/vector_math.h"

#include <gtest/gtest.h>

namespace kiln {
namespace {

// Whether the graph calls a library kernel, directly or inside an op's decomposition (the
// weight gradient inside convolution_backward), whose order of additions may depend on what
// ran before it in the process (oneDNN's cached primitives).
// (Decomposes g in place.)
bool calls_library(ir::Graph& g) {
  passes::DecomposeOptions o;
  o.expand = [](const ir::Node& n) { return trace_decomposition(n); };
  o.keep = [](const ir::Node& n) { return n.info().has(ir::traits::Extern); };
  passes::decompose(g, o);
  for (const ir::Node* n : g.nodes())
    if (n->info().has(ir::traits::Extern)) return true;
  return false;
}

// Whether the sample's traced graph adds floats in an order its kernels choose, or computes
// math with kiln's own vector functions or libmvec's.
bool order_dependent(const opdb::OpEntry& e, const opdb::Sample& in) {
  try {
    TracedProgram p = trace(e.fn, in);
    for (const ir::Node* n : p.graph->nodes()) {
      const bool sums = n->op() == ir::OpKind::sum || n->op() == ir::OpKind::prod;
      if (sums && is_floating_point(n->input(0)->type().dtype)) return true;
      if (test::uses_vector_math(n->op()) && is_floating_point(n->output()->type().dtype)) return true;
    }
    return calls_library(*p.graph);
  } catch (const Error&) {
  }
  return false;
}

// Which entries a mode runs. All of them, except under AddressSanitizer, where the two
// compiled modes take alternate entries: each entry still goes through compile() under the
// sanitizer once, and the cost that doubles it, LLVM's (not sanitized), is spent once. The
// release pass runs every entry in both.
bool runs_entry(opdb::Mode m, size_t index) {
  if (!test::kAddressSanitizer || (m != opdb::Mode::Compiled && m != opdb::Mode::Dynamic)) return true;
  return index % 2 == (m == opdb::Mode::Compiled ? 0u : 1u);
}

// Runs every sample in `m` and compares it with the traced graph on the interpreter (`exact`:
// floats too must be equal). Returns the number of samples compared.
int check_against_interpreter(opdb::Mode m, bool exact) {
  int checked = 0;
  size_t index = 0;
  for (const opdb::OpEntry& e : opdb::database()) {
    if (!runs_entry(m, index++)) continue;
    for (size_t s = 0; s < e.samples.size(); ++s) {
      SCOPED_TRACE(e.name + " sample " + std::to_string(s) + ", " + opdb::mode_name(m));
      const opdb::Sample& in = e.samples[s];
      std::vector<Tensor> ref;
      try {
        ref = opdb::run(e, in, opdb::Mode::Traced);
      } catch (const Error&) {
        EXPECT_THROW(opdb::run(e, in, m), Error) << "the interpreter raised; this mode did not";
        continue;
      }
      std::vector<Tensor> got;
      EXPECT_NO_THROW(got = opdb::run(e, in, m));
      if (got.size() != ref.size()) {
        ADD_FAILURE() << got.size() << " outputs, expected " << ref.size();
        continue;
      }
      for (size_t k = 0; k < ref.size(); ++k) {
        const bool equal = exact && !order_dependent(e, in);
        const opdb::Tolerance tol = equal ? opdb::Tolerance{} : opdb::tolerance_of(e, ref[k].dtype());
        const std::string diff = opdb::compare(ref[k], got[k], tol, e.random);
        EXPECT_TRUE(diff.empty()) << "output " << k << ": " << diff;
      }
      ++checked;
    }
  }
  return checked;
}

TEST(OpDb, EagerAndTracedInterpreterAgree) { EXPECT_GT(check_against_interpreter(opdb::Mode::Eager, true), 300); }
TEST(OpDb, CompiledAgreesWithInterpreter) {
  EXPECT_GT(check_against_interpreter(opdb::Mode::Compiled, false), test::kAddressSanitizer ? 150 : 300);
}
// Every contiguous input dim of size >= 2 symbolic: the kernels read their sizes at run time.
TEST(OpDb, DynamicCompiledAgreesWithInterpreter) {
  EXPECT_GT(check_against_interpreter(opdb::Mode::Dynamic, false), test::kAddressSanitizer ? 150 : 300);
}

}  // namespace
}  // namespace kiln
