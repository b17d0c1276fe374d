// kiln/ir/custom_ops.cpp — the table of custom ops (thread-safe, append-only).
#include "ir/custom_ops.h"

#include "base/error.h"

#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>

namespace kiln::ir {

namespace {

struct CustomOp {
  std::string name, schema_text;
  OpInfo info;
  CustomShapeFn shape;
};

struct Table {
  std::shared_mutex mu;
  std::deque<CustomOp> ops;  // index = kind - kNumOps; a deque keeps references stable
  std::map<std::string, OpKind, std::less<>> by_name;
};

Table& table() {
  static Table* t = new Table();  // never destroyed: graphs may outlive static destruction
  return *t;
}

const CustomOp* find(OpKind k) {
  const size_t i = static_cast<size_t>(k);
  if (i < static_cast<size_t>(kNumOps)) return nullptr;
  Table& t = table();
  std::shared_lock lock(t.mu);
  return i - kNumOps < t.ops.size() ? &t.ops[i - kNumOps] : nullptr;
}

}  // namespace

OpKind register_custom_op(std::string_view schema_text, CustomShapeFn shape, OpLevel level) {
  OpSchema schema = parse_schema(schema_text);  // "[schema] ... at column N of '...'"
  if (schema.name.find("::") == std::string::npos)
    fail("register_op", "'{}' needs a namespace, as in \"mylib::{}\" (the bare names belong to built-in ops)",
         schema.name, schema.name);
  if (schema.tensor_args.empty()) fail("register_op", "{} has no Tensor argument", schema.name);
  Table& t = table();
  std::unique_lock lock(t.mu);
  if (t.by_name.count(schema.name)) fail("register_op", "{} is already registered", schema.name);
  if (t.ops.size() + kNumOps >= 0xffff) fail("register_op", "too many custom ops");
  const auto kind = static_cast<OpKind>(kNumOps + t.ops.size());
  CustomOp& op = t.ops.emplace_back();
  op.name = schema.name;
  op.schema_text = std::string(schema_text);
  op.shape = std::move(shape);
  const uint32_t traits = level == OpLevel::Prim ? traits::Extern : 0;
  op.info = OpInfo{kind, op.name, OpFamily::Custom, level, traits, op.schema_text, std::move(schema),
                   static_cast<uint16_t>(t.ops.size() - 1)};
  t.by_name.emplace(op.name, kind);
  return kind;
}

const OpInfo* custom_op_info(OpKind k) {
  const CustomOp* op = find(k);
  return op ? &op->info : nullptr;
}

std::optional<OpKind> custom_op_from_name(std::string_view name) {
  Table& t = table();
  std::shared_lock lock(t.mu);
  auto it = t.by_name.find(name);
  if (it == t.by_name.end()) return std::nullopt;
  return it->second;
}

const CustomShapeFn& custom_shape_fn(OpKind k) {
  const CustomOp* op = find(k);
  if (!op) internal_fail("custom_shape_fn: {} is not a custom op", static_cast<int>(k));
  return op->shape;
}

}  // namespace kiln::ir
