// kiln/guards/guard_set.cpp — building, checking, printing and hashing guard sets.
#include "guards/guard_set.h"

#include "frontend/error.h"
#include "frontend/tensor_impl.h"

#include <fmt/format.h>

#include <cstring>

namespace kiln::guards {

namespace {

int64_t arg_kind(const ArgValue& a) { return static_cast<int64_t>(a.index()); }
const char* kind_name(int64_t k) {
  switch (k) {
    case 0: return "a tensor";
    case 1: return "an int";
    case 2: return "a double";
    case 3: return "a bool";
  }
  return "?";
}

int64_t alias_target(const std::vector<ArgValue>& args, size_t i) {
  const StorageImpl* s = std::get<Tensor>(args[i]).impl()->storage().get();
  for (size_t j = 0; j < i; ++j)
    if (const Tensor* t = std::get_if<Tensor>(&args[j]); t && !t->is_traced() && t->impl()->storage().get() == s)
      return static_cast<int64_t>(j);
  return -1;
}

uint64_t mix(uint64_t h, uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  return h;
}

// The value the guard reads from the arguments, as text (for failure messages).
std::string actual_of(const Guard& g, const std::vector<ArgValue>& args) {
  const ArgValue& a = args[static_cast<size_t>(g.arg)];
  switch (g.kind) {
    case GuardKind::ArgKind: return kind_name(arg_kind(a));
    case GuardKind::Dtype: return std::string(dtype_short_name(std::get<Tensor>(a).dtype()));
    case GuardKind::Device: return std::get<Tensor>(a).device().str();
    case GuardKind::Rank: return std::to_string(std::get<Tensor>(a).dim());
    case GuardKind::Size: return std::to_string(std::get<Tensor>(a).impl()->sizes()[static_cast<size_t>(g.dim)]);
    case GuardKind::Stride: return std::to_string(std::get<Tensor>(a).impl()->strides()[static_cast<size_t>(g.dim)]);
    case GuardKind::Alias: {
      const int64_t t = alias_target(args, static_cast<size_t>(g.arg));
      return t < 0 ? "no aliasing" : fmt::format("aliasing argument {}", t);
    }
    case GuardKind::ScalarValue:
      if (const int64_t* i = std::get_if<int64_t>(&a)) return std::to_string(*i);
      if (const double* d = std::get_if<double>(&a)) return fmt::format("{}", *d);
      return std::get<bool>(a) ? "true" : "false";
  }
  return "?";
}

bool passes(const Guard& g, const std::vector<ArgValue>& args) {
  const ArgValue& a = args[static_cast<size_t>(g.arg)];
  switch (g.kind) {
    case GuardKind::ArgKind: return arg_kind(a) == g.value;
    case GuardKind::Dtype: return static_cast<int64_t>(std::get<Tensor>(a).dtype()) == g.value;
    case GuardKind::Device: return std::get<Tensor>(a).device() == g.device;
    case GuardKind::Rank: return static_cast<int64_t>(std::get<Tensor>(a).impl()->sizes().size()) == g.value;
    case GuardKind::Size: return std::get<Tensor>(a).impl()->sizes()[static_cast<size_t>(g.dim)] == g.value;
    case GuardKind::Stride: return std::get<Tensor>(a).impl()->strides()[static_cast<size_t>(g.dim)] == g.value;
    case GuardKind::Alias: return alias_target(args, static_cast<size_t>(g.arg)) == g.value;
    case GuardKind::ScalarValue:
      if (const int64_t* i = std::get_if<int64_t>(&a)) return *i == g.value;
      if (const double* d = std::get_if<double>(&a)) return std::memcmp(d, &g.fvalue, sizeof(double)) == 0;
      return std::get<bool>(a) == (g.value != 0);
  }
  return false;
}

}  // namespace

GuardSet GuardSet::from_args(const std::vector<ArgValue>& args, std::vector<std::string> names) {
  GuardSet gs;
  gs.names_ = std::move(names);
  gs.names_.resize(args.size());
  for (size_t i = 0; i < args.size(); ++i)
    if (gs.names_[i].empty()) gs.names_[i] = fmt::format("arg{}", i);
  for (size_t i = 0; i < args.size(); ++i) {
    const int arg = static_cast<int>(i);
    gs.guards_.push_back({GuardKind::ArgKind, arg, 0, arg_kind(args[i]), 0, {}});
    if (const Tensor* t = std::get_if<Tensor>(&args[i])) {
      const TensorImpl& impl = *t->impl();
      gs.guards_.push_back({GuardKind::Dtype, arg, 0, static_cast<int64_t>(t->dtype()), 0, {}});
      gs.guards_.push_back({GuardKind::Device, arg, 0, 0, 0, t->device()});
      gs.guards_.push_back({GuardKind::Rank, arg, 0, static_cast<int64_t>(impl.sizes().size()), 0, {}});
      for (size_t d = 0; d < impl.sizes().size(); ++d)
        gs.guards_.push_back({GuardKind::Size, arg, static_cast<int>(d), impl.sizes()[d], 0, {}});
      for (size_t d = 0; d < impl.sizes().size(); ++d)
        if (impl.sizes()[d] > 1) gs.guards_.push_back({GuardKind::Stride, arg, static_cast<int>(d), impl.strides()[d], 0, {}});
      gs.guards_.push_back({GuardKind::Alias, arg, 0, alias_target(args, i), 0, {}});
    } else if (const int64_t* v = std::get_if<int64_t>(&args[i])) {
      gs.guards_.push_back({GuardKind::ScalarValue, arg, 0, *v, 0, {}});
    } else if (const double* d = std::get_if<double>(&args[i])) {
      gs.guards_.push_back({GuardKind::ScalarValue, arg, 0, 0, *d, {}, true});
    } else {
      gs.guards_.push_back({GuardKind::ScalarValue, arg, 0, std::get<bool>(args[i]) ? 1 : 0, 0, {}});
    }
  }
  uint64_t h = 0x6b696c6e;
  for (const Guard& g : gs.guards_) {
    h = mix(h, static_cast<uint64_t>(g.kind));
    h = mix(h, static_cast<uint64_t>(g.arg));
    h = mix(h, static_cast<uint64_t>(g.dim));
    h = mix(h, static_cast<uint64_t>(g.value));
    uint64_t f;
    std::memcpy(&f, &g.fvalue, sizeof f);
    h = mix(h, f);
    h = mix(h, std::hash<std::string>()(g.device.str()));
  }
  gs.signature_ = h;
  return gs;
}

std::optional<GuardFailure> GuardSet::first_failure(const std::vector<ArgValue>& args) const {
  if (args.size() != names_.size())
    return GuardFailure{{}, fmt::format("{} arguments", names_.size()), std::to_string(args.size())};
  // Guards are ordered so that each one's preconditions (the argument is a tensor, its rank)
  // are checked before it.
  for (const Guard& g : guards_)
    if (!passes(g, args)) return GuardFailure{g, describe(g), actual_of(g, args)};
  return std::nullopt;
}

std::string GuardSet::describe(const Guard& g) const {
  const std::string& n = names_.at(static_cast<size_t>(g.arg));
  switch (g.kind) {
    case GuardKind::ArgKind: return fmt::format("{} is {}", n, kind_name(g.value));
    case GuardKind::Dtype: return fmt::format("{}.dtype == {}", n, dtype_short_name(static_cast<ScalarType>(g.value)));
    case GuardKind::Device: return fmt::format("{}.device == {}", n, g.device.str());
    case GuardKind::Rank: return fmt::format("{}.dim() == {}", n, g.value);
    case GuardKind::Size: return fmt::format("{}.size({}) == {}", n, g.dim, g.value);
    case GuardKind::Stride: return fmt::format("{}.stride({}) == {}", n, g.dim, g.value);
    case GuardKind::Alias:
      return g.value < 0 ? fmt::format("{} shares storage with no earlier argument", n)
                         : fmt::format("{} shares storage with {}", n, names_.at(static_cast<size_t>(g.value)));
    case GuardKind::ScalarValue: {
      if (g.fp) return fmt::format("{} == {}", n, g.fvalue);
      // A bool argument reads as true/false, as its actual value does in a failure.
      for (const Guard& k : guards_)
        if (k.kind == GuardKind::ArgKind && k.arg == g.arg && k.value == arg_kind(ArgValue(false)))
          return fmt::format("{} == {}", n, g.value != 0 ? "true" : "false");
      return fmt::format("{} == {}", n, g.value);
    }
  }
  return "?";
}

std::string GuardSet::str() const {
  std::string s;
  for (const Guard& g : guards_) s += describe(g) + "\n";
  return s;
}

}  // namespace kiln::guards
