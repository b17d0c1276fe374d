// kiln/ir/verifier.cpp — structural and type checks of a graph (ir::verify).
//
// Walks the graph once in program order: graph inputs first, then each node (its inputs are
// defined earlier and belong to this graph, the use-lists record each read, the tensor input
// count matches the schema, the attributes match it too, the outputs are the node's own and
// their types equal what infer_types gives), then the graph outputs, and finally every use
// in every use-list must point at a real read, once, and the use-list must be as long as the
// reads counted on the way (so use-lists equal the reads exactly, in linear time). Every size
// symbol in a node's types and attributes must be bound by a graph input: a dim of an input
// that is that symbol alone (what a run reads its value from).
// Messages name the node as the printer does: "[verify] node %3 = add(%1, %2): ...".
#include "ir/verifier.h"

#include "base/error.h"
#include "ir/shape_fns.h"
#include "ir/text.h"

#include <algorithm>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace kiln::ir {

namespace {

class Verifier {
 public:
  Verifier(const Graph& g, const NodeLocator& locate) : g_(g), locate_(locate), names_(g) {}

  void run() {
    for (size_t i = 0; i < g_.inputs().size(); ++i) check_graph_input(i, g_.inputs()[i]);
    for (size_t i = 0; i < g_.inputs().size(); ++i) check_input_expressions(i, g_.inputs()[i]);
    for (const Node* n : g_.nodes()) nodes_.insert(n);
    for (const Node* n : g_.nodes()) check_node(n);
    for (size_t i = 0; i < g_.outputs().size(); ++i) check_graph_output(i, g_.outputs()[i]);
    for (const Value* v : order_) check_use_list(v);
  }

 private:
  template <typename... Args>
  [[noreturn]] void node_fail(const Node* n, fmt::format_string<Args...> f, Args&&... args) {
    std::string where = locate_ ? locate_(n) : std::string();
    fail("verify", "{}node {}: {}", where, node_summary(n, names_), fmt::format(f, std::forward<Args>(args)...));
  }

  struct UseHash {
    size_t operator()(const Use& u) const { return std::hash<const void*>()(u.user) ^ (u.index * 0x9e3779b97f4a7c15ull); }
  };

  // A symbol of a size or SymInt attribute that no graph input binds.
  void check_symbols(const Node* n, const std::vector<Expr>& exprs, const std::string& what) {
    for (const Expr& e : exprs) {
      if (e.is_const()) continue;
      std::vector<std::string> syms;
      e.collect_symbols(syms);
      for (const std::string& sym : syms)
        if (!bound_.count(sym))
          node_fail(n, "{} uses the size symbol {} (in {}), which no graph input binds (a graph input needs a dim "
                    "of exactly {})", what, sym, e.str(), sym);
    }
  }

  void check_graph_input(size_t i, const Value* v) {
    if (!v) fail("verify", "graph input {} is null", i);
    if (v->graph() != &g_) fail("verify", "graph input {} belongs to another graph", i);
    if (!v->is_input()) fail("verify", "graph input {} ({}) is produced by a node", i, names_(v));
    if (!defined_.insert(v).second) fail("verify", "graph input {} ({}) is listed twice", i, names_(v));
    order_.push_back(v);
    // A run reads each size symbol from an input dim that is that symbol alone.
    for (const Expr& e : v->type().sizes)
      if (e.is_symbol()) bound_.insert(e.symbol_name());
  }

  // An input dim may also be an expression of symbols that inputs bind (a backward program's
  // cotangent of a convolution's output, [(s2 - 3)//2 + 1]); a run checks it against the
  // bound values.
  void check_input_expressions(size_t i, const Value* v) {
    for (const Expr& e : v->type().sizes) {
      if (e.is_const() || e.is_symbol()) continue;
      std::vector<std::string> syms;
      e.collect_symbols(syms);
      for (const std::string& sym : syms)
        if (!bound_.count(sym))
          fail("verify", "graph input {} ({}) has a dim of size {}, whose symbol {} no input binds (an input dim of "
                         "exactly {} binds it)", i, names_(v), e.str(), sym, sym);
    }
  }

  void check_node(const Node* n) {
    if (n->graph() != &g_) node_fail(n, "the node belongs to another graph");
    const OpInfo& info = n->info();
    const OpSchema& schema = info.schema;
    std::vector<TensorType> in_types;
    for (size_t i = 0; i < n->inputs().size(); ++i) {
      const Value* v = n->inputs()[i];
      if (!v) node_fail(n, "input {} is null", i);
      if (v->graph() != &g_) node_fail(n, "input {} belongs to another graph", i);
      if (!defined_.count(v)) node_fail(n, "input {} ({}) is used before its definition", i, names_(v));
      ++reads_[v];
      in_types.push_back(v->type());
    }
    if (schema.variadic()) {
      if (n->inputs().empty()) node_fail(n, "{} needs at least one tensor in its list", info.name);
    } else if (!schema.accepts_tensor_count(n->inputs().size())) {
      node_fail(n, "{} takes {} tensor input{}, the node has {}", info.name, schema.tensor_args.size(),
                schema.tensor_args.size() == 1 ? "" : "s", n->inputs().size());
    }
    try {
      check_attrs(n->op(), n->attrs());
    } catch (const Error& e) {
      node_fail(n, "{}", e.what());
    }
    for (size_t a = 0; a < n->attrs().size() && a < schema.attr_args.size(); ++a) {
      const AttrValue& av = n->attrs()[a];
      const std::string what = fmt::format("attribute '{}'", schema.attr_args[a].name);
      if (const auto* e = std::get_if<Expr>(&av)) check_symbols(n, {*e}, what);
      if (const auto* list = std::get_if<std::vector<Expr>>(&av)) check_symbols(n, *list, what);
    }
    if (n->outputs().size() != static_cast<size_t>(schema.num_outputs))
      node_fail(n, "{} has {} output{}, the node has {}", info.name, schema.num_outputs,
                schema.num_outputs == 1 ? "" : "s", n->outputs().size());
    for (size_t i = 0; i < n->outputs().size(); ++i) {
      const Value* v = n->outputs()[i];
      if (!v) node_fail(n, "output {} is null", i);
      if (v->graph() != &g_ || v->producer() != n || v->output_index() != i)
        node_fail(n, "output {} ({}) does not record this node as its producer", i, names_(v));
      if (defined_.count(v)) node_fail(n, "output {} ({}) is defined twice", i, names_(v));
    }
    std::vector<TensorType> inferred;
    try {
      inferred = infer_types(n->op(), in_types, n->attrs());
    } catch (const Error& e) {
      node_fail(n, "{}", e.what());
    }
    if (inferred.size() != n->outputs().size())
      node_fail(n, "the shape function gives {} types for {} outputs", inferred.size(), n->outputs().size());
    for (size_t i = 0; i < inferred.size(); ++i)
      if (inferred[i] != n->output(i)->type())
        node_fail(n, "output {} ({}) has type {}, but {} infers {}", i, names_(n->output(i)), n->output(i)->type().str(),
                  info.name, inferred[i].str());
    for (const Value* v : n->outputs()) {
      check_symbols(n, v->type().sizes, "the output's size");
      defined_.insert(v);
      order_.push_back(v);
    }
  }

  void check_graph_output(size_t i, const Value* v) {
    if (!v) fail("verify", "graph output {} is null", i);
    if (v->graph() != &g_) fail("verify", "graph output {} belongs to another graph", i);
    if (!defined_.count(v)) fail("verify", "graph output {} ({}) is not defined in the graph", i, names_(v));
    ++reads_[v];
  }

  // Every recorded use must be a real read, none is recorded twice, and there are as many as
  // reads: then every read is recorded.
  void check_use_list(const Value* v) {
    const auto& uses = v->uses();
    std::unordered_set<Use, UseHash> seen;
    seen.reserve(uses.size());
    for (const Use& u : uses) {
      if (!seen.insert(u).second) fail("verify", "the use-list of {} records a use twice", names_(v));
      if (u.user == nullptr) {
        if (u.index >= g_.outputs().size() || g_.outputs()[u.index] != v)
          fail("verify", "the use-list of {} records graph output {}, which is another value", names_(v), u.index);
        continue;
      }
      if (!nodes_.count(u.user))
        fail("verify", "the use-list of {} records a node that is not in the graph", names_(v));
      if (u.index >= u.user->inputs().size() || u.user->inputs()[u.index] != v)
        node_fail(u.user, "the use-list of {} records input {} of this node, which reads another value", names_(v),
                  u.index);
    }
    const auto it = reads_.find(v);
    const size_t reads = it == reads_.end() ? 0 : it->second;
    if (uses.size() != reads)
      fail("verify", "the use-list of {} records {} uses, but the graph reads it {} times", names_(v), uses.size(), reads);
  }

  const Graph& g_;
  const NodeLocator& locate_;
  ValueNames names_;
  std::unordered_set<const Value*> defined_;
  std::unordered_set<const Node*> nodes_;
  std::vector<const Value*> order_;
  std::unordered_map<const Value*, size_t> reads_;  // reads by nodes and graph outputs
  std::set<std::string> bound_;                    // size symbols a graph input binds
};

}  // namespace

void verify(const Graph& g) { verify(g, NodeLocator()); }

void verify(const Graph& g, const NodeLocator& locate) { Verifier(g, locate).run(); }

}  // namespace kiln::ir
