// kiln/runtime/lowerings.cpp — the registry of custom lowerings, keyed by (backend, op).
#include "base/error.h"
#include "runtime/backend.h"
#include "runtime/extend.h"

#include <deque>
#include <map>
#include <mutex>
#include <shared_mutex>

namespace kiln {

namespace {

struct Registry {
  std::shared_mutex mu;
  std::deque<Lowering> lowerings;  // stable addresses
  std::map<std::pair<std::string, ir::OpKind>, const Lowering*, std::less<>> by_key;
};
Registry& registry() {
  static Registry* r = new Registry();
  return *r;
}

}  // namespace

void register_lowering(std::string_view backend, std::string_view op, Lowering l) {
  const std::shared_ptr<const rt::Backend> b = rt::find_backend(backend, "register_lowering");
  const std::optional<ir::OpKind> kind = ir::op_from_name(op);
  if (!kind) fail("register_lowering", "unknown op '{}'", op);
  if (static_cast<bool>(l.call) == static_cast<bool>(l.rewrite))
    fail("register_lowering", "lowering '{}' of {} must have exactly one of an extern call and a rewrite", l.name, op);
  if (l.name.empty()) fail("register_lowering", "the lowering of {} on '{}' needs a name", op, backend);
  if (l.call && !b->runs_extern_lowerings())
    fail("register_lowering", "backend '{}' cannot run extern calls; register a rewrite (Lowering::rewrite_as) instead",
         backend);
  Registry& r = registry();
  std::unique_lock lock(r.mu);
  auto key = std::make_pair(std::string(backend), *kind);
  if (r.by_key.count(key)) fail("register_lowering", "{} already has a lowering on '{}'", op, backend);
  r.by_key.emplace(std::move(key), &r.lowerings.emplace_back(std::move(l)));
}

namespace rt {

const Lowering* find_lowering(std::string_view backend, ir::OpKind op) {
  Registry& r = registry();
  std::shared_lock lock(r.mu);
  if (r.by_key.empty()) return nullptr;
  auto it = r.by_key.find(std::make_pair(std::string(backend), op));
  return it == r.by_key.end() ? nullptr : it->second;
}

std::function<bool(ir::OpKind)> users_call_lowerings(bool use, std::string backend) {
  return [use, backend = std::move(backend)](ir::OpKind op) {
    const Lowering* l = use ? find_lowering(backend, op) : nullptr;
    return l != nullptr && static_cast<bool>(l->call);
  };
}

}  // namespace rt

}  // namespace kiln
