// kiln/guards/guard_set.cpp — building, checking, printing and hashing guard sets.
#include "guards/guard_set.h"

#include "base/error.h"
#include "base/int_array_ref.h"
#include "base/tensor_impl.h"
#include "ir/shape_env.h"
#include "ir/text.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cstring>
#include <map>
#include <sstream>

namespace kiln::guards {

namespace {

int64_t arg_kind(const GuardArg& a) { return static_cast<int64_t>(a.index()); }
const char* kind_name(int64_t k) {
  switch (k) {
    case 0: return "a tensor";
    case 1: return "an int";
    case 2: return "a double";
    case 3: return "a bool";
  }
  return "?";
}

int64_t alias_target(GuardArgs args, size_t i) {
  const StorageImpl* s = std::get<const TensorImpl*>(args[i])->storage().get();
  for (size_t j = 0; j < i; ++j)
    if (const TensorImpl* const* t = std::get_if<const TensorImpl*>(&args[j]);
        t && !(*t)->is_traced() && (*t)->storage().get() == s)
      return static_cast<int64_t>(j);
  return -1;
}

// alias_target of every argument at once, in O(n log n): a call with many tensor arguments (an
// optimizer's step passes four per parameter) would otherwise compare each with every earlier one.
void alias_targets(GuardArgs args, std::vector<int64_t>& out) {
  std::vector<std::pair<const StorageImpl*, size_t>> by_storage;
  for (size_t i = 0; i < args.size(); ++i)
    if (const TensorImpl* const* t = std::get_if<const TensorImpl*>(&args[i])) by_storage.emplace_back((*t)->storage().get(), i);
  std::sort(by_storage.begin(), by_storage.end());
  out.assign(args.size(), -1);
  for (size_t a = 0; a < by_storage.size();) {
    size_t b = a;
    int64_t first = -1;  // the first untraced argument of this storage
    for (; b < by_storage.size() && by_storage[b].first == by_storage[a].first; ++b)
      if (first < 0 && !std::get<const TensorImpl*>(args[by_storage[b].second])->is_traced())
        first = static_cast<int64_t>(by_storage[b].second);
    for (size_t k = a; k < b; ++k)
      if (first >= 0 && static_cast<size_t>(first) < by_storage[k].second) out[by_storage[k].second] = first;
    a = b;
  }
}

uint64_t mix(uint64_t h, uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  return h;
}

const TensorImpl& impl_of(GuardArgs args, int arg) {
  return *std::get<const TensorImpl*>(args[static_cast<size_t>(arg)]);
}

int64_t size_of(GuardArgs args, const Guard& g) {
  return impl_of(args, g.arg).sizes()[static_cast<size_t>(g.dim)];
}

}  // namespace

GuardSet GuardSet::from_args(GuardArgs args, std::vector<std::string> names,
                             const SymbolicInputs* sym) {
  GuardSet gs;
  gs.names_ = std::move(names);
  gs.names_.resize(args.size());
  for (size_t i = 0; i < args.size(); ++i)
    if (gs.names_[i].empty()) gs.names_[i] = fmt::format("arg{}", i);
  size_t tensor_index = 0;
  for (size_t i = 0; i < args.size(); ++i) {
    const int arg = static_cast<int>(i);
    gs.guards_.push_back({GuardKind::ArgKind, arg, 0, arg_kind(args[i]), 0, {}});
    if (const TensorImpl* const* t = std::get_if<const TensorImpl*>(&args[i])) {
      const TensorImpl& impl = **t;
      const std::vector<ir::Expr>* sizes = sym ? &sym->sizes.at(tensor_index) : nullptr;
      ++tensor_index;
      gs.guards_.push_back({GuardKind::Dtype, arg, 0, static_cast<int64_t>(impl.dtype()), 0, {}});
      gs.guards_.push_back({GuardKind::Device, arg, 0, 0, 0, impl.device()});
      gs.guards_.push_back({GuardKind::Rank, arg, 0, static_cast<int64_t>(impl.sizes().size()), 0, {}});
      bool symbolic = false;
      for (size_t d = 0; d < impl.sizes().size(); ++d) {
        const int dim = static_cast<int>(d);
        if (!sizes || (*sizes)[d].is_const()) {
          gs.guards_.push_back({GuardKind::Size, arg, dim, impl.sizes()[d], 0, {}});
          continue;
        }
        if (!(*sizes)[d].is_symbol())
          internal_fail("guards: {}.size({}) is '{}', not a symbol", gs.names_[i], d, (*sizes)[d].str());
        symbolic = true;
        const std::string& name = (*sizes)[d].symbol_name();
        auto slot = std::find(gs.slot_symbols_.begin(), gs.slot_symbols_.end(), name);
        const int64_t k = slot - gs.slot_symbols_.begin();
        if (slot == gs.slot_symbols_.end()) {
          gs.slot_symbols_.push_back(name);
          gs.slot_sources_.push_back(fmt::format("{}.size({})", gs.names_[i], d));
          gs.guards_.push_back({GuardKind::SymbolBind, arg, dim, k, 0, {}});
        } else {
          gs.guards_.push_back({GuardKind::SymbolEq, arg, dim, k, 0, {}});
        }
      }
      if (symbolic) {
        if (!impl.is_contiguous())
          internal_fail("guards: {} has symbolic sizes but is not contiguous", gs.names_[i]);
        gs.guards_.push_back({GuardKind::Contiguous, arg, 0, 1, 0, {}});
      } else {
        for (size_t d = 0; d < impl.sizes().size(); ++d)
          if (impl.sizes()[d] > 1)
            gs.guards_.push_back({GuardKind::Stride, arg, static_cast<int>(d), impl.strides()[d], 0, {}});
      }
      gs.guards_.push_back({GuardKind::Alias, arg, 0, alias_target(args, i), 0, {}});
    } else if (const int64_t* v = std::get_if<int64_t>(&args[i])) {
      gs.guards_.push_back({GuardKind::ScalarValue, arg, 0, *v, 0, {}});
    } else if (const double* d = std::get_if<double>(&args[i])) {
      gs.guards_.push_back({GuardKind::ScalarValue, arg, 0, 0, *d, {}, true});
    } else {
      gs.guards_.push_back({GuardKind::ScalarValue, arg, 0, std::get<bool>(args[i]) ? 1 : 0, 0, {}});
    }
  }
  if (sym && sym->env) {
    // The predicates the trace decided, over the slots' symbols, printed with their sources.
    std::map<std::string, ir::Expr> to_source;
    for (size_t k = 0; k < gs.slot_symbols_.size(); ++k)
      to_source.emplace(gs.slot_symbols_[k], ir::Expr::symbol(gs.slot_sources_[k]));
    for (const ir::Expr& p : sym->env->guards()) {
      std::vector<std::string> used;
      p.collect_symbols(used);
      for (const std::string& u : used)
        if (std::find(gs.slot_symbols_.begin(), gs.slot_symbols_.end(), u) == gs.slot_symbols_.end())
          internal_fail("guards: predicate '{}' reads symbol {}, which no input binds", p.str(), u);
      gs.guards_.push_back({GuardKind::Predicate, 0, 0, static_cast<int64_t>(gs.predicates_.size()), 0, {}});
      gs.predicates_.push_back(p);
      gs.predicate_text_.push_back(p.substitute(to_source).str());
      gs.predicate_code_.emplace_back(p, gs.slot_symbols_);
    }
  }
  gs.sign();
  gs.compile();
  return gs;
}

GuardSet GuardSet::on_device(Device device) const {
  GuardSet gs = *this;
  for (Guard& g : gs.guards_)
    if (g.kind == GuardKind::Device) g.device = device;
  gs.sign();
  gs.compile();
  return gs;
}

// The signature: a hash of every guard and predicate.
void GuardSet::sign() {
  uint64_t h = 0x6b696c6e;
  for (const Guard& g : guards_) {
    h = mix(h, static_cast<uint64_t>(g.kind));
    h = mix(h, static_cast<uint64_t>(g.arg));
    h = mix(h, static_cast<uint64_t>(g.dim));
    h = mix(h, static_cast<uint64_t>(g.value));
    uint64_t f;
    std::memcpy(&f, &g.fvalue, sizeof f);
    h = mix(h, f);
    h = mix(h, std::hash<std::string>()(g.device.str()));
  }
  for (const ir::Expr& p : predicates_) h = mix(h, std::hash<std::string>()(p.str()));
  signature_ = h;
}

// The check program: the metadata guards of one tensor merge into one Tensor op, which also
// checks that the argument is a tensor; every other guard is one op in the same order.
void GuardSet::compile() {
  program_.clear();
  for (const Guard& g : guards_) {
    Op op{};
    op.arg = static_cast<uint16_t>(g.arg);
    op.dim = static_cast<uint16_t>(g.dim);
    op.value = g.value;
    switch (g.kind) {
      case GuardKind::ArgKind:
        if (g.value == 0) {
          op.code = Op::Tensor;
          program_.push_back(op);
        }
        continue;  // a scalar's kind is checked by its ScalarValue op
      case GuardKind::Dtype: program_.back().meta |= g.value; continue;
      case GuardKind::Device: program_.back().device = g.device; continue;
      case GuardKind::Rank: program_.back().meta |= g.value << 8; continue;
      case GuardKind::Size: op.code = Op::Size; break;
      case GuardKind::SymbolBind: op.code = Op::Bind; break;
      case GuardKind::SymbolEq: op.code = Op::SlotEq; break;
      case GuardKind::Stride: op.code = Op::Stride; break;
      case GuardKind::Contiguous: op.code = Op::Contig; break;
      case GuardKind::Alias: op.code = Op::Alias; break;
      case GuardKind::ScalarValue: {
        op.code = g.fp ? Op::Double : Op::Int;
        for (const Guard& k : guards_)
          if (k.kind == GuardKind::ArgKind && k.arg == g.arg && k.value == arg_kind(GuardArg(false))) op.code = Op::Bool;
        if (g.fp) std::memcpy(&op.meta, &g.fvalue, sizeof(double));
        break;
      }
      case GuardKind::Predicate: op.code = Op::Pred; break;
    }
    program_.push_back(op);
  }
}

bool GuardSet::check(GuardArgs args) const {
  if (args.size() != names_.size()) return false;
  constexpr size_t kInline = 16;
  int64_t inline_slots[kInline];
  std::vector<int64_t> heap;
  int64_t* slots = inline_slots;
  if (slot_symbols_.size() > kInline) {
    heap.resize(slot_symbols_.size());
    slots = heap.data();
  }
  // Storage of each argument seen so far (aliasing compares with earlier ones); args past
  // kInline fall back to alias_target.
  const void* storage[kInline];
  const bool track_storage = args.size() <= kInline;
  std::vector<int64_t> targets;  // past kInline: every argument's alias target, made on first use
  if (track_storage)
    for (size_t i = 0; i < args.size(); ++i) storage[i] = &storage;  // "not a tensor": matches nothing
  const TensorImpl* impl = nullptr;  // of the tensor the last Tensor op checked
  for (const Op& op : program_) {
    const GuardArg& a = args[op.arg];
    switch (op.code) {
      case Op::Tensor: {
        const TensorImpl* const* t = std::get_if<const TensorImpl*>(&a);
        if (!t) return false;
        impl = *t;
        if (track_storage && !impl->is_traced()) storage[op.arg] = impl->storage().get();
        if (static_cast<int64_t>(impl->dtype()) != (op.meta & 0xff) ||
            static_cast<int64_t>(impl->sizes().size()) != (op.meta >> 8) || !(impl->device() == op.device))
          return false;
        break;
      }
      case Op::Size:
        if (impl->sizes()[op.dim] != op.value) return false;
        break;
      case Op::Bind: {
        const int64_t v = impl->sizes()[op.dim];
        if (v < 2) return false;
        slots[op.value] = v;
        break;
      }
      case Op::SlotEq:
        if (impl->sizes()[op.dim] != slots[op.value]) return false;
        break;
      case Op::Stride:
        if (impl->strides()[op.dim] != op.value) return false;
        break;
      case Op::Contig:
        if (!impl->is_contiguous()) return false;
        break;
      case Op::Alias: {
        if (!track_storage) {
          if (targets.empty()) alias_targets(args, targets);
          if (targets[op.arg] != op.value) return false;
          break;
        }
        int64_t target = -1;
        for (uint16_t j = 0; j < op.arg && target < 0; ++j)
          if (storage[j] == storage[op.arg]) target = j;
        if (impl->is_traced()) target = -1;
        if (target != op.value) return false;
        break;
      }
      case Op::Int: {
        const int64_t* v = std::get_if<int64_t>(&a);
        if (!v || *v != op.value) return false;
        break;
      }
      case Op::Double: {
        const double* v = std::get_if<double>(&a);
        if (!v || std::memcmp(v, &op.meta, sizeof(double)) != 0) return false;
        break;
      }
      case Op::Bool: {
        const bool* v = std::get_if<bool>(&a);
        if (!v || *v != (op.value != 0)) return false;
        break;
      }
      case Op::Pred:
        if (predicate_code_[static_cast<size_t>(op.value)].eval(slots) == 0) return false;
        break;
    }
  }
  return true;
}

// The slow path of a miss: each guard on its own, for the message.
bool GuardSet::passes(const Guard& g, GuardArgs args, std::vector<int64_t>& slots) const {
  const GuardArg& a = args[static_cast<size_t>(g.arg)];
  switch (g.kind) {
    case GuardKind::ArgKind: return arg_kind(a) == g.value;
    case GuardKind::Dtype: return static_cast<int64_t>(impl_of(args, g.arg).dtype()) == g.value;
    case GuardKind::Device: return impl_of(args, g.arg).device() == g.device;
    case GuardKind::Rank: return static_cast<int64_t>(impl_of(args, g.arg).sizes().size()) == g.value;
    case GuardKind::Size: return size_of(args, g) == g.value;
    case GuardKind::SymbolBind:
      slots.at(static_cast<size_t>(g.value)) = size_of(args, g);
      return size_of(args, g) >= 2;
    case GuardKind::SymbolEq: return size_of(args, g) == slots.at(static_cast<size_t>(g.value));
    case GuardKind::Stride: return impl_of(args, g.arg).strides()[static_cast<size_t>(g.dim)] == g.value;
    case GuardKind::Contiguous: return impl_of(args, g.arg).is_contiguous();
    case GuardKind::Alias: return alias_target(args, static_cast<size_t>(g.arg)) == g.value;
    case GuardKind::ScalarValue:
      if (const int64_t* i = std::get_if<int64_t>(&a)) return *i == g.value;
      if (const double* d = std::get_if<double>(&a)) return std::memcmp(d, &g.fvalue, sizeof(double)) == 0;
      return std::get<bool>(a) == (g.value != 0);
    case GuardKind::Predicate: return predicate_code_.at(static_cast<size_t>(g.value)).eval(slots.data()) != 0;
  }
  return false;
}

// The value the guard reads from the arguments, as text (for failure messages).
std::string GuardSet::actual_of(const Guard& g, GuardArgs args,
                                const std::vector<int64_t>& slots) const {
  const GuardArg& a = args[static_cast<size_t>(g.arg)];
  switch (g.kind) {
    case GuardKind::ArgKind: return kind_name(arg_kind(a));
    case GuardKind::Dtype: return std::string(dtype_short_name(impl_of(args, g.arg).dtype()));
    case GuardKind::Device: return impl_of(args, g.arg).device().str();
    case GuardKind::Rank: return std::to_string(impl_of(args, g.arg).sizes().size());
    case GuardKind::Size:
    case GuardKind::SymbolBind: return std::to_string(size_of(args, g));
    case GuardKind::SymbolEq:
      return fmt::format("{} and {}", size_of(args, g), slots.at(static_cast<size_t>(g.value)));
    case GuardKind::Stride: return std::to_string(impl_of(args, g.arg).strides()[static_cast<size_t>(g.dim)]);
    case GuardKind::Contiguous:
      return fmt::format("strides {}", shape_str(impl_of(args, g.arg).strides()));
    case GuardKind::Alias: {
      const int64_t t = alias_target(args, static_cast<size_t>(g.arg));
      return t < 0 ? "no aliasing" : fmt::format("aliasing argument {}", t);
    }
    case GuardKind::ScalarValue:
      if (const int64_t* i = std::get_if<int64_t>(&a)) return std::to_string(*i);
      if (const double* d = std::get_if<double>(&a)) return fmt::format("{}", *d);
      return std::get<bool>(a) ? "true" : "false";
    case GuardKind::Predicate: {
      std::vector<std::string> used;
      predicates_.at(static_cast<size_t>(g.value)).collect_symbols(used);
      std::string out;
      for (const std::string& u : used) {
        const size_t k = static_cast<size_t>(std::find(slot_symbols_.begin(), slot_symbols_.end(), u) -
                                             slot_symbols_.begin());
        out += fmt::format("{}{} = {}", out.empty() ? "" : ", ", slot_sources_[k], slots[k]);
      }
      return out;
    }
  }
  return "?";
}

std::optional<GuardFailure> GuardSet::first_failure(GuardArgs args) const {
  if (args.size() != names_.size())
    return GuardFailure{{}, fmt::format("{} arguments", names_.size()), std::to_string(args.size())};
  // Guards are ordered so that each one's preconditions (the argument is a tensor, its rank,
  // the binding of a symbol) are checked before it.
  std::vector<int64_t> slots(slot_symbols_.size(), 0);
  for (const Guard& g : guards_)
    if (!passes(g, args, slots)) return GuardFailure{g, describe(g), actual_of(g, args, slots)};
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
    case GuardKind::SymbolBind: return fmt::format("2 <= {}.size({})", n, g.dim);
    case GuardKind::SymbolEq:
      return fmt::format("{}.size({}) == {}", n, g.dim, slot_sources_.at(static_cast<size_t>(g.value)));
    case GuardKind::Contiguous: return fmt::format("{} is contiguous", n);
    case GuardKind::Predicate: return predicate_text_.at(static_cast<size_t>(g.value));
    case GuardKind::Stride: return fmt::format("{}.stride({}) == {}", n, g.dim, g.value);
    case GuardKind::Alias:
      return g.value < 0 ? fmt::format("{} shares storage with no earlier argument", n)
                         : fmt::format("{} shares storage with {}", n, names_.at(static_cast<size_t>(g.value)));
    case GuardKind::ScalarValue: {
      if (g.fp) return fmt::format("{} == {}", n, g.fvalue);
      // A bool argument reads as true/false, as its actual value does in a failure.
      for (const Guard& k : guards_)
        if (k.kind == GuardKind::ArgKind && k.arg == g.arg && k.value == arg_kind(GuardArg(false)))
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

// name <argument name>          one per argument, in order
// slot <symbol> <source>          one per slot
// guard <kind> <arg> <dim> <value> <fvalue bits, hex> <device> <fp>
// predicate <expression over the slots' symbols>
std::string GuardSet::serialize() const {
  std::string s;
  for (const std::string& n : names_) s += "name " + n + "\n";
  for (size_t k = 0; k < slot_symbols_.size(); ++k) s += "slot " + slot_symbols_[k] + " " + slot_sources_[k] + "\n";
  for (const Guard& g : guards_) {
    uint64_t bits = 0;
    std::memcpy(&bits, &g.fvalue, sizeof bits);
    s += fmt::format("guard {} {} {} {} {:x} {} {}\n", static_cast<int>(g.kind), g.arg, g.dim, g.value, bits,
                     g.device.str(), g.fp ? 1 : 0);
  }
  for (const ir::Expr& p : predicates_) s += "predicate " + p.str() + "\n";
  return s;
}

GuardSet GuardSet::deserialize(std::string_view text) {
  GuardSet gs;
  std::istringstream in{std::string(text)};
  std::string line;
  int number = 0;
  auto bad = [&](std::string_view why) { fail("guards", "line {}: {}: '{}'", number, why, line); };
  while (std::getline(in, line)) {
    ++number;
    std::istringstream ls(line);
    std::string what;
    ls >> what;
    if (what == "name") {
      std::string n;
      if (!std::getline(ls >> std::ws, n) || n.empty()) bad("a name record without a name");
      gs.names_.push_back(n);
    } else if (what == "slot") {
      std::string sym, src;
      if (!(ls >> sym) || !std::getline(ls >> std::ws, src) || src.empty()) bad("a slot record needs a symbol and its source");
      gs.slot_symbols_.push_back(sym);
      gs.slot_sources_.push_back(src);
    } else if (what == "guard") {
      int kind = -1;
      Guard g;
      std::string bits, device;
      int fp = 0;
      if (!(ls >> kind >> g.arg >> g.dim >> g.value >> bits >> device >> fp)) bad("a guard record needs seven fields");
      if (kind < 0 || kind > static_cast<int>(GuardKind::Predicate)) bad("unknown guard kind");
      g.kind = static_cast<GuardKind>(kind);
      g.fp = fp != 0;
      uint64_t fbits = 0;
      const auto [end, ec] = std::from_chars(bits.data(), bits.data() + bits.size(), fbits, 16);
      if (ec != std::errc() || end != bits.data() + bits.size()) bad("a malformed scalar value");
      std::memcpy(&g.fvalue, &fbits, sizeof fbits);
      try {
        g.device = Device(device);
      } catch (const Error&) {
        bad("unknown device");
      }
      gs.guards_.push_back(g);
    } else if (what == "predicate") {
      std::string rest;
      std::getline(ls, rest);
      try {
        gs.predicates_.push_back(ir::parse_expr(rest));
      } catch (const Error& e) {
        bad(e.what());
      }
    } else if (!what.empty()) {
      bad("unknown record");
    }
  }
  // Every index a guard holds must name what exists: the check program indexes by them.
  const int64_t args = static_cast<int64_t>(gs.names_.size()), slots = static_cast<int64_t>(gs.slot_symbols_.size());
  for (const Guard& g : gs.guards_) {
    if (g.arg < 0 || g.arg >= args || g.dim < 0 || g.dim > 65535) fail("guards", "a guard reads argument {} dim {} of {} arguments", g.arg, g.dim, args);
    const bool slot = g.kind == GuardKind::SymbolBind || g.kind == GuardKind::SymbolEq;
    if (slot && (g.value < 0 || g.value >= slots)) fail("guards", "a guard names slot {} of {}", g.value, slots);
    if (g.kind == GuardKind::Predicate && (g.value < 0 || g.value >= static_cast<int64_t>(gs.predicates_.size())))
      fail("guards", "a guard names predicate {} of {}", g.value, gs.predicates_.size());
    if (g.kind == GuardKind::Alias && (g.value < -1 || g.value >= args)) fail("guards", "an alias guard names argument {}", g.value);
  }
  // Each argument's guards follow its kind; a tensor's metadata guards follow its rank and
  // stay inside it (the check program reads sizes and strides by these dims).
  std::vector<int64_t> kind_of(static_cast<size_t>(args), -1), rank_of(static_cast<size_t>(args), -1);
  for (const Guard& g : gs.guards_) {
    const size_t a = static_cast<size_t>(g.arg);
    if (g.kind == GuardKind::ArgKind) {
      if (g.value < 0 || g.value > 3 || kind_of[a] >= 0) fail("guards", "argument {} has a second or unknown kind", g.arg);
      kind_of[a] = g.value;
      continue;
    }
    if (g.kind == GuardKind::Predicate) continue;
    if (kind_of[a] < 0) fail("guards", "a guard on argument {} comes before its kind", g.arg);
    if (g.kind == GuardKind::ScalarValue) {
      if (kind_of[a] == 0) fail("guards", "a scalar guard on tensor argument {}", g.arg);
      continue;
    }
    if (kind_of[a] != 0) fail("guards", "a tensor guard on scalar argument {}", g.arg);
    if ((g.kind == GuardKind::Dtype || g.kind == GuardKind::Device || g.kind == GuardKind::Rank) &&
        (&g == gs.guards_.data() || (&g - 1)->arg != g.arg || (&g - 1)->kind > GuardKind::Device))
      fail("guards", "argument {}'s dtype, device and rank do not follow its kind", g.arg);
    if (g.kind == GuardKind::Dtype && (g.value < 0 || g.value >= kNumScalarTypes))
      fail("guards", "argument {} has dtype number {}", g.arg, g.value);
    if (g.kind == GuardKind::Rank) {
      if (g.value < 0 || g.value > 64) fail("guards", "argument {} has rank {}", g.arg, g.value);
      rank_of[a] = g.value;
    }
    const bool dims = g.kind == GuardKind::Size || g.kind == GuardKind::SymbolBind || g.kind == GuardKind::SymbolEq ||
                      g.kind == GuardKind::Stride;
    if (dims && g.dim >= rank_of[a]) fail("guards", "a guard reads dim {} of argument {} of rank {}", g.dim, g.arg, rank_of[a]);
  }
  std::map<std::string, ir::Expr> to_source;
  for (size_t k = 0; k < gs.slot_symbols_.size(); ++k)
    to_source.emplace(gs.slot_symbols_[k], ir::Expr::symbol(gs.slot_sources_[k]));
  for (const ir::Expr& p : gs.predicates_) {
    std::vector<std::string> used;
    p.collect_symbols(used);
    for (const std::string& u : used)
      if (std::find(gs.slot_symbols_.begin(), gs.slot_symbols_.end(), u) == gs.slot_symbols_.end())
        fail("guards", "predicate '{}' reads symbol {}, which no slot binds", p.str(), u);
    gs.predicate_text_.push_back(p.substitute(to_source).str());
    gs.predicate_code_.emplace_back(p, gs.slot_symbols_);
  }
  gs.sign();
  gs.compile();
  return gs;
}

}  // namespace kiln::guards
