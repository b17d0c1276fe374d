// kiln/nn/ordered_dict.h — a map that keeps insertion order, as torch::OrderedDict: what
// Module::named_parameters() and friends return. Items answer .key() and .value(), as
// libtorch's do, so `for (auto& p : m->named_parameters()) use(p.key(), p.value());` ports.
#pragma once

#include "base/error.h"

#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace kiln::nn {

template <typename Key, typename Value>
class OrderedDict {
 public:
  class Item {
   public:
    Item(Key key, Value value) : key_(std::move(key)), value_(std::move(value)) {}
    const Key& key() const { return key_; }
    Value& value() { return value_; }
    const Value& value() const { return value_; }
    Value* operator->() { return &value_; }
    const Value* operator->() const { return &value_; }

   private:
    Key key_;
    Value value_;
  };

  // `what` names the entries in errors ("parameter", "submodule").
  explicit OrderedDict(std::string what = "key") : what_(std::move(what)) {}

  // Fails when the key is present.
  Value& insert(Key key, Value value) {
    if (index_.count(key)) fail("OrderedDict", "{} '{}' already defined", what_, key);
    index_.emplace(key, items_.size());
    items_.emplace_back(std::move(key), std::move(value));
    return items_.back().value();
  }
  Value* find(const Key& key) {
    auto it = index_.find(key);
    return it == index_.end() ? nullptr : &items_[it->second].value();
  }
  const Value* find(const Key& key) const {
    auto it = index_.find(key);
    return it == index_.end() ? nullptr : &items_[it->second].value();
  }
  bool contains(const Key& key) const { return index_.count(key) > 0; }
  Value& operator[](const Key& key) {
    if (Value* v = find(key)) return *v;
    fail("OrderedDict", "no {} '{}'", what_, key);
  }
  const Value& operator[](const Key& key) const {
    if (const Value* v = find(key)) return *v;
    fail("OrderedDict", "no {} '{}'", what_, key);
  }

  size_t size() const { return items_.size(); }
  bool is_empty() const { return items_.empty(); }
  auto begin() { return items_.begin(); }
  auto end() { return items_.end(); }
  auto begin() const { return items_.begin(); }
  auto end() const { return items_.end(); }
  const std::vector<Item>& items() const { return items_; }
  std::vector<Key> keys() const {
    std::vector<Key> out;
    for (const Item& i : items_) out.push_back(i.key());
    return out;
  }
  std::vector<Value> values() const {
    std::vector<Value> out;
    for (const Item& i : items_) out.push_back(i.value());
    return out;
  }

 private:
  std::string what_;
  std::vector<Item> items_;
  std::unordered_map<Key, size_t> index_;
};

}  // namespace kiln::nn
