// kiln/test/test_compile_indexed.cpp — gather and index_select read inside generated kernels.
//
// A compiled gather, index_select, embedding or cross_entropy loads the index, checks it
// against the indexed dimension (ir::CheckKind::InBounds) and loads the input at the checked
// position (ir::value_expr), fused with what surrounds it: cross_entropy's per-row loss reads
// the target's logit in the row kernel of the row's maximum and sum. Results equal eager mode;
// an index out of bounds raises the eager op's error, with its value, dimension and size.
#include "kiln/kiln.h"
#include "runtime/pipeline.h"
#include "test_support/check.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace kiln {
namespace {

using test::error_of;

std::vector<Tensor> reads(const Tensor& x, const Tensor& t) {
  return {x.gather(1, t.unsqueeze(1)) * 2, x.index_select(1, t) + 1, embedding(x.t(), t).neg(), cross_entropy(x, t),
          cross_entropy(x, t, std::nullopt, "none")};
}

TEST(CompileIndexed, ReadsEqualEagerAndRunInKernels) {
  manual_seed(3);
  const Tensor x = randn({6, 10});
  const Tensor t = tensor({9, 0, 3, 3, 7, 1}, kInt64);
  auto f = compile([](const Tensor& a, const Tensor& b) { return reads(a, b); });
  const std::vector<Tensor> want = reads(x, t), got = f(x, t);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) test::expect_close(got[i], want[i].to(kDouble).to_vector<double>(), 1e-6, 1e-6);

  // The plan: kernels alone, no library gather.
  TracedProgram p = trace([](const std::vector<Tensor>& in) { return reads(in[0], in[1]); }, {x, t});
  rt::DriverOptions o;
  o.name = "indexed";
  o.stop_before_compile = true;
  rt::Compilation c = rt::compile_graph(p.graph, *rt::find_backend("cpu"), o);
  for (const ir::PlanStep& st : c.plan.steps) EXPECT_EQ(st.kind, ir::StepKind::Kernel) << c.plan.str();
}

TEST(CompileIndexed, AnIndexOutOfBoundsRaisesTheEagerError) {
  const Tensor x = randn({4, 5});
  const Tensor bad = tensor({0, 5, 1, 2}, kInt64), negative = tensor({0, 1, -1, 2}, kInt64);
  auto g = compile([](const Tensor& a, const Tensor& b) { return a.gather(1, b.unsqueeze(1)); });
  auto s = compile([](const Tensor& a, const Tensor& b) { return a.index_select(1, b); });
  for (const Tensor& idx : {bad, negative}) {
    const std::string eager = error_of([&] { (void)x.gather(1, idx.unsqueeze(1)); });
    EXPECT_NE(eager, "<no error>");
    EXPECT_EQ(error_of([&] { (void)g(x, idx); }), eager);
    EXPECT_NE(error_of([&] { (void)s(x, idx); }).find("out of bounds for dimension 1 with size 5"), std::string::npos);
  }
  EXPECT_EQ(error_of([&] { (void)g(x, bad); }), "[gather] index 5 is out of bounds for dimension 1 with size 5");
  // The compiled function keeps working after the error.
  EXPECT_EQ(g(x, tensor({4, 3, 2, 1}, kInt64)).sizes().vec(), (std::vector<int64_t>{4, 1}));
}

}  // namespace
}  // namespace kiln
