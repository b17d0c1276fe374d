// kiln/optim/optimizer.h — the base of every optimizer, as torch::optim::Optimizer: parameter
// groups with their options, per-parameter state, zero_grad, state_dict, and a step() that is
// one compiled program over every parameter (docs/optim.md).
//
//   optim::AdamW opt(model->parameters(), optim::AdamWOptions(1e-3).weight_decay(0.01));
//   loss.backward();
//   opt.step();                      // one fused program updates every parameter and its state
//   opt.zero_grad();
//
// How a step runs. The parameters that have a gradient, their gradients and their state tensors
// are the arguments of one compiled function (runtime/compile/compile.h), traced once per
// layout: the update rule of each parameter (written with kiln's tensor ops, as PyTorch's
// single-tensor rules) records into one graph, which fuses into a few kernels per parameter.
// Every hyperparameter that a scheduler may change (lr, betas, momentum, ...) and every value
// that changes per step (bias corrections) is computed on the host in double, as PyTorch's
// Python floats are, and passed in one f64 tensor of per-parameter scalars: a new lr never
// recompiles. f16 and bf16 parameters and state are updated in f32 and rounded once, when stored,
// as PyTorch's fused=True optimizers do. Only what changes the program's structure (amsgrad, nesterov, a momentum
// buffer that does not exist yet, which parameters have gradients) is part of the key that
// the compiled function guards.
#pragma once

#include "frontend/tensor.h"
#include "runtime/compile/compile.h"

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace kiln::optim {

// One hyperparameter as PyTorch's param_groups dict holds it: a number, a flag or a pair
// (betas). Used by state_dict() and the checkpoint files.
struct HyperParam {
  enum class Kind { Number, Flag, Pair };
  std::string name;
  Kind kind = Kind::Number;
  double a = 0, b = 0;  // b: a pair's second value
};

// The options of a parameter group (AdamOptions, SGDOptions, ...).
class OptimizerOptions {
 public:
  virtual ~OptimizerOptions() = default;
  virtual std::unique_ptr<OptimizerOptions> clone() const = 0;
  // The learning rate, and the momentum a cyclic scheduler varies (SGD's and RMSprop's
  // momentum, Adam's beta1); has_momentum() is false where there is none (Adagrad).
  virtual double get_lr() const = 0;
  virtual void set_lr(double lr) = 0;
  virtual bool has_momentum() const { return false; }
  virtual double get_momentum() const { return 0; }
  virtual void set_momentum(double) {}
  // Every hyperparameter by PyTorch's name, in PyTorch's order; set() takes one back (a
  // loaded state_dict) and fails on an unknown name or kind.
  virtual std::vector<HyperParam> hyperparams() const = 0;
  virtual void set(const HyperParam& h) = 0;
};

// A hyperparameter of an options class with libtorch's accessors: `o.lr()` reads it and
// `o.lr(0.1)` sets it and returns the options, so setters chain.
#define KILN_OPTIM_ARG(T, name)                 \
 public:                                        \
  auto& name(const T& v) {                      \
    name##_ = v;                                \
    return *this;                               \
  }                                             \
  const T& name() const { return name##_; }     \
                                                \
 private:                                       \
  T name##_

// Declares what every options class has: clone, the lr (its member lr_) and the named
// hyperparameters (defined in the optimizer's .cpp).
#define KILN_OPTIM_OPTIONS(Type)                                                                          \
 public:                                                                                                  \
  std::unique_ptr<OptimizerOptions> clone() const override { return std::make_unique<Type>(*this); }     \
  double get_lr() const override { return lr_; }                                                          \
  void set_lr(double lr) override { lr_ = lr; }                                                          \
  std::vector<HyperParam> hyperparams() const override;                                                  \
  void set(const HyperParam& h) override

// Declares the rule an optimizer class implements (Optimizer's protected interface below), with
// `scalars` host-computed values per parameter.
#define KILN_OPTIMIZER_RULE(scalars_per_param)                                                             \
 protected:                                                                                                \
  std::vector<std::string> buffer_names(const OptimizerOptions& o, const ParamState& st) const override;  \
  void init_state(const OptimizerOptions& o, const Tensor& param, ParamState& st) const override;         \
  uint64_t structure(const OptimizerOptions& o, const ParamState& st) const override;                     \
  size_t num_scalars() const override { return scalars_per_param; }                                       \
  void scalars(const OptimizerOptions& o, const ParamState& st, double* out) const override;              \
  void update(const OptimizerOptions& o, const ParamState& st, Tensor& param, const Tensor& grad,         \
              std::vector<Tensor>& buffers, const std::vector<Tensor>& s) const override;                 \
  void check_options(const OptimizerOptions& o) const override

class OptimizerParamGroup {
 public:
  OptimizerParamGroup(std::vector<Tensor> params) : params_(std::move(params)) {}
  OptimizerParamGroup(std::vector<Tensor> params, std::unique_ptr<OptimizerOptions> options)
      : params_(std::move(params)), options_(std::move(options)) {}
  OptimizerParamGroup(const OptimizerParamGroup& g);
  OptimizerParamGroup& operator=(const OptimizerParamGroup& g);
  OptimizerParamGroup(OptimizerParamGroup&&) = default;
  OptimizerParamGroup& operator=(OptimizerParamGroup&&) = default;

  std::vector<Tensor>& params() { return params_; }
  const std::vector<Tensor>& params() const { return params_; }
  bool has_options() const { return options_ != nullptr; }
  OptimizerOptions& options();
  const OptimizerOptions& options() const;
  void set_options(std::unique_ptr<OptimizerOptions> options) { options_ = std::move(options); }
  // The lr the first scheduler of this group found (PyTorch's group["initial_lr"]): every
  // scheduler's base lr, whichever was made first.
  const std::optional<double>& initial_lr() const { return initial_lr_; }
  void set_initial_lr(double lr) { initial_lr_ = lr; }

 private:
  std::vector<Tensor> params_;
  std::unique_ptr<OptimizerOptions> options_;
  std::optional<double> initial_lr_;
};

// A parameter's state: its step count (Adam's, RMSprop's, Adagrad's) and its named buffers
// ("exp_avg", "momentum_buffer", ...), as PyTorch's optimizer.state[p].
struct ParamState {
  int64_t step = 0;       // updates made (counted by every optimizer)
  bool has_step = false;  // whether state_dict() lists the count ("step"; SGD's does not)
  bool fresh = false;     // the buffers were created for this update (SGD's first momentum)
  std::map<std::string, Tensor> buffers;
};

// What state_dict() returns, in PyTorch's layout: the state of each parameter by its index
// (counted across groups in order; only parameters that have state), and each group's
// hyperparameters with the indices of its parameters.
struct OptimizerStateDict {
  struct Group {
    std::vector<HyperParam> hyperparams;
    std::vector<int64_t> params;
  };
  std::map<int64_t, ParamState> state;
  std::vector<Group> param_groups;
};

class Optimizer {
 public:
  Optimizer(const Optimizer&) = delete;
  Optimizer& operator=(const Optimizer&) = delete;
  virtual ~Optimizer();

  // One update of every parameter that has a gradient, under no_grad. With a closure, the
  // closure runs first with grad enabled (it computes the loss and its gradients) and its loss
  // is returned, as PyTorch's step(closure).
  void step();
  Tensor step(const std::function<Tensor()>& closure);

  // set_to_none (PyTorch 2's default): gradients become undefined; otherwise zeroed in place.
  void zero_grad(bool set_to_none = true);

  void add_param_group(const OptimizerParamGroup& group);
  std::vector<OptimizerParamGroup>& param_groups() { return groups_; }
  const std::vector<OptimizerParamGroup>& param_groups() const { return groups_; }
  const OptimizerOptions& defaults() const { return *defaults_; }

  // The state of a parameter (empty until its first step).
  const ParamState* state(const Tensor& param) const;
  size_t size() const;  // parameters in every group

  // The state tensors are the optimizer's own (not copies): save them before the next step.
  OptimizerStateDict state_dict() const;
  // Refuses a dict whose groups or parameter counts differ from this optimizer's, or whose
  // state tensors are missing or shaped unlike their parameters, naming the index and the key.
  void load_state_dict(const OptimizerStateDict& dict);

  // The compiled step's counters (traces, compiles, cache hits; runtime/compile/compile.h).
  CompileStats compile_stats() const;

  // The optimizer's name ("AdamW"), for errors and checkpoints.
  const std::string& name() const { return name_; }

 protected:
  // A derived constructor calls add_param_groups once it is constructed (the checks are its own).
  Optimizer(std::string name, std::unique_ptr<OptimizerOptions> defaults);
  void add_param_groups(const std::vector<OptimizerParamGroup>& groups);

  // The rule of one optimizer (sgd.cpp, adam.cpp, ...):
  // - buffer_names: the state tensors a parameter of this group has, in a fixed order;
  // - init_state: creates them (zeros, or a fill value) when a parameter has none, before
  //   its first update; `fresh` is set for that update;
  // - structure: the bits of the options that change the traced program (flags and whether
  //   a value is zero), hashed into the compiled function's key;
  // - scalars: writes this step's host-computed values (after the step count is advanced)
  //   into `out`, num_scalars() of them;
  // - update: the traced rule (st: as structure saw it). `s` holds the num_scalars() values as 0-d f64 tensors; it
  //   updates `param` and `buffers` in place.
  virtual std::vector<std::string> buffer_names(const OptimizerOptions& o, const ParamState& st) const = 0;
  virtual void init_state(const OptimizerOptions& o, const Tensor& param, ParamState& st) const = 0;
  virtual uint64_t structure(const OptimizerOptions& o, const ParamState& st) const = 0;
  virtual size_t num_scalars() const = 0;
  virtual void scalars(const OptimizerOptions& o, const ParamState& st, double* out) const = 0;
  virtual void update(const OptimizerOptions& o, const ParamState& st, Tensor& param, const Tensor& grad, std::vector<Tensor>& buffers,
                      const std::vector<Tensor>& s) const = 0;
  virtual bool counts_steps() const { return true; }
  // Refuses invalid options (a negative learning rate), naming the value, as PyTorch does.
  virtual void check_options(const OptimizerOptions& o) const = 0;

 private:
  struct StepPlan;
  void run_step();
  void check_param(const Tensor& p, size_t group) const;

  std::string name_;
  std::vector<OptimizerParamGroup> groups_;
  std::unique_ptr<OptimizerOptions> defaults_;
  std::map<const void*, ParamState> state_;  // by TensorImpl
  std::shared_ptr<detail::CompiledState> compiled_;
};

// HyperParam helpers for the options classes.
HyperParam number(std::string name, double v);
HyperParam flag(std::string name, bool v);
HyperParam pair(std::string name, double a, double b);
// h's value checked against the kind expected for `name` (errors name the optimizer).
double number_of(const HyperParam& h, const char* optimizer);
bool flag_of(const HyperParam& h, const char* optimizer);
std::pair<double, double> pair_of(const HyperParam& h, const char* optimizer);

}  // namespace kiln::optim
