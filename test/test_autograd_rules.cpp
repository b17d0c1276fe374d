// kiln/test/test_autograd_rules.cpp — the derivative table (frontend/derivatives.h) covers the
// op set, as the registry test does for shape functions.
//
// Every prim has an entry: a rule, or the reason it has none. A Core or Composite op may go
// without one (it is differentiated through its decomposition), but one with a rule that a
// transform keeps whole must be one whose decomposition exists. Custom ops have no entries.
#include "frontend/derivatives.h"
#include "ir/op.h"

#include <gtest/gtest.h>

namespace kiln {
namespace {

TEST(AutogradRules, EveryPrimHasARuleOrAReason) {
  int rules = 0, none = 0;
  for (int k = 0; k < ir::kNumOps; ++k) {
    const ir::OpInfo& info = ir::op_info(static_cast<ir::OpKind>(k));
    if (info.family == ir::OpFamily::Custom) continue;
    const autograd::Derivative* d = autograd::derivative(static_cast<ir::OpKind>(k));
    if (info.level == ir::OpLevel::Prim) {
      EXPECT_TRUE(d) << info.name << " is a prim without a derivative entry";
    }
    if (!d) continue;
    if (d->fn) {
      ++rules;
      EXPECT_EQ(d->not_differentiable, nullptr) << info.name;
    } else {
      ++none;
      ASSERT_NE(d->not_differentiable, nullptr) << info.name << ": an entry without a rule must give its reason";
      EXPECT_GT(std::string(d->not_differentiable).size(), 10u) << info.name;
    }
  }
  EXPECT_GT(rules, 80);
  EXPECT_GT(none, 10);
}

// The composites whose direct formula beats differentiating the decomposition have their own.
TEST(AutogradRules, CompositesWithRulesOfTheirOwn) {
  for (ir::OpKind op : {ir::OpKind::softmax, ir::OpKind::log_softmax, ir::OpKind::logsumexp, ir::OpKind::layer_norm,
                        ir::OpKind::native_layer_norm, ir::OpKind::max_pool2d_with_indices, ir::OpKind::cdist,
                        ir::OpKind::pdist, ir::OpKind::native_dropout, ir::OpKind::scaled_dot_product_attention})
    EXPECT_TRUE(autograd::has_rule(op)) << ir::op_name(op);
  // The statistics of native_layer_norm are not differentiable, as in PyTorch.
  EXPECT_EQ(autograd::derivative(ir::OpKind::native_layer_norm)->outputs, autograd::bit(0));
}

}  // namespace
}  // namespace kiln
