// kiln/test/test_fusion_groups.cpp — the fuse pass on its own: which values it materializes,
// the kind and nodes of each group, and that kernel building follows its groups exactly.
#include "ir/fusion.h"
#include "ir/text.h"
#include "passes/fuse.h"
#include "passes/lower.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

namespace kiln {
namespace {

using ir::FusionGroup;
using ir::GroupKind;
using ir::RowShape;

struct Fused {
  std::unique_ptr<ir::Graph> graph;
  ir::Fusion fusion;
  // The value each group stores, by name ("" for calls).
  std::vector<std::string> roots() const {
    std::vector<std::string> out;
    for (const FusionGroup& g : fusion.groups) out.push_back(g.root ? g.root->name() : "");
    return out;
  }
  // Names of the values the group's nodes define.
  std::vector<std::string> node_names(size_t group) const {
    std::vector<const ir::Node*> nodes;
    for (const ir::Node* n : graph->nodes()) nodes.push_back(n);
    std::vector<std::string> out;
    for (int n : fusion.groups.at(group).nodes) out.push_back(nodes.at(static_cast<size_t>(n))->output()->name());
    return out;
  }
};

Fused fuse_text(const std::string& text, passes::LowerOptions opts = {}) {
  Fused f;
  f.graph = ir::parse_graph(text);
  f.fusion = passes::fuse(*f.graph, opts);
  // Kernel building follows the groups: one kernel per group (two for a split reduction), one
  // step per call, and every kernel computes exactly its group's nodes (checked inside).
  const ir::ExecPlan plan = passes::build_kernels(*f.graph, f.fusion, opts);
  size_t kernels = 0;
  for (const FusionGroup& g : f.fusion.groups) kernels += static_cast<size_t>(g.kernels());
  EXPECT_EQ(plan.kernels().size(), kernels) << plan.str();
  EXPECT_EQ(plan.steps.size(), kernels + static_cast<size_t>(std::count_if(f.fusion.groups.begin(), f.fusion.groups.end(),
                                                                             [](const FusionGroup& g) { return g.kernels() == 0; })));
  return f;
}

TEST(FusionGroups, SoftmaxIsOneRowGroupWithTwoReductions) {
  Fused f = fuse_text(R"(graph(%x : f32[16, 100]) {
  %m : f32[16, 1] = amax(%x, dims=[1], keepdim=true)
  %me : f32[16, 100] = expand(%m, size=[16, 100])
  %d : f32[16, 100] = sub(%x, %me)
  %e : f32[16, 100] = exp(%d)
  %s : f32[16, 1] = sum(%e, dims=[1], keepdim=true)
  %se : f32[16, 100] = expand(%s, size=[16, 100])
  %y : f32[16, 100] = div(%e, %se, rounding_mode=none)
  return (%y)
})");
  ASSERT_EQ(f.fusion.groups.size(), 1u);
  const FusionGroup& g = f.fusion.groups[0];
  EXPECT_EQ(g.kind, GroupKind::Row);
  EXPECT_EQ(g.row_shape, RowShape::Full);
  ASSERT_EQ(g.reductions.size(), 2u);
  EXPECT_EQ(g.reductions[0]->output()->name(), "m");  // in the order the walk from y meets them
  EXPECT_EQ(g.reductions[1]->output()->name(), "s");
  EXPECT_EQ(f.node_names(0), (std::vector<std::string>{"m", "me", "d", "e", "s", "se", "y"}));
}

TEST(FusionGroups, AReductionReadInAnotherShapeIsMaterializedFirst) {
  // y's grid is [30, 20]; the row sum's domain is [20, 30]: no row kernel computes both.
  Fused f = fuse_text(R"(graph(%x : f32[20, 30], %z : f32[30, 20]) {
  %s : f32[20] = sum(%x, dims=[1], keepdim=false)
  %r : f32[1, 20] = reshape(%s, size=[1, 20])
  %e : f32[30, 20] = expand(%r, size=[30, 20])
  %y : f32[30, 20] = add(%e, %z)
  return (%y)
})");
  EXPECT_EQ(f.roots(), (std::vector<std::string>{"s", "y"}));
  EXPECT_EQ(f.fusion.groups[0].kind, GroupKind::Row);
  EXPECT_EQ(f.fusion.groups[0].row_shape, RowShape::Kept);
  EXPECT_EQ(f.fusion.groups[1].kind, GroupKind::Pointwise);
  EXPECT_EQ(f.node_names(1), (std::vector<std::string>{"r", "e", "y"}));
}

TEST(FusionGroups, AReductionReadAtAnotherRowIsMaterializedFirst) {
  // y has the reduction's full domain, but reads the row sum transposed: element (i, j) needs
  // the sum of row j, which the kernel's row i does not compute.
  Fused f = fuse_text(R"(graph(%x : f32[20, 20]) {
  %s : f32[20, 1] = sum(%x, dims=[1], keepdim=true)
  %e : f32[20, 20] = expand(%s, size=[20, 20])
  %t : f32[20, 20] = permute(%e, dims=[1, 0])
  %y : f32[20, 20] = add(%x, %t)
  return (%y)
})");
  EXPECT_EQ(f.roots(), (std::vector<std::string>{"s", "y"}));
  EXPECT_EQ(f.fusion.groups[0].row_shape, RowShape::KeepDim);
  EXPECT_EQ(f.fusion.groups[1].kind, GroupKind::Pointwise);
  // The same read untransposed fuses: one row kernel.
  Fused g = fuse_text(R"(graph(%x : f32[20, 20]) {
  %s : f32[20, 1] = sum(%x, dims=[1], keepdim=true)
  %e : f32[20, 20] = expand(%s, size=[20, 20])
  %y : f32[20, 20] = add(%x, %e)
  return (%y)
})");
  EXPECT_EQ(g.roots(), (std::vector<std::string>{"y"}));
  EXPECT_EQ(g.fusion.groups[0].row_shape, RowShape::Full);
}

// A row sum read by two outputs of different shapes (the second transposed, so that the two
// consumers stay two kernels).
constexpr const char* kSharedRowSum = R"(graph(%x : f32[20, 30]) {
  %s : f32[20] = sum(%x, dims=[1], keepdim=false)
  %k : f32[20, 1] = reshape(%s, size=[20, 1])
  %e : f32[20, 30] = expand(%k, size=[20, 30])
  %a : f32[20, 30] = sub(%x, %e)
  %m : f32[20, 30] = mul(%x, %e)
  %t : f32[30, 20] = permute(%m, dims=[1, 0])
  return (%a, %t)
})";

TEST(FusionGroups, ASharedReductionIsItsOwnGroup) {
  Fused f = fuse_text(kSharedRowSum);
  EXPECT_EQ(f.roots(), (std::vector<std::string>{"s", "a", "t"}));
  // Both consumers recompute the cheap reshape/expand: each group lists them.
  EXPECT_EQ(f.node_names(1), (std::vector<std::string>{"k", "e", "a"}));
  EXPECT_EQ(f.node_names(2), (std::vector<std::string>{"k", "e", "m", "t"}));
}

// Two outputs of the same shape reading the same tensors: one kernel stores both
// (passes/fuse_siblings.cpp), so x and the row sum are read once.
TEST(FusionGroups, SiblingOutputsShareOneKernel) {
  Fused f = fuse_text(R"(graph(%x : f32[20, 30]) {
  %s : f32[20] = sum(%x, dims=[1], keepdim=false)
  %k : f32[20, 1] = reshape(%s, size=[20, 1])
  %e : f32[20, 30] = expand(%k, size=[20, 30])
  %a : f32[20, 30] = sub(%x, %e)
  %m : f32[20, 30] = mul(%x, %e)
  return (%a, %m)
})");
  EXPECT_EQ(f.roots(), (std::vector<std::string>{"s", "a"}));
  ASSERT_EQ(f.fusion.groups[1].extra_roots.size(), 1u);
  EXPECT_EQ(f.fusion.groups[1].extra_roots[0]->name(), "m");
  EXPECT_EQ(f.node_names(1), (std::vector<std::string>{"k", "e", "a", "m"}));
  // Outputs of another shape, or reading nothing in common, stay apart.
  Fused g = fuse_text(R"(graph(%x : f32[8], %y : f32[8], %z : f32[4]) {
  %a : f32[8] = neg(%x)
  %b : f32[8] = exp(%y)
  %c : f32[4] = abs(%z)
  return (%a, %b, %c)
})");
  EXPECT_EQ(g.roots(), (std::vector<std::string>{"a", "b", "c"}));
}

TEST(FusionGroups, ATransposedMatmulOperandIsReadInPlace) {
  Fused f = fuse_text(R"(graph(%a : f32[4, 8], %b : f32[4, 8]) {
  %bt : f32[8, 4] = permute(%b, dims=[1, 0])
  %m : f32[4, 4] = mm(%a, %bt)
  %y : f32[4, 4] = neg(%m)
  return (%y)
})");
  ASSERT_EQ(f.fusion.groups.size(), 2u);
  const FusionGroup& mm = f.fusion.groups[0];
  EXPECT_EQ(mm.kind, GroupKind::Extern);
  EXPECT_EQ(mm.lowering, "blas");
  EXPECT_EQ(mm.operand_views, (std::vector<bool>{false, true}));
  EXPECT_EQ(f.roots(), (std::vector<std::string>{"", "y"}));
  EXPECT_EQ(f.fusion.labels(), (std::vector<std::string>{"extern mm", "k0"}));
}

constexpr const char* kExpSum = R"(graph(%x : f32[512, 512]) {
  %e : f32[512, 512] = exp(%x)
  %s : f32[] = sum(%e, dims=[0, 1], keepdim=false)
  return (%s)
})";

TEST(FusionGroups, ALargeFullReductionIsSplitWithItsPrologue) {
  Fused f = fuse_text(kExpSum);
  ASSERT_EQ(f.fusion.groups.size(), 1u);
  EXPECT_EQ(f.fusion.groups[0].kind, GroupKind::SplitReduction);
  EXPECT_EQ(f.node_names(0), (std::vector<std::string>{"e", "s"}));
  EXPECT_EQ(f.fusion.labels(), (std::vector<std::string>{"k0, k1"}));
  // Below the split threshold it is one row kernel.
  passes::LowerOptions o;
  o.split_reduction_min = 1 << 20;
  Fused g = fuse_text(kExpSum, o);
  EXPECT_EQ(g.fusion.groups[0].kind, GroupKind::Row);
}

TEST(FusionGroups, FusedGraphMarksEachNodeWithItsGroups) {
  Fused f = fuse_text(kSharedRowSum);
  const std::string text = ir::print_fused_graph(*f.graph, f.fusion);
  EXPECT_NE(text.find("keepdim=false)  # k0\n"), std::string::npos) << text;
  EXPECT_NE(text.find("size=[20, 1])  # k1, k2\n"), std::string::npos) << text;
  EXPECT_NE(text.find("sub(%x, %e)  # k1\n"), std::string::npos) << text;
  EXPECT_NE(text.find("mul(%x, %e)  # k2\n"), std::string::npos) << text;
  EXPECT_NE(text.find("permute(%m, dims=[1, 0])  # k2\n"), std::string::npos) << text;
  // Still the same graph when parsed back.
  EXPECT_EQ(ir::print_graph(*ir::parse_graph(text)), ir::print_graph(*f.graph));
}

}  // namespace
}  // namespace kiln
