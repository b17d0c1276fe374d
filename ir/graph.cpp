// kiln/ir/graph.cpp — node creation, use-list maintenance and erasure.
#include "ir/graph.h"

#include "base/error.h"
#include "ir/shape_fns.h"
#include "ir/text.h"

#include <algorithm>

namespace kiln::ir {

void Value::replace_all_uses_with(Value* other) {
  if (other == this) return;
  std::vector<Use> uses = std::move(uses_);
  uses_.clear();
  for (const Use& u : uses) {
    if (u.user) {
      u.user->inputs_[u.index] = other;
    } else {
      graph_->outputs_[u.index] = other;
    }
    other->uses_.push_back(u);
  }
}

void Node::replace_input(size_t i, Value* v) {
  Value* old = inputs_.at(i);
  auto& uses = old->uses_;
  auto it = std::find(uses.begin(), uses.end(), Use{this, i});
  if (it != uses.end()) uses.erase(it);
  inputs_[i] = v;
  v->uses_.push_back(Use{this, i});
}

Value* Graph::add_input(TensorType t, std::string name) {
  values_.push_back(std::unique_ptr<Value>(new Value(this, std::move(t), nullptr, inputs_.size())));
  Value* v = values_.back().get();
  v->set_name(std::move(name));
  inputs_.push_back(v);
  return v;
}

Node* Graph::insert(std::list<std::unique_ptr<Node>>::iterator pos, OpKind op, std::vector<Value*> inputs,
                    AttrList attrs, std::vector<TensorType> out_types) {
  auto node = std::unique_ptr<Node>(new Node(this, op, std::move(attrs)));
  Node* n = node.get();
  for (size_t i = 0; i < inputs.size(); ++i) {
    Value* v = inputs[i];
    if (v == nullptr || v->graph_ != this) internal_fail("{}: input {} does not belong to this graph", op_name(op), i);
    n->inputs_.push_back(v);
    v->uses_.push_back(Use{n, i});
  }
  for (size_t i = 0; i < out_types.size(); ++i) {
    values_.push_back(std::unique_ptr<Value>(new Value(this, std::move(out_types[i]), n, i)));
    n->outputs_.push_back(values_.back().get());
  }
  n->self_ = nodes_.insert(pos, std::move(node));
  return n;
}

namespace {
std::vector<TensorType> types_of(const std::vector<Value*>& vs) {
  std::vector<TensorType> out;
  out.reserve(vs.size());
  for (Value* v : vs) {
    if (v == nullptr) internal_fail("null input value");
    out.push_back(v->type());
  }
  return out;
}
}  // namespace

Node* Graph::create(OpKind op, std::vector<Value*> inputs, AttrList attrs) {
  check_attrs(op, attrs);
  std::vector<TensorType> types = infer_types(op, types_of(inputs), attrs);
  return insert(nodes_.end(), op, std::move(inputs), std::move(attrs), std::move(types));
}

Node* Graph::create(OpKind op, std::vector<Value*> inputs, AttrList attrs, std::vector<TensorType> out_types) {
  return insert(nodes_.end(), op, std::move(inputs), std::move(attrs), std::move(out_types));
}

Node* Graph::create_before(Node* pos, OpKind op, std::vector<Value*> inputs, AttrList attrs) {
  check_attrs(op, attrs);
  std::vector<TensorType> types = infer_types(op, types_of(inputs), attrs);
  return insert(pos->self_, op, std::move(inputs), std::move(attrs), std::move(types));
}

void Graph::erase(Node* n) {
  for (Value* out : n->outputs_)
    if (out->has_uses()) internal_fail("erasing {} whose output still has uses", op_name(n->op()));
  for (size_t i = 0; i < n->inputs_.size(); ++i) {
    auto& uses = n->inputs_[i]->uses_;
    auto it = std::find(uses.begin(), uses.end(), Use{n, i});
    if (it != uses.end()) uses.erase(it);
  }
  for (Value* out : n->outputs_)
    std::erase_if(values_, [&](const std::unique_ptr<Value>& v) { return v.get() == out; });
  nodes_.erase(n->self_);
}

void Graph::add_output(Value* v) {
  if (v == nullptr || v->graph_ != this) internal_fail("graph output does not belong to this graph");
  v->uses_.push_back(Use{nullptr, outputs_.size()});
  outputs_.push_back(v);
}

void Graph::set_output(size_t i, Value* v) {
  Value* old = outputs_.at(i);
  auto it = std::find(old->uses_.begin(), old->uses_.end(), Use{nullptr, i});
  if (it != old->uses_.end()) old->uses_.erase(it);
  outputs_[i] = v;
  v->uses_.push_back(Use{nullptr, i});
}

std::string Graph::str() const { return print_graph(*this); }

}  // namespace kiln::ir
