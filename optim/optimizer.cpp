// kiln/optim/optimizer.cpp — parameter groups, state, state_dict and the compiled step
// (optim/optimizer.h).
#include "optim/optimizer.h"

#include "base/error.h"
#include "frontend/grad_mode.h"
#include "frontend/ops.h"
#include "frontend/ops_factory.h"
#include "runtime/compile/compile.h"

#include <fmt/ranges.h>

#include <algorithm>
#include <cstring>
#include <set>

namespace kiln::optim {

OptimizerParamGroup::OptimizerParamGroup(const OptimizerParamGroup& g)
    : params_(g.params_), options_(g.options_ ? g.options_->clone() : nullptr), initial_lr_(g.initial_lr_) {}

OptimizerParamGroup& OptimizerParamGroup::operator=(const OptimizerParamGroup& g) {
  params_ = g.params_;
  options_ = g.options_ ? g.options_->clone() : nullptr;
  initial_lr_ = g.initial_lr_;
  return *this;
}

OptimizerOptions& OptimizerParamGroup::options() {
  if (!options_) fail("optim", "the parameter group has no options");
  return *options_;
}
const OptimizerOptions& OptimizerParamGroup::options() const {
  if (!options_) fail("optim", "the parameter group has no options");
  return *options_;
}

HyperParam number(std::string name, double v) { return {std::move(name), HyperParam::Kind::Number, v, 0}; }
HyperParam flag(std::string name, bool v) { return {std::move(name), HyperParam::Kind::Flag, v ? 1.0 : 0.0, 0}; }
HyperParam pair(std::string name, double a, double b) { return {std::move(name), HyperParam::Kind::Pair, a, b}; }

namespace {
const char* kind_name(HyperParam::Kind k) {
  switch (k) {
    case HyperParam::Kind::Number: return "a number";
    case HyperParam::Kind::Flag: return "a flag";
    case HyperParam::Kind::Pair: return "a pair of numbers";
  }
  return "?";
}
void expect_kind(const HyperParam& h, HyperParam::Kind k, const char* optimizer) {
  if (h.kind != k) fail(optimizer, "hyperparameter '{}' must be {}, got {}", h.name, kind_name(k), kind_name(h.kind));
}
}  // namespace

double number_of(const HyperParam& h, const char* optimizer) {
  expect_kind(h, HyperParam::Kind::Number, optimizer);
  return h.a;
}
bool flag_of(const HyperParam& h, const char* optimizer) {
  expect_kind(h, HyperParam::Kind::Flag, optimizer);
  return h.a != 0;
}
std::pair<double, double> pair_of(const HyperParam& h, const char* optimizer) {
  expect_kind(h, HyperParam::Kind::Pair, optimizer);
  return {h.a, h.b};
}

Optimizer::Optimizer(std::string name, std::unique_ptr<OptimizerOptions> defaults)
    : name_(std::move(name)), defaults_(std::move(defaults)) {
  CompileOptions co;
  co.name = name_ + ".step";
  co.dynamic = Dynamic::False;  // a parameter's shape never changes
  // Layouts: the first step (no momentum buffer yet), the steady state, and the parameter
  // sets a user's groups and frozen parameters give.
  co.cache_size_limit = 32;
  compiled_ = detail::make_compiled_state(std::move(co));
}

void Optimizer::add_param_groups(const std::vector<OptimizerParamGroup>& groups) {
  check_options(*defaults_);
  if (groups.empty() || (groups.size() == 1 && groups[0].params().empty()))
    fail(name_, "got an empty parameter list");
  for (const OptimizerParamGroup& g : groups) add_param_group(g);
}

Optimizer::~Optimizer() = default;

void Optimizer::check_param(const Tensor& p, size_t group) const {
  if (!p.defined()) fail(name_, "parameter group {} holds an undefined tensor", group);
  if (!is_floating_point(p.scalar_type()))
    fail(name_, "can only optimize floating-point tensors, but a parameter of group {} is {}", group,
         dtype_name(p.scalar_type()));
  if (!p.is_leaf()) fail(name_, "can't optimize a non-leaf tensor (parameter group {})", group);
}

void Optimizer::add_param_group(const OptimizerParamGroup& group) {
  OptimizerParamGroup g(group.params(), group.has_options() ? group.options().clone() : defaults_->clone());
  if (g.params().empty()) fail(name_, "a parameter group needs at least one parameter");
  check_options(g.options());
  std::set<const void*> seen;
  for (const OptimizerParamGroup& old : groups_)
    for (const Tensor& p : old.params()) seen.insert(p.impl());
  for (const Tensor& p : g.params()) {
    check_param(p, groups_.size());
    if (!seen.insert(p.impl()).second)
      fail(name_, "some parameters appear in more than one parameter group (or twice in one)");
  }
  groups_.push_back(std::move(g));
}

CompileStats Optimizer::compile_stats() const { return detail::compiled_stats(*compiled_); }

size_t Optimizer::size() const {
  size_t n = 0;
  for (const OptimizerParamGroup& g : groups_) n += g.params().size();
  return n;
}

const ParamState* Optimizer::state(const Tensor& param) const {
  auto it = state_.find(param.impl());
  return it == state_.end() ? nullptr : &it->second;
}

void Optimizer::zero_grad(bool set_to_none) {
  for (OptimizerParamGroup& g : groups_)
    for (Tensor& p : g.params()) {
      Tensor& grad = p.mutable_grad();
      if (!grad.defined()) continue;
      if (set_to_none) {
        grad = Tensor();
      } else {
        NoGradGuard ng;
        grad.zero_();
      }
    }
}

Tensor Optimizer::step(const std::function<Tensor()>& closure) {
  Tensor loss;
  {
    AutoGradMode on(true);
    loss = closure();
  }
  step();
  return loss;
}

void Optimizer::step() {
  NoGradGuard ng;
  run_step();
}

// The arguments of one compiled call, for the parameters of one device: per parameter its
// tensor, its gradient and its buffers; then the f64 scalars [n, num_scalars()] and the key.
struct Optimizer::StepPlan {
  struct Item {
    const OptimizerOptions* options;
    const ParamState* state;
    size_t buffers;
  };
  std::vector<Item> items;
  std::vector<detail::ArgValue> args;
  std::vector<double> scalars;
  uint64_t key = 0xcbf29ce484222325ull;
  void mix(uint64_t v) { key = (key ^ v) * 0x100000001b3ull; }
};

void Optimizer::run_step() {
  std::vector<std::pair<Device, StepPlan>> plans;  // one per device, in order of first use
  std::vector<ParamState*> stepped;
  const size_t k = num_scalars();
  // Every gradient is checked before any state changes.
  for (const OptimizerParamGroup& g : groups_)
    for (const Tensor& p : g.params()) {
      const Tensor& grad = p.grad();
      if (!grad.defined()) continue;
      if (grad.sizes() != p.sizes() || grad.device() != p.device())
        fail(name_, "a parameter of shape {} on {} has a gradient of shape {} on {}", fmt::join(p.sizes(), "x"),
             p.device().str(), fmt::join(grad.sizes(), "x"), grad.device().str());
      if (grad.scalar_type() != p.scalar_type())
        fail(name_, "a parameter of dtype {} has a gradient of dtype {}; they must match", dtype_name(p.scalar_type()),
             dtype_name(grad.scalar_type()));
    }
  for (const OptimizerParamGroup& g : groups_) {
    const OptimizerOptions& o = g.options();
    for (const Tensor& p : g.params()) {
      const Tensor& grad = p.grad();
      if (!grad.defined()) continue;
      ParamState& st = state_[p.impl()];
      if (st.buffers.empty()) {
        init_state(o, p, st);
        st.fresh = !st.buffers.empty();
      }
      st.has_step = st.has_step || counts_steps();
      ++st.step;
      auto at = std::find_if(plans.begin(), plans.end(), [&](const auto& dp) { return dp.first == p.device(); });
      StepPlan& plan = at != plans.end() ? at->second : plans.emplace_back(p.device(), StepPlan{}).second;
      const std::vector<std::string> names = buffer_names(o, st);
      plan.args.push_back(p);
      plan.args.push_back(grad);
      for (const std::string& n : names) plan.args.push_back(st.buffers.at(n));
      plan.items.push_back({&o, &st, names.size()});
      plan.scalars.resize(plan.scalars.size() + k);
      scalars(o, st, plan.scalars.data() + plan.scalars.size() - k);
      plan.mix(structure(o, st));
      plan.mix(names.size());
      stepped.push_back(&st);
    }
  }
  for (auto& [dev, plan] : plans) {
    Tensor s = kiln::empty({static_cast<int64_t>(plan.items.size()), static_cast<int64_t>(k)}, kFloat64);
    if (!plan.scalars.empty()) std::memcpy(s.data_ptr(), plan.scalars.data(), plan.scalars.size() * sizeof(double));
    plan.args.push_back(dev.is_cpu() ? s : s.to(dev));
    plan.args.push_back(static_cast<int64_t>(plan.key));
    const StepPlan* current = &plan;
    detail::TraceFn trace = [this, current, k](const std::vector<detail::ArgValue>& a) {
      const Tensor& all = std::get<Tensor>(a[a.size() - 2]);
      size_t at = 0;
      for (size_t i = 0; i < current->items.size(); ++i) {
        const auto& item = current->items[i];
        Tensor param = std::get<Tensor>(a[at]);
        const Tensor& grad = std::get<Tensor>(a[at + 1]);
        std::vector<Tensor> buffers;
        for (size_t b = 0; b < item.buffers; ++b) buffers.push_back(std::get<Tensor>(a[at + 2 + b]));
        std::vector<Tensor> s;
        const Tensor row = all.select(0, static_cast<int64_t>(i));
        for (size_t j = 0; j < k; ++j) s.push_back(row.select(0, static_cast<int64_t>(j)));
        const ScalarType dt = param.scalar_type();
        if (dt == kHalf || dt == kBFloat16) {
          // f16 and bf16 update in f32, rounded once when stored (as PyTorch's fused=True
          // optimizers do), not after every term.
          Tensor p32 = param.to(kFloat32);
          std::vector<Tensor> b32;
          for (const Tensor& b : buffers) b32.push_back(b.to(kFloat32));
          update(*item.options, *item.state, p32, grad.to(kFloat32), b32, s);
          param.copy_(p32);
          for (size_t b = 0; b < buffers.size(); ++b) buffers[b].copy_(b32[b]);
        } else {
          update(*item.options, *item.state, param, grad, buffers, s);
        }
        at += 2 + item.buffers;
      }
      return std::vector<Tensor>{};
    };
    try {
      detail::call_compiled(*compiled_, plan.args, trace);
    } catch (...) {
      for (ParamState* st : stepped) --st->step;  // this step did not happen
      throw;
    }
  }
  for (ParamState* st : stepped) st->fresh = false;
}

OptimizerStateDict Optimizer::state_dict() const {
  OptimizerStateDict d;
  int64_t index = 0;
  for (const OptimizerParamGroup& g : groups_) {
    OptimizerStateDict::Group out;
    out.hyperparams = g.options().hyperparams();
    for (const Tensor& p : g.params()) {
      out.params.push_back(index);
      if (const ParamState* st = state(p)) d.state[index] = *st;
      ++index;
    }
    d.param_groups.push_back(std::move(out));
  }
  return d;
}

void Optimizer::load_state_dict(const OptimizerStateDict& dict) {
  if (dict.param_groups.size() != groups_.size())
    fail(name_, "loaded state dict has {} parameter groups, the optimizer has {}", dict.param_groups.size(),
         groups_.size());
  std::vector<const Tensor*> by_index;
  for (size_t gi = 0; gi < groups_.size(); ++gi) {
    const auto& saved = dict.param_groups[gi];
    if (saved.params.size() != groups_[gi].params().size())
      fail(name_, "loaded state dict contains a parameter group (group {}) of {} parameters that doesn't match the "
                  "size of the optimizer's group ({})", gi, saved.params.size(), groups_[gi].params().size());
    for (size_t j = 0; j < saved.params.size(); ++j) {
      const int64_t idx = saved.params[j];
      if (idx < 0) fail(name_, "loaded state dict names parameter index {} in group {}", idx, gi);
      if (by_index.size() <= static_cast<size_t>(idx)) by_index.resize(idx + 1, nullptr);
      by_index[idx] = &groups_[gi].params()[j];
    }
  }
  // Check everything before changing anything.
  std::map<const void*, ParamState> loaded;
  for (const auto& [idx, st] : dict.state) {
    if (idx < 0 || static_cast<size_t>(idx) >= by_index.size() || !by_index[idx])
      fail(name_, "loaded state dict has state for parameter {}, which no parameter group lists", idx);
    const Tensor& p = *by_index[idx];
    ParamState copy;
    copy.step = st.step;
    copy.has_step = st.has_step;
    for (const auto& [key, t] : st.buffers) {
      if (!t.defined()) fail(name_, "state of parameter {}: '{}' is undefined", idx, key);
      if (t.sizes() != p.sizes())
        fail(name_, "state of parameter {}: '{}' has shape [{}], the parameter has shape [{}]", idx, key,
             fmt::join(t.sizes(), ", "), fmt::join(p.sizes(), ", "));
      // As PyTorch: floating state takes the parameter's dtype and device.
      copy.buffers[key] = t.to(p.scalar_type()).to(p.device()).clone();
    }
    loaded[p.impl()] = std::move(copy);
  }
  for (size_t gi = 0; gi < groups_.size(); ++gi) {
    std::unique_ptr<OptimizerOptions> o = groups_[gi].options().clone();
    for (const HyperParam& h : dict.param_groups[gi].hyperparams) o->set(h);
    check_options(*o);
    groups_[gi].set_options(std::move(o));
  }
  // Each state must name the buffers its options need (a momentum buffer for a parameter that
  // has stepped, exp_avg and exp_avg_sq for Adam's).
  for (size_t gi = 0; gi < groups_.size(); ++gi)
    for (const Tensor& p : groups_[gi].params()) {
      auto it = loaded.find(p.impl());
      if (it == loaded.end()) continue;
      for (const std::string& n : buffer_names(groups_[gi].options(), it->second))
        if (!it->second.buffers.count(n))
          fail(name_, "loaded state dict is missing '{}' for a parameter of shape [{}] in group {}", n,
               fmt::join(p.sizes(), ", "), gi);
    }
  state_ = std::move(loaded);
}

}  // namespace kiln::optim
