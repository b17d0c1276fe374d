// kiln/passes/fuse_siblings.cpp — sibling fusion: pointwise groups over the same grid that read
// the same tensors become one kernel with several outputs (passes/fuse.h).
//
// Fusion gives every materialized value a kernel of its own. Where two such kernels read the
// same inputs — an optimizer's update of a parameter and of its two moments, each reading the
// gradient; a function returning x + 1 and x * 2 — the inputs are read once per kernel. A
// later pointwise group merges into an earlier one (its root becomes one more value the kernel
// stores) when:
//   - both are pointwise over the same sizes;
//   - they read a value in common, or the earlier one already recomputes the later one's root;
//   - everything the later group reads is in memory before the earlier group runs (so moving
//     its work earlier changes no value it reads), and no group in between computes the later
//     root inline (it would load it once it is in memory earlier);
//   - the merged kernel stores at most kMaxRoots values.
#include "passes/fuse.h"

#include <algorithm>
#include <set>
#include <unordered_map>

namespace kiln::passes {

using ir::FusionGroup;
using ir::GroupKind;
using ir::Value;

namespace {

constexpr size_t kMaxRoots = 8;

struct GroupInfo {
  std::set<const Value*> reads;    // values the group loads from memory
  std::set<const Value*> computes; // values its nodes compute (inlined or stored)
};

GroupInfo info_of(const std::vector<const ir::Node*>& nodes, const FusionGroup& grp) {
  GroupInfo info;
  for (int i : grp.nodes)
    for (const Value* o : nodes[static_cast<size_t>(i)]->outputs()) info.computes.insert(o);
  for (int i : grp.nodes)
    for (const Value* in : nodes[static_cast<size_t>(i)]->inputs())
      if (!info.computes.count(in)) info.reads.insert(in);
  return info;
}

std::vector<const Value*> stored(const FusionGroup& grp) {
  std::vector<const Value*> out{grp.root};
  out.insert(out.end(), grp.extra_roots.begin(), grp.extra_roots.end());
  return out;
}

}  // namespace

void merge_sibling_groups(const ir::Graph& g, ir::Fusion& fusion) {
  std::vector<FusionGroup>& groups = fusion.groups;
  std::vector<const ir::Node*> nodes;
  for (const ir::Node* n : g.nodes()) nodes.push_back(n);
  std::vector<GroupInfo> info;
  for (const FusionGroup& grp : groups) info.push_back(info_of(nodes, grp));
  // Where each stored value is produced (group position), for "in memory before".
  std::unordered_map<const Value*, size_t> produced;
  auto note = [&](size_t at) {
    const FusionGroup& grp = groups[at];
    if (grp.kind == GroupKind::Extern || grp.kind == GroupKind::Fallback) {
      for (const Value* o : grp.node->outputs()) produced[o] = at;
    } else {
      for (const Value* v : stored(grp)) produced[v] = at;
    }
  };
  for (size_t i = 0; i < groups.size(); ++i) note(i);
  // Which groups read each value, and which compute it (inline or stored): the candidates of a
  // merge are the earlier groups that read a tensor the later one reads, or already compute its
  // root, so the pass looks only at those instead of at every earlier group.
  std::unordered_map<const Value*, std::vector<size_t>> readers, computers;
  for (size_t i = 0; i < groups.size(); ++i) {
    for (const Value* v : info[i].reads)
      if (!v->type().sizes.empty()) readers[v].push_back(i);
    for (const Value* v : info[i].computes) computers[v].push_back(i);
  }
  std::vector<bool> gone(groups.size(), false);
  for (size_t j = 1; j < groups.size(); ++j) {
    FusionGroup& later = groups[j];
    if (later.kind != GroupKind::Pointwise || !later.extra_roots.empty()) continue;
    // Everything `later` reads must exist before the earlier group runs, and no group between
    // them may compute the later root inline (once the root is in memory earlier, that group
    // would load it: its kernel would no longer be the group fusion made). Both bound i below.
    size_t first = 0;
    for (const Value* v : info[j].reads)
      if (auto it = produced.find(v); it != produced.end()) first = std::max(first, it->second + 1);
    std::vector<size_t> candidates;
    for (size_t k : computers[later.root])
      if (k < j) {
        candidates.push_back(k);  // already computes the root: a candidate, and a bound for the others
        first = std::max(first, k);
      }
    for (const Value* v : info[j].reads)
      if (auto it = readers.find(v); it != readers.end()) candidates.insert(candidates.end(), it->second.begin(), it->second.end());
    std::sort(candidates.begin(), candidates.end());
    for (size_t i : candidates) {
      if (i < first || i >= j) continue;
      FusionGroup& early = groups[i];
      if (gone[i] || early.kind != GroupKind::Pointwise || early.extra_roots.size() + 1 >= kMaxRoots) continue;
      if (early.root->type().sizes != later.root->type().sizes) continue;
      early.extra_roots.push_back(later.root);
      std::vector<int> nodes;
      std::set_union(early.nodes.begin(), early.nodes.end(), later.nodes.begin(), later.nodes.end(),
                     std::back_inserter(nodes));
      early.nodes = std::move(nodes);
      for (const Value* v : info[j].reads)
        if (!v->type().sizes.empty()) readers[v].push_back(i);
      for (const Value* v : info[j].computes) computers[v].push_back(i);
      info[i].reads.insert(info[j].reads.begin(), info[j].reads.end());
      info[i].computes.insert(info[j].computes.begin(), info[j].computes.end());
      for (const Value* v : info[i].computes) info[i].reads.erase(v);
      produced[later.root] = i;
      gone[j] = true;
      break;
    }
  }
  std::vector<FusionGroup> kept;
  for (size_t i = 0; i < groups.size(); ++i)
    if (!gone[i]) kept.push_back(std::move(groups[i]));
  groups = std::move(kept);
}

}  // namespace kiln::passes
