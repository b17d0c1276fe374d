// kiln/passes/channels_last.cpp — the 4-D values a cpu plan keeps channels-last (passes/lower.h,
// LowerOptions::channels_last).
//
// oneDNN's convolution kernels read and write NHWC ("acdb" in its terms): given NCHW tensors, a
// convolution call reorders its input in and its output out on every call. On the bench U-Net
// those reorders took 1.07 ms of a 5.8 ms forward (ONEDNN_VERBOSE=1; issue 33). As
// torch.compile's layout optimization does, the activations between convolutions are kept
// channels-last instead: their buffers have NHWC strides, the convolution call reads and writes
// them in place, and a pointwise kernel that stores one walks it in memory order
// (passes/lower.cpp, build_kernel), so batch norm, relu, a residual add, max pooling or a
// channel cat between two convolutions reads and writes contiguously.
//
// A value is kept channels-last when
//   - it is 4-D f32, the output of a non-transposed convolution the "onednn" library runs or
//     the value a pointwise kernel stores, and not a graph output;
//   - every node that reads it is computed inside pointwise kernels, or is such a convolution
//     reading it as its input in memory (not through a view);
//   - and the graph has such a convolution at all.
// Anything else (a row kernel, another library call, a view a call reads in place, the
// caller) reads the value as it reads any strided buffer, so a value it reads stays NCHW.
#include "passes/lower.h"

#include "base/error.h"

#include <map>

namespace kiln::passes {

using ir::GroupKind;
using ir::Node;
using ir::OpKind;
using ir::Value;

namespace {

bool nhwc_convolution(const ir::FusionGroup& grp) {
  if (grp.kind != GroupKind::Extern || grp.lowering != "onednn" || grp.node->op() != OpKind::convolution) return false;
  const Node* n = grp.node;
  return !n->attr<bool>("transposed") && n->input(0)->type().rank() == 4 && n->output()->type().dtype == ScalarType::Float;
}

}  // namespace

std::set<const Value*> channels_last_values(const ir::Graph& g, const ir::Fusion& fusion) {
  std::map<const Node*, std::vector<const ir::FusionGroup*>> groups_of;  // the groups computing each node
  std::vector<const Node*> nodes;
  for (const Node* n : g.nodes()) nodes.push_back(n);
  std::set<const Value*> candidates;
  bool any_conv = false;
  for (const ir::FusionGroup& grp : fusion.groups) {
    for (int i : grp.nodes) groups_of[nodes.at(static_cast<size_t>(i))].push_back(&grp);
    if (nhwc_convolution(grp)) {
      any_conv = true;
      candidates.insert(grp.node->output());
    } else if (grp.kind == GroupKind::Pointwise) {
      candidates.insert(grp.root);
      candidates.insert(grp.extra_roots.begin(), grp.extra_roots.end());
    }
  }
  std::set<const Value*> out;
  if (!any_conv) return out;
  for (const Value* v : candidates) {
    if (v->type().rank() != 4 || v->type().dtype != ScalarType::Float) continue;
    bool ok = true;
    for (const ir::Use& u : v->uses()) {
      if (!u.user) {  // a graph output
        ok = false;
        break;
      }
      auto it = groups_of.find(u.user);
      if (it == groups_of.end()) {  // read by no group: a view a call reads in place
        ok = false;
        break;
      }
      // A view of it that is a graph output may be returned as a view of its memory
      // (passes/fuse.cpp), which needs the contiguous layout.
      bool returned_view = false;
      for (const ir::Value* o : u.user->outputs())
        for (const ir::Use& ou : o->uses()) returned_view |= ou.user == nullptr && u.user->info().family == ir::OpFamily::View;
      if (returned_view) {
        ok = false;
        break;
      }
      for (const ir::FusionGroup* grp : it->second) {
        const bool conv_input = nhwc_convolution(*grp) && grp->node == u.user && u.index == 0 &&
                                !(grp->operand_views.size() > 0 && grp->operand_views[0]);
        if (grp->kind != GroupKind::Pointwise && !conv_input) ok = false;
      }
      if (!ok) break;
    }
    if (ok) out.insert(v);
  }
  return out;
}

std::vector<ir::Expr> channels_last_strides(const std::vector<ir::Expr>& sizes) {
  if (sizes.size() != 4) internal_fail("channels_last_strides: a rank-{} shape", sizes.size());
  const ir::Expr c = sizes[1], wc = sizes[3] * c;
  return {sizes[2] * wc, ir::Expr(1), wc, c};
}

}  // namespace kiln::passes
