// kiln/ir/graph.h — the mutable SSA tensor graph: Graph owns Nodes and Values.
//
// A Value is produced by one Node (or is a graph input) and carries a TensorType; its uses
// are kept in a use-list behind an API (uses(), replace_all_uses_with()). A Node holds an
// op kind, its tensor inputs in schema order and its attributes (AttrList) in schema order.
// Graph outputs count as uses (user == nullptr, index = output position).
#pragma once

#include "ir/attr.h"
#include "ir/op.h"
#include "ir/tensor_type.h"

#include <list>
#include <memory>
#include <string>
#include <vector>

namespace kiln::ir {

class Graph;
class Node;

struct Use {
  Node* user;  // nullptr: a graph output
  size_t index;
  bool operator==(const Use&) const = default;
};

class Value {
 public:
  const TensorType& type() const { return type_; }
  void set_type(TensorType t) { type_ = std::move(t); }
  Node* producer() const { return producer_; }  // nullptr for graph inputs
  size_t output_index() const { return output_index_; }
  bool is_input() const { return producer_ == nullptr; }
  const std::vector<Use>& uses() const { return uses_; }
  bool has_uses() const { return !uses_.empty(); }
  // Optional name (inputs, and values named in parsed text); printing numbers the rest.
  const std::string& name() const { return name_; }
  void set_name(std::string n) { name_ = std::move(n); }
  // Redirects every use (graph outputs included) to `other`.
  void replace_all_uses_with(Value* other);
  Graph* graph() const { return graph_; }

 private:
  friend class Graph;
  friend class Node;
  Value(Graph* g, TensorType t, Node* producer, size_t index) : graph_(g), type_(std::move(t)), producer_(producer), output_index_(index) {}
  Graph* graph_;
  TensorType type_;
  Node* producer_;
  size_t output_index_;
  std::vector<Use> uses_;
  std::string name_;
};

class Node {
 public:
  OpKind op() const { return op_; }
  const OpInfo& info() const { return op_info(op_); }
  const std::vector<Value*>& inputs() const { return inputs_; }
  Value* input(size_t i) const { return inputs_.at(i); }
  const std::vector<Value*>& outputs() const { return outputs_; }
  Value* output(size_t i = 0) const { return outputs_.at(i); }
  const AttrList& attrs() const { return attrs_; }
  void set_attrs(AttrList a) { attrs_ = std::move(a); }
  template <typename T> const T& attr(std::string_view name) const { return attrs_.get<T>(op_, name); }
  void replace_input(size_t i, Value* v);
  Graph* graph() const { return graph_; }

 private:
  friend class Graph;
  friend class Value;
  Node(Graph* g, OpKind op, AttrList attrs) : graph_(g), op_(op), attrs_(std::move(attrs)) {}
  Graph* graph_;
  OpKind op_;
  std::vector<Value*> inputs_;
  std::vector<Value*> outputs_;
  AttrList attrs_;
  std::list<std::unique_ptr<Node>>::iterator self_;
};

class Graph {
 public:
  Graph() = default;
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;

  Value* add_input(TensorType t, std::string name = "");
  const std::vector<Value*>& inputs() const { return inputs_; }

  // Appends a node; output types are inferred by the op's shape function (which throws
  // kiln::Error for bad arguments) unless given explicitly.
  Node* create(OpKind op, std::vector<Value*> inputs, AttrList attrs);
  Node* create(OpKind op, std::vector<Value*> inputs, AttrList attrs, std::vector<TensorType> out_types);
  // Inserts before `pos` instead of at the end.
  Node* create_before(Node* pos, OpKind op, std::vector<Value*> inputs, AttrList attrs);
  // Removes a node whose outputs have no uses.
  void erase(Node* n);

  void add_output(Value* v);
  void set_output(size_t i, Value* v);
  const std::vector<Value*>& outputs() const { return outputs_; }

  // Nodes in program order.
  class NodeRange {
   public:
    struct iterator {
      std::list<std::unique_ptr<Node>>::const_iterator it;
      Node* operator*() const { return it->get(); }
      iterator& operator++() {
        ++it;
        return *this;
      }
      bool operator!=(const iterator& o) const { return it != o.it; }
      bool operator==(const iterator& o) const { return it == o.it; }
    };
    iterator begin() const { return {list_->begin()}; }
    iterator end() const { return {list_->end()}; }
    size_t size() const { return list_->size(); }
    explicit NodeRange(const std::list<std::unique_ptr<Node>>* l) : list_(l) {}

   private:
    const std::list<std::unique_ptr<Node>>* list_;
  };
  NodeRange nodes() const { return NodeRange(&nodes_); }
  friend class Value;
  size_t num_nodes() const { return nodes_.size(); }

  // Prints the graph in the text format that ir::parse_graph reads back.
  std::string str() const;

 private:
  Node* insert(std::list<std::unique_ptr<Node>>::iterator pos, OpKind op, std::vector<Value*> inputs, AttrList attrs,
               std::vector<TensorType> out_types);
  std::vector<std::unique_ptr<Value>> values_;
  std::vector<Value*> inputs_;
  std::vector<Value*> outputs_;
  std::list<std::unique_ptr<Node>> nodes_;
};

}  // namespace kiln::ir
