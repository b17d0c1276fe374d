// kiln/test/test_optim_rules.cpp — kiln::optim against torch.optim: every optimizer and option
// set in tools/optim_fixtures.py (test/optim_fixtures) steps the same parameters with the same
// gradients and must reproduce PyTorch's parameters after each step and its final state; the
// schedulers reproduce PyTorch's lr (and momentum) sequences; clip_grad_norm_ its norms and
// clipped gradients. Also: a step is one compiled program that a new lr does not recompile,
// zero_grad, parameter-group and option errors.
#include "kiln/kiln.h"
#include "test_support/check.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <map>

namespace kiln {
namespace {

using test::error_of;

std::string rules_fixture(const std::string& name) { return std::string(KILN_TEST_DATA_DIR) + "/optim_fixtures/" + name; }

const std::map<std::string, Tensor>& steps_file() {
  static const auto* t = new std::map<std::string, Tensor>(load_safetensors(rules_fixture("steps.safetensors")));
  return *t;
}
const Tensor& at(const std::map<std::string, Tensor>& m, const std::string& key) {
  auto it = m.find(key);
  if (it == m.end()) throw std::runtime_error("fixture has no tensor " + key);
  return it->second;
}

void expect_close(const Tensor& got, const Tensor& want, const std::string& what, double rtol = 1e-5,
                  double atol = 1e-6) {
  ASSERT_EQ(got.sizes(), want.sizes()) << what;
  const Tensor g = got.to(kFloat64).contiguous(), w = want.to(kFloat64).contiguous();
  const double* a = g.data_ptr<double>();
  const double* b = w.data_ptr<double>();
  for (int64_t i = 0; i < g.numel(); ++i)
    ASSERT_LE(std::abs(a[i] - b[i]), atol + rtol * std::abs(b[i])) << what << " element " << i << ": " << a[i]
                                                                      << " vs PyTorch's " << b[i];
}

using Make = std::function<std::unique_ptr<optim::Optimizer>(std::vector<Tensor>)>;

// The configurations of tools/optim_fixtures.py, by name.
const std::map<std::string, Make>& configs() {
  using namespace optim;
  static const std::map<std::string, Make> c = {
      {"sgd", [](auto p) { return std::make_unique<SGD>(p, SGDOptions(0.1)); }},
      {"sgd_momentum",
       [](auto p) { return std::make_unique<SGD>(p, SGDOptions(0.1).momentum(0.9).dampening(0.1).weight_decay(0.01)); }},
      {"sgd_nesterov",
       [](auto p) { return std::make_unique<SGD>(p, SGDOptions(0.05).momentum(0.8).nesterov(true).maximize(true)); }},
      {"adam", [](auto p) { return std::make_unique<Adam>(p, AdamOptions(0.01)); }},
      {"adam_full",
       [](auto p) {
         return std::make_unique<Adam>(
             p, AdamOptions(0.02).betas({0.8, 0.9}).eps(1e-6).weight_decay(0.1).amsgrad(true));
       }},
      {"adamw", [](auto p) { return std::make_unique<AdamW>(p, AdamWOptions(0.01).weight_decay(0.05)); }},
      {"adamw_full", [](auto p) { return std::make_unique<AdamW>(p, AdamWOptions(0.01).amsgrad(true).maximize(true)); }},
      {"rmsprop", [](auto p) { return std::make_unique<RMSprop>(p, RMSpropOptions(0.01)); }},
      {"rmsprop_full",
       [](auto p) {
         return std::make_unique<RMSprop>(
             p, RMSpropOptions(0.01).alpha(0.9).eps(1e-6).weight_decay(0.1).momentum(0.5).centered(true));
       }},
      {"adagrad", [](auto p) { return std::make_unique<Adagrad>(p, AdagradOptions(0.1)); }},
      {"adagrad_full",
       [](auto p) {
         return std::make_unique<Adagrad>(
             p, AdagradOptions(0.1).lr_decay(0.01).weight_decay(0.1).initial_accumulator_value(0.5).eps(1e-8));
       }},
      {"groups",
       [](auto p) {
         std::vector<OptimizerParamGroup> g;
         g.emplace_back(std::vector<Tensor>{p[0]}, SGDOptions(0.1).momentum(0.9).clone());
         g.emplace_back(std::vector<Tensor>{p[1], p[2]}, SGDOptions(0.01).clone());
         return std::make_unique<SGD>(g, SGDOptions(0.1));
       }},
  };
  return c;
}

std::vector<Tensor> initial_params() {
  std::vector<Tensor> p;
  for (int i = 0; i < 3; ++i) p.push_back(at(steps_file(), fmt::format("init.{}", i)).clone().requires_grad_());
  return p;
}

// Step 2 has no gradient for parameter 2: it must be left alone, and its step not counted.
void set_grads(std::vector<Tensor>& params, int step) {
  for (int i = 0; i < 3; ++i) {
    auto it = steps_file().find(fmt::format("grad.{}.{}", step, i));
    params[i].mutable_grad() = it == steps_file().end() ? Tensor() : it->second.clone();
  }
}

class OptimRules : public ::testing::TestWithParam<std::string> {};

TEST_P(OptimRules, MatchesTorchOptim) {
  const std::string name = GetParam();
  std::vector<Tensor> params = initial_params();
  auto opt = configs().at(name)(params);
  for (int k = 0; k < 6; ++k) {
    set_grads(params, k);
    opt->step();
    for (int i = 0; i < 3; ++i)
      expect_close(params[i], at(steps_file(), fmt::format("{}.{}.{}", name, k, i)), fmt::format("{} step {} param {}", name, k, i));
  }
  // The state, as PyTorch's state_dict lists it.
  const optim::OptimizerStateDict d = opt->state_dict();
  int64_t checked = 0;
  for (const auto& [key, want] : steps_file()) {
    const std::string prefix = name + ".state.";
    if (key.rfind(prefix, 0) != 0) continue;
    const std::string rest = key.substr(prefix.size());
    const int64_t index = std::stoll(rest.substr(0, rest.find('.')));
    const std::string field = rest.substr(rest.find('.') + 1);
    ASSERT_TRUE(d.state.count(index)) << key;
    const optim::ParamState& st = d.state.at(index);
    if (field == "step") {
      ASSERT_TRUE(st.has_step) << key;
      EXPECT_EQ(st.step, static_cast<int64_t>(want.item<float>())) << key;
    } else {
      ASSERT_TRUE(st.buffers.count(field)) << key;
      expect_close(st.buffers.at(field), want, key);
    }
    ++checked;
  }
  // ... and no state PyTorch does not have (plain SGD has none).
  int64_t kiln_items = 0;
  for (const auto& [index, st] : d.state) kiln_items += static_cast<int64_t>(st.buffers.size()) + (st.has_step ? 1 : 0);
  EXPECT_EQ(kiln_items, checked) << name;
  // One compiled program per layout: steps 0, 2 (a parameter without a gradient), 3 (SGD's
  // buffer exists now) — never one per step.
  const CompileStats s = opt->compile_stats();
  EXPECT_LE(s.compiles, 4) << name;
  EXPECT_GE(s.cache_hits, 2) << name;
}

INSTANTIATE_TEST_SUITE_P(Torch, OptimRules,
                         ::testing::Values("sgd", "sgd_momentum", "sgd_nesterov", "adam", "adam_full", "adamw",
                                           "adamw_full", "rmsprop", "rmsprop_full", "adagrad", "adagrad_full",
                                           "groups"),
                         [](const auto& info) { return info.param; });

// Reduced and double precision: f64 against PyTorch's default rule, bf16 and f16 against its
// fused=True optimizers, which (as kiln) compute each update in f32 and round what they store:
// within one unit in the last place of the dtype after four steps.
TEST(OptimStep, ReducedAndDoublePrecisionMatchTorch) {
  const auto file = load_safetensors(rules_fixture("dtypes.safetensors"));
  const std::vector<std::tuple<std::string, double>> dtypes = {{"float64", 1e-12}, {"bfloat16", 4e-3}, {"float16", 1e-3}};
  for (const auto& [dt, rtol] : dtypes) {
    for (const std::string opt_name : {"adamw", "sgd"}) {
      Tensor p = at(file, "init." + dt).clone().requires_grad_();
      std::unique_ptr<optim::Optimizer> opt;
      if (opt_name == "adamw") opt = std::make_unique<optim::AdamW>(std::vector<Tensor>{p}, optim::AdamWOptions(0.05).amsgrad(true));
      else opt = std::make_unique<optim::SGD>(std::vector<Tensor>{p}, optim::SGDOptions(0.1).momentum(0.9));
      for (int k = 0; k < 4; ++k) {
        p.mutable_grad() = at(file, fmt::format("grad.{}.{}", k, dt)).clone();
        opt->step();
      }
      EXPECT_EQ(p.scalar_type(), at(file, opt_name + "." + dt).scalar_type());
      expect_close(p, at(file, opt_name + "." + dt), opt_name + " " + dt, rtol, rtol);
    }
  }
}

TEST(OptimStep, NewLearningRateDoesNotRecompile) {
  std::vector<Tensor> params = initial_params();
  optim::AdamW opt(params, optim::AdamWOptions(0.01));
  optim::CosineAnnealingLR sched(opt, 10);
  for (int k = 0; k < 6; ++k) {
    for (Tensor& p : params) p.mutable_grad() = ones_like(p);
    opt.step();
    sched.step();
  }
  EXPECT_EQ(opt.compile_stats().compiles, 1);
  EXPECT_EQ(opt.compile_stats().cache_hits, 5);
}

TEST(OptimStep, ZeroGrad) {
  std::vector<Tensor> params = initial_params();
  optim::SGD opt(params, optim::SGDOptions(0.1));
  set_grads(params, 0);
  opt.zero_grad(/*set_to_none=*/false);
  EXPECT_TRUE(params[0].grad().defined());
  EXPECT_EQ(params[0].grad().abs().sum().item<float>(), 0.0f);
  opt.zero_grad();
  EXPECT_FALSE(params[0].grad().defined());
  // No gradients: a step changes nothing.
  const Tensor before = params[0].clone();
  opt.step();
  expect_close(params[0], before, "param after a step without gradients", 0, 0);
}

TEST(OptimStep, ClosureRunsFirst) {
  Tensor w = tensor({1.0f, -2.0f}).requires_grad_();
  optim::SGD opt({w}, optim::SGDOptions(0.5));
  const Tensor loss = opt.step([&] {
    opt.zero_grad();
    Tensor l = (w * w).sum();
    l.backward();
    return l;
  });
  EXPECT_FLOAT_EQ(loss.item<float>(), 5.0f);
  expect_close(w, tensor({0.0f, 0.0f}), "w - 0.5 * 2w", 0, 0);
}

TEST(OptimErrors, OptionsAndGroups) {
  Tensor w = zeros({2}).requires_grad_();
  EXPECT_EQ(error_of([&] { optim::SGD({w}, optim::SGDOptions(-0.1)); }), "[SGD] Invalid learning rate: -0.1");
  EXPECT_EQ(error_of([&] { optim::SGD({w}, optim::SGDOptions(0.1).nesterov(true)); }),
            "[SGD] Nesterov momentum requires a momentum and zero dampening (momentum=0, dampening=0)");
  EXPECT_EQ(error_of([&] { optim::Adam({w}, optim::AdamOptions(0.1).betas({1.0, 0.9})); }),
            "[Adam] Invalid beta parameter at index 0: 1");
  EXPECT_EQ(error_of([&] { optim::Adam({w, w}); }),
            "[Adam] some parameters appear in more than one parameter group (or twice in one)");
  EXPECT_EQ(error_of([&] { optim::Adam(std::vector<Tensor>{zeros({2}, kInt64)}); }),
            "[Adam] can only optimize floating-point tensors, but a parameter of group 0 is int64");
  EXPECT_EQ(error_of([&] { optim::Adagrad(std::vector<Tensor>{}); }), "[Adagrad] got an empty parameter list");
  optim::SGD opt({w}, optim::SGDOptions(0.1));
  w.mutable_grad() = zeros({3});
  EXPECT_EQ(error_of([&] { opt.step(); }), "[SGD] a parameter of shape 2 on cpu has a gradient of shape 3 on cpu");
  w.mutable_grad() = zeros({2}, kFloat64);
  EXPECT_EQ(error_of([&] { opt.step(); }), "[SGD] a parameter of dtype float32 has a gradient of dtype float64; they must match");
  // A refused step changes no state: the first parameter's step is not counted.
  Tensor u = zeros({2}).requires_grad_(), v = zeros({2}).requires_grad_();
  optim::Adam adam({u, v});
  u.mutable_grad() = ones({2});
  v.mutable_grad() = ones({3});
  EXPECT_NE(error_of([&] { adam.step(); }), "<no error>");
  EXPECT_EQ(adam.state(u), nullptr);
  EXPECT_TRUE(u.eq(0).all().item<bool>());
}

// ---- schedulers

TEST(OptimSchedulers, MatchTorch) {
  using namespace optim;
  const auto file = load_safetensors(rules_fixture("schedulers.safetensors"));
  auto run = [&](const std::string& name, Optimizer& opt, const std::function<std::unique_ptr<LRScheduler>()>& make) {
    auto sched = make();
    const Tensor want = at(file, name + ".lr");
    const bool cyclic = file.count(name + ".momentum");
    for (int64_t k = 0; k < want.numel(); ++k) {
      if (k > 0) sched->step();
      EXPECT_NEAR(sched->get_last_lr()[0], want[k].item<double>(), 1e-15 + 1e-12 * std::abs(want[k].item<double>()))
          << name << " step " << k;
      if (cyclic) {
        EXPECT_NEAR(opt.param_groups()[0].options().get_momentum(), at(file, name + ".momentum")[k].item<double>(), 1e-12)
            << name << " momentum at step " << k;
      }
    }
  };
  auto sgd = [] { return std::make_unique<SGD>(std::vector<Tensor>{zeros({1}).requires_grad_()}, SGDOptions(0.1).momentum(0.9)); };
  auto adam = [] { return std::make_unique<Adam>(std::vector<Tensor>{zeros({1}).requires_grad_()}, AdamOptions(0.1)); };
  {
    auto o = sgd();
    run("step", *o, [&] { return std::make_unique<StepLR>(*o, 3, 0.5); });
  }
  {
    auto o = sgd();
    run("cosine", *o, [&] { return std::make_unique<CosineAnnealingLR>(*o, 10, 0.001); });
  }
  {
    auto o = sgd();
    run("linear", *o, [&] { return std::make_unique<LinearLR>(*o, 0.25, 1.0, 4); });
  }
  {
    auto o = sgd();
    run("exponential", *o, [&] { return std::make_unique<ExponentialLR>(*o, 0.9); });
  }
  {
    auto o = sgd();
    run("multistep", *o, [&] { return std::make_unique<MultiStepLR>(*o, std::vector<int64_t>{2, 5, 5, 9}, 0.5); });
  }
  {
    auto o = sgd();
    run("lambda", *o, [&] {
      return std::make_unique<LambdaLR>(*o, [](int64_t e) { return 1.0 / (1.0 + 0.3 * static_cast<double>(e)); });
    });
  }
  {
    auto o = sgd();
    run("onecycle", *o, [&] { return std::make_unique<OneCycleLR>(*o, OneCycleLROptions(0.1, 25)); });
  }
  {
    auto o = adam();
    run("onecycle_adam", *o, [&] {
      return std::make_unique<OneCycleLR>(*o, OneCycleLROptions(0.2, 25)
                                                  .pct_start(0.4)
                                                  .anneal_strategy("linear")
                                                  .three_phase(true)
                                                  .div_factor(10.0)
                                                  .final_div_factor(100.0)
                                                  .base_momentum(0.8)
                                                  .max_momentum(0.9));
    });
    auto& a = static_cast<AdamOptions&>(o->param_groups()[0].options());
    EXPECT_EQ(std::get<1>(a.betas()), 0.999);  // beta2 untouched
  }
  auto o = sgd();
  OneCycleLR one(*o, OneCycleLROptions(0.1, 2));
  one.step();
  one.step();
  EXPECT_EQ(error_of([&] { one.step(); }), "[OneCycleLR] Tried to step 3 times. The specified number of total steps is 2");
}

TEST(OptimSchedulers, PlateauChainedAndSequentialMatchTorch) {
  using namespace optim;
  const auto file = load_safetensors(rules_fixture("plateau.safetensors"));
  const std::vector<double> metrics = {1.0, 0.9, 0.95, 0.91, 0.92, 0.9, 0.89, 0.93, 0.94,
                                       0.95, 0.96, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.1};
  auto sgd = [] { return std::make_unique<SGD>(std::vector<Tensor>{zeros({1}).requires_grad_()}, SGDOptions(0.1).momentum(0.9)); };
  const std::map<std::string, ReduceLROnPlateauOptions> configs = {
      {"plateau_min", ReduceLROnPlateauOptions().patience(2).cooldown(1).factor(0.5).threshold(0.01)},
      {"plateau_max_abs",
       ReduceLROnPlateauOptions().mode("max").patience(1).threshold(0.05).threshold_mode("abs").factor(0.2).min_lr({0.004})},
  };
  for (const auto& [name, options] : configs) {
    auto opt = sgd();
    ReduceLROnPlateau sched(*opt, options);
    const Tensor want = at(file, name + ".lr");
    for (size_t k = 0; k < metrics.size(); ++k) {
      sched.step(metrics[k]);
      EXPECT_DOUBLE_EQ(opt->param_groups()[0].options().get_lr(), want[static_cast<int64_t>(k)].item<double>())
          << name << " step " << k;
    }
  }
  auto opt = sgd();
  StepLR a(*opt, 3, 0.5);
  LinearLR b(*opt, 0.5, 1.0, 4);
  ChainedScheduler chained({&a, &b});
  const Tensor want = at(file, "chained.lr");
  for (int64_t k = 0; k < want.numel(); ++k) {
    if (k > 0) chained.step();
    EXPECT_NEAR(chained.get_last_lr()[0], want[k].item<double>(), 1e-15) << "chained step " << k;
  }
  auto expect_sequence = [&](const std::string& name, Optimizer& o, const std::function<void()>& step) {
    const Tensor w = at(file, name + ".lr");
    for (int64_t k = 0; k < w.numel(); ++k) {
      if (k > 0) step();
      EXPECT_NEAR(o.param_groups()[0].options().get_lr(), w[k].item<double>(), 1e-15 + 1e-12 * w[k].item<double>())
          << name << " step " << k;
    }
  };
  {  // a warm-up made first changes the lr, not the base lr of the scheduler made after it
    auto o = sgd();
    LinearLR warm(*o, 0.25, 1.0, 4);
    ExponentialLR decay(*o, 0.9);
    ChainedScheduler both({&warm, &decay});
    expect_sequence("chained_warmup", *o, [&] { both.step(); });
  }
  {
    auto o = sgd();
    LinearLR warm(*o, 0.1, 1.0, 5);
    CosineAnnealingLR cosine(*o, 20, 0.001);
    SequentialLR seq(*o, {&warm, &cosine}, {5});
    expect_sequence("sequential", *o, [&] { seq.step(); });
  }
  {
    auto o = sgd();
    ExponentialLR a(*o, 0.8);
    StepLR b(*o, 2, 0.5);
    MultiStepLR c(*o, {3, 6}, 0.1);
    SequentialLR seq(*o, {&a, &b, &c}, {4, 9});
    expect_sequence("sequential3", *o, [&] { seq.step(); });
    EXPECT_EQ(error_of([&] { SequentialLR(*o, {&a, &b}, {1, 2}); }),
              "[SequentialLR] Sequential Schedulers expects number of schedulers provided to be one more than the number "
              "of milestone points, but got number of schedulers 2 and the number of milestones 2");
  }
  EXPECT_EQ(error_of([&] { ReduceLROnPlateau(*opt, ReduceLROnPlateauOptions().factor(1.0)); }),
            "[ReduceLROnPlateau] Factor should be < 1.0, got 1");
  auto other = sgd();
  StepLR c(*other, 2);
  EXPECT_EQ(error_of([&] { ChainedScheduler({&a, &c}); }),
            "[ChainedScheduler] expects all schedulers to belong to the same optimizer");
}

// ---- clipping

TEST(OptimClip, GradNormMatchesTorch) {
  const auto file = load_safetensors(rules_fixture("clip.safetensors"));
  const std::map<std::string, double> norms = {{"2", 2.0}, {"1", 1.0}, {"inf", optim::kInfNorm}, {"3", 3.0}};
  for (const auto& [key, p] : norms) {
    std::vector<Tensor> params = initial_params();
    for (int i = 0; i < 3; ++i) params[i].mutable_grad() = at(steps_file(), fmt::format("grad.0.{}", i)).clone();
    const Tensor total = optim::clip_grad_norm_(params, 1.5, p);
    expect_close(total, at(file, "norm." + key), "norm " + key);
    for (int i = 0; i < 3; ++i)
      expect_close(params[i].grad(), at(file, fmt::format("clipped.{}.{}", key, i)), fmt::format("clipped {} {}", key, i));
  }
}

TEST(OptimClip, ValueAndNonFinite) {
  Tensor w = zeros({3}).requires_grad_();
  w.mutable_grad() = tensor({-2.0f, 0.25f, 3.0f});
  optim::clip_grad_value_({w}, 0.5);
  expect_close(w.grad(), tensor({-0.5f, 0.25f, 0.5f}), "clip_grad_value_", 0, 0);
  w.mutable_grad() = tensor({1.0f, NAN, 0.0f});
  EXPECT_NE(error_of([&] { optim::clip_grad_norm_({w}, 1.0, 2.0, /*error_if_nonfinite=*/true); })
                .find("[clip_grad_norm_] the total norm of order 2 for gradients from `parameters` is non-finite"),
            std::string::npos);
  Tensor none = zeros({2}).requires_grad_();
  EXPECT_EQ(optim::clip_grad_norm_({none}, 1.0).item<float>(), 0.0f);
}

}  // namespace
}  // namespace kiln
