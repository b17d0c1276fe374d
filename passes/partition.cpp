// kiln/passes/partition.cpp — the partition pass (passes/partition.h): a minimum cut over the
// joint graph, then the two graphs cloned from it.
//
// The flow network has two vertices per forward-side value producer (a joint node that does not
// depend on a cotangent, or a joint input): p_in -> p_out with the bytes of p's outputs as
// capacity. Cutting that edge means saving p's outputs. Inputs, and ops that may not be
// recomputed, hang from the source (they are available in the forward only); every use is an
// edge of unbounded capacity from the producer's p_out to the user's p_in; a backward node's use
// of a forward value goes to the sink. The cut separates the source from the sink at least cost:
// what lies on the source side is computed in the forward, the cut edges are saved, and the
// forward values on the sink side that the backward needs are recomputed there.
#include "passes/partition.h"

#include "base/error.h"
#include "ir/op.h"
#include "passes/equality_operands.h"

#include <fmt/format.h>

#include <algorithm>
#include <deque>
#include <limits>
#include <map>
#include <set>
#include <unordered_map>
#include <unordered_set>

namespace kiln::passes {

namespace {

constexpr int64_t kInf = std::numeric_limits<int64_t>::max() / 4;

// Dinic's maximum flow; after run(), reachable() is the source side of a minimum cut.
class MaxFlow {
 public:
  explicit MaxFlow(size_t n) : adj_(n) {}
  void add(size_t u, size_t v, int64_t cap) {
    adj_[u].push_back(edges_.size());
    edges_.push_back({v, cap});
    adj_[v].push_back(edges_.size());
    edges_.push_back({u, 0});
  }
  void run(size_t s, size_t t) {
    while (levels(s, t)) {
      it_.assign(adj_.size(), 0);
      while (push(s, t, kInf) > 0) {
      }
    }
  }
  std::vector<bool> reachable(size_t s) const {
    std::vector<bool> seen(adj_.size(), false);
    std::deque<size_t> q{s};
    seen[s] = true;
    while (!q.empty()) {
      const size_t u = q.front();
      q.pop_front();
      for (size_t e : adj_[u])
        if (edges_[e].cap > 0 && !seen[edges_[e].to]) {
          seen[edges_[e].to] = true;
          q.push_back(edges_[e].to);
        }
    }
    return seen;
  }

 private:
  struct Edge {
    size_t to;
    int64_t cap;
  };
  bool levels(size_t s, size_t t) {
    level_.assign(adj_.size(), -1);
    std::deque<size_t> q{s};
    level_[s] = 0;
    while (!q.empty()) {
      const size_t u = q.front();
      q.pop_front();
      for (size_t e : adj_[u])
        if (edges_[e].cap > 0 && level_[edges_[e].to] < 0) {
          level_[edges_[e].to] = level_[u] + 1;
          q.push_back(edges_[e].to);
        }
    }
    return level_[t] >= 0;
  }
  int64_t push(size_t u, size_t t, int64_t f) {
    if (u == t) return f;
    for (size_t& i = it_[u]; i < adj_[u].size(); ++i) {
      const size_t e = adj_[u][i];
      Edge& ed = edges_[e];
      if (ed.cap <= 0 || level_[ed.to] != level_[u] + 1) continue;
      const int64_t got = push(ed.to, t, std::min(f, ed.cap));
      if (got > 0) {
        ed.cap -= got;
        edges_[e ^ 1].cap += got;
        return got;
      }
    }
    return 0;
  }
  std::vector<std::vector<size_t>> adj_;
  std::vector<Edge> edges_;
  std::vector<int> level_;
  std::vector<size_t> it_;
};

// Ops the backward may run again instead of loading a saved result: cheap per element, and
// deterministic. Not a value compared for equality: run again in another kernel it may differ
// in its last bits from the forward's (equality_operands.h).
bool recomputable(const ir::Node& n) {
  const ir::OpInfo& info = n.info();
  if (info.has(ir::traits::Random) || info.has(ir::traits::Extern)) return false;
  if (passes::computes_inexactly(n))
    for (const ir::Value* o : n.outputs())
      if (passes::compared_for_equality(o)) return false;
  // An activation kept whole for its derivative rule (relu) is elementwise too.
  if (info.family == ir::OpFamily::Activation) return true;
  if (info.level != ir::OpLevel::Prim) return false;
  switch (info.family) {
    case ir::OpFamily::Unary:
    case ir::OpFamily::Binary:
    case ir::OpFamily::Ternary:
    case ir::OpFamily::Cast:
    case ir::OpFamily::View:
    case ir::OpFamily::Factory:
      return true;
    default:
      return false;
  }
}

int64_t default_bytes(const ir::Value& v) {
  const ir::TensorType& t = v.type();
  if (!t.is_static()) return int64_t{1} << 20;
  int64_t n = static_cast<int64_t>(element_size(t.dtype));
  for (int64_t s : t.static_sizes()) n *= s;
  return n;
}

// Clones the nodes of `joint` in `keep` (program order) into `g`; `map` holds the values
// already bound (inputs) and receives the clones.
void clone_nodes(const ir::Graph& joint, const std::unordered_set<const ir::Node*>& keep, ir::Graph& g,
                 std::unordered_map<const ir::Value*, ir::Value*>& map) {
  for (const ir::Node* n : joint.nodes()) {
    if (!keep.count(n)) continue;
    std::vector<ir::Value*> ins;
    for (const ir::Value* v : n->inputs()) {
      auto it = map.find(v);
      if (it == map.end()) internal_fail("partition: {} reads a value neither computed nor passed in", n->info().name);
      ins.push_back(it->second);
    }
    std::vector<ir::TensorType> types;
    for (const ir::Value* o : n->outputs()) types.push_back(o->type());
    ir::Node* c = g.create(n->op(), std::move(ins), n->attrs(), std::move(types));
    for (size_t k = 0; k < n->outputs().size(); ++k) map[n->outputs()[k]] = c->output(k);
  }
}

// The producers `roots` need, walking back until `stop` values.
std::unordered_set<const ir::Node*> ancestors(const std::vector<const ir::Value*>& roots,
                                              const std::unordered_set<const ir::Value*>& stop) {
  std::unordered_set<const ir::Node*> seen;
  std::vector<const ir::Value*> work(roots.begin(), roots.end());
  while (!work.empty()) {
    const ir::Value* v = work.back();
    work.pop_back();
    if (stop.count(v) || v->is_input() || seen.count(v->producer())) continue;
    seen.insert(v->producer());
    for (const ir::Value* u : v->producer()->inputs()) work.push_back(u);
  }
  return seen;
}

}  // namespace

Partition partition_joint(const ir::Graph& joint, const PartitionSpec& spec) {
  const auto bytes = spec.bytes ? spec.bytes : std::function<int64_t(const ir::Value&)>(default_bytes);
  const std::vector<ir::Value*>& outs = joint.outputs();
  if (spec.num_forward_outputs > outs.size()) internal_fail("partition: more forward outputs than outputs");
  const std::unordered_set<const ir::Value*> bwd_in(spec.backward_inputs.begin(), spec.backward_inputs.end());

  // What depends on a cotangent: the backward's own work.
  std::unordered_set<const ir::Value*> tangent(bwd_in);
  std::unordered_set<const ir::Node*> tangent_nodes;
  for (const ir::Node* n : joint.nodes()) {
    bool dep = false;
    for (const ir::Value* v : n->inputs()) dep = dep || tangent.count(v);
    if (!dep) continue;
    tangent_nodes.insert(n);
    for (const ir::Value* o : n->outputs()) tangent.insert(o);
  }
  for (size_t i = 0; i < spec.num_forward_outputs; ++i)
    if (tangent.count(outs[i])) internal_fail("partition: forward output {} depends on a cotangent", i);

  // The forward-side producers the backward reaches.
  const size_t bwd_end = spec.num_backward_outputs ? spec.num_forward_outputs + *spec.num_backward_outputs : outs.size();
  if (bwd_end > outs.size()) internal_fail("partition: more backward outputs than outputs");
  std::vector<const ir::Value*> bwd_roots(outs.begin() + static_cast<std::ptrdiff_t>(spec.num_forward_outputs),
                                          outs.begin() + static_cast<std::ptrdiff_t>(bwd_end));
  const std::unordered_set<const ir::Node*> bwd_all = ancestors(bwd_roots, {});
  // Vertex ids: source 0, sink 1, then (in, out) per producer: a joint node or a joint input.
  std::unordered_map<const void*, size_t> id;
  size_t next = 2;
  auto vertex = [&](const void* p) {
    auto [it, fresh] = id.emplace(p, next);
    if (fresh) next += 2;
    return it->second;
  };
  for (const ir::Value* v : joint.inputs())
    if (!bwd_in.count(v)) vertex(v);
  for (const ir::Node* n : joint.nodes())
    if (bwd_all.count(n) && !tangent_nodes.count(n)) vertex(n);
  MaxFlow flow(next);
  auto producer_of = [&](const ir::Value* v) -> const void* {
    if (v->is_input()) return v;
    return v->producer();
  };
  // Bytes of the outputs of p the backward side may read.
  auto out_bytes = [&](const ir::Node* n) {
    int64_t b = 0;
    for (const ir::Value* o : n->outputs()) b += bytes(*o);
    return std::max<int64_t>(b, 1);
  };
  for (const ir::Value* v : joint.inputs()) {
    if (bwd_in.count(v)) continue;
    const size_t k = id.at(v);
    flow.add(0, k, kInf);
    flow.add(k, k + 1, std::max<int64_t>(bytes(*v), 1));
  }
  for (const ir::Node* n : joint.nodes()) {
    const bool fwd_side = id.count(n) > 0;
    if (fwd_side) {
      const size_t k = id.at(n);
      flow.add(k, k + 1, out_bytes(n));
      if (!recomputable(*n)) flow.add(0, k, kInf);
    }
    if (!fwd_side && !tangent_nodes.count(n)) continue;  // not on the backward's path
    for (const ir::Value* u : n->inputs()) {
      if (tangent.count(u)) continue;
      auto it = id.find(producer_of(u));
      if (it == id.end()) continue;
      flow.add(it->second + 1, fwd_side ? id.at(n) : 1, kInf);
    }
  }
  for (const ir::Value* r : bwd_roots) {
    if (tangent.count(r)) continue;
    auto it = id.find(producer_of(r));
    if (it != id.end()) flow.add(it->second + 1, 1, kInf);
  }
  flow.run(0, 1);
  const std::vector<bool> src = flow.reachable(0);
  if (src[1]) internal_fail("partition: no finite cut");
  auto in_forward = [&](const void* p) {
    auto it = id.find(p);
    return it != id.end() && src[it->second];
  };

  // Saved: the outputs of source-side producers that a sink-side or backward node reads.
  std::vector<const ir::Value*> saved;
  std::unordered_set<const ir::Value*> saved_set;
  auto save = [&](const ir::Value* v) {
    if (!tangent.count(v) && in_forward(producer_of(v)) && saved_set.insert(v).second) saved.push_back(v);
  };
  for (const ir::Node* n : joint.nodes()) {
    const bool backward_side = tangent_nodes.count(n) || (id.count(n) && !in_forward(n));
    if (!backward_side || !bwd_all.count(n)) continue;
    for (const ir::Value* u : n->inputs()) save(u);
  }
  for (const ir::Value* r : bwd_roots) save(r);

  Partition p;
  // The forward: every joint input but the cotangents -> forward results, then saved values.
  p.forward = std::make_shared<ir::Graph>();
  std::unordered_map<const ir::Value*, ir::Value*> fmap;
  for (const ir::Value* v : joint.inputs())
    if (!bwd_in.count(v)) fmap[v] = p.forward->add_input(v->type(), v->name());
  std::vector<const ir::Value*> fwd_roots(outs.begin(), outs.begin() + static_cast<std::ptrdiff_t>(spec.num_forward_outputs));
  for (const ir::Value* v : spec.extra_forward_outputs) {
    if (tangent.count(v)) internal_fail("partition: an extra forward output depends on a cotangent");
    fwd_roots.push_back(v);
  }
  fwd_roots.insert(fwd_roots.end(), saved.begin(), saved.end());
  clone_nodes(joint, ancestors(fwd_roots, {}), *p.forward, fmap);
  for (const ir::Value* v : fwd_roots) p.forward->add_output(fmap.at(v));

  // The backward: saved values, then cotangents -> gradients.
  p.backward = std::make_shared<ir::Graph>();
  std::unordered_map<const ir::Value*, ir::Value*> bmap;
  for (size_t k = 0; k < saved.size(); ++k) bmap[saved[k]] = p.backward->add_input(saved[k]->type(), fmt::format("saved{}", k));
  for (const ir::Value* v : spec.backward_inputs) bmap[v] = p.backward->add_input(v->type(), v->name());
  std::unordered_set<const ir::Value*> stop(saved_set);
  stop.insert(bwd_in.begin(), bwd_in.end());
  const std::unordered_set<const ir::Node*> bwd_nodes = ancestors(bwd_roots, stop);
  clone_nodes(joint, bwd_nodes, *p.backward, bmap);
  for (const ir::Value* r : bwd_roots) p.backward->add_output(bmap.at(r));

  p.num_saved = saved.size();
  std::map<std::string, int> recomputed;
  for (const ir::Node* n : joint.nodes())
    if (bwd_nodes.count(n) && !tangent_nodes.count(n)) ++recomputed[std::string(n->info().name)];
  for (const auto& [name, count] : recomputed) p.recomputed.push_back(count > 1 ? fmt::format("{} x{}", name, count) : name);
  std::string lines;
  for (size_t k = 0; k < saved.size(); ++k) {
    const int64_t b = bytes(*saved[k]);
    p.saved_bytes += b;
    const ir::Node* prod = saved[k]->producer();
    lines += fmt::format("  saved{}: {} from {} ({} bytes)\n", k, saved[k]->type().str(),
                         prod ? std::string(prod->info().name) : "input " + saved[k]->name(), b);
  }
  p.report = fmt::format("partition: {} values saved, {} bytes; recomputed in the backward: {}\n{}", saved.size(),
                         p.saved_bytes, recomputed.empty() ? "nothing" : fmt::format("{}", fmt::join(p.recomputed, ", ")),
                         lines);
  return p;
}

}  // namespace kiln::passes
