// kiln/optim/checkpoint.cpp — model + optimizer + scheduler in one safetensors file
// (optim/checkpoint.h).
#include "optim/checkpoint.h"

#include "base/error.h"
#include "frontend/ops_factory.h"
#include "io/safetensors.h"

#include <nlohmann/json.hpp>

#include <set>

namespace kiln::optim {

namespace {
constexpr const char* kOp = "load_checkpoint";
using json = nlohmann::json;

// Keys PyTorch's param_groups carry that are implementation choices, not hyperparameters of the
// update (foreach, fused, ...), or that its schedulers add: read and ignored.
const std::set<std::string>& ignored_keys() {
  static const std::set<std::string> keys{"foreach",      "capturable", "differentiable", "fused",
                                          "initial_lr",   "decoupled_weight_decay",       "max_lr",
                                          "min_lr",       "base_momentum",                "max_momentum"};
  return keys;
}

HyperParam hyper_from_json(const std::string& name, const json& v, const std::string& where) {
  if (v.is_boolean()) return flag(name, v.get<bool>());
  if (v.is_number()) return number(name, v.get<double>());
  if (v.is_array() && v.size() == 2 && v[0].is_number() && v[1].is_number())
    return pair(name, v[0].get<double>(), v[1].get<double>());
  fail(kOp, "{}: hyperparameter '{}' is {}, expected a number, a flag or a pair of numbers", where, name, v.dump());
}

// "state.<i>.<key>" -> (i, key); false for another name.
bool parse_state_name(const std::string& name, int64_t& index, std::string& key) {
  if (name.rfind("state.", 0) != 0) return false;
  const size_t dot = name.find('.', 6);
  if (dot == std::string::npos || dot == 6) return false;
  try {
    size_t used = 0;
    index = std::stoll(name.substr(6, dot - 6), &used);
    if (used != dot - 6) return false;
  } catch (const std::exception&) {
    return false;
  }
  key = name.substr(dot + 1);
  return !key.empty();
}
}  // namespace

std::map<std::string, Tensor> optimizer_tensors(const OptimizerStateDict& d) {
  std::map<std::string, Tensor> out;
  for (const auto& [i, st] : d.state) {
    if (st.has_step) out[fmt::format("state.{}.step", i)] = full({}, static_cast<double>(st.step), kFloat32);
    for (const auto& [key, t] : st.buffers) out[fmt::format("state.{}.{}", i, key)] = t;
  }
  return out;
}

std::string param_groups_json(const OptimizerStateDict& d) {
  json groups = json::array();
  for (const auto& g : d.param_groups) {
    json j = json::object();
    for (const HyperParam& h : g.hyperparams) {
      switch (h.kind) {
        case HyperParam::Kind::Number: j[h.name] = h.a; break;
        case HyperParam::Kind::Flag: j[h.name] = h.a != 0; break;
        case HyperParam::Kind::Pair: j[h.name] = json::array({h.a, h.b}); break;
      }
    }
    j["params"] = g.params;
    groups.push_back(std::move(j));
  }
  return groups.dump();
}

OptimizerStateDict optimizer_from_tensors(const std::string& optimizer, const std::map<std::string, Tensor>& tensors,
                                          const std::string& groups_json, const std::string& where) {
  OptimizerStateDict d;
  json groups;
  try {
    groups = json::parse(groups_json);
  } catch (const json::exception& e) {
    fail(kOp, "{}: the param_groups of the {} optimizer are not valid JSON ({})", where, optimizer, e.what());
  }
  if (!groups.is_array()) fail(kOp, "{}: param_groups must be a JSON list", where);
  for (const json& g : groups) {
    if (!g.is_object() || !g.contains("params") || !g["params"].is_array())
      fail(kOp, "{}: each parameter group must be an object with a 'params' list, got {}", where, g.dump());
    OptimizerStateDict::Group out;
    for (const auto& [name, v] : g.items()) {
      if (name == "params") {
        for (const json& i : v) {
          if (!i.is_number_integer()) fail(kOp, "{}: parameter indices must be integers, got {}", where, i.dump());
          out.params.push_back(i.get<int64_t>());
        }
      } else if (!ignored_keys().count(name) && !v.is_null()) {
        out.hyperparams.push_back(hyper_from_json(name, v, where));
      }
    }
    d.param_groups.push_back(std::move(out));
  }
  for (const auto& [name, t] : tensors) {
    int64_t index = 0;
    std::string key;
    if (!parse_state_name(name, index, key))
      fail(kOp, "{}: '{}' is not an optimizer state tensor (expected state.<index>.<key>)", where, name);
    ParamState& st = d.state[index];
    if (key == "step") {
      if (t.numel() != 1) fail(kOp, "{}: '{}' must hold one number, got shape [{}]", where, name, fmt::join(t.sizes(), ", "));
      const double step = t.to(kFloat64).item<double>();
      if (!(step >= 0) || step != static_cast<double>(static_cast<int64_t>(step)))
        fail(kOp, "{}: '{}' must be a whole number of steps, got {}", where, name, step);
      st.step = static_cast<int64_t>(step);
      st.has_step = true;
    } else {
      st.buffers[key] = t;
    }
  }
  return d;
}

void save_checkpoint(const std::string& path, const nn::Module& model, const Optimizer& optimizer,
                     const LRScheduler* scheduler, const std::map<std::string, std::string>& metadata) {
  std::map<std::string, Tensor> tensors;
  for (const auto& item : model.state_dict()) tensors["model." + item.key()] = item.value();
  const OptimizerStateDict d = optimizer.state_dict();
  for (auto& [name, t] : optimizer_tensors(d)) tensors["optim." + name] = t;
  std::map<std::string, std::string> meta = metadata;
  meta["kiln.optimizer"] = optimizer.name();
  meta["kiln.param_groups"] = param_groups_json(d);
  if (scheduler) {
    const LRSchedulerState s = scheduler->state_dict();
    meta["kiln.scheduler"] = json{{"last_epoch", s.last_epoch}, {"base_lrs", s.base_lrs}, {"last_lrs", s.last_lrs}}.dump();
  }
  save_safetensors(tensors, path, meta);
}

void load_checkpoint(const std::string& path, nn::Module& model, Optimizer& optimizer, LRScheduler* scheduler) {
  const std::map<std::string, std::string> meta = load_safetensors_metadata(path);
  auto need = [&](const char* key) -> const std::string& {
    auto it = meta.find(key);
    if (it == meta.end()) fail(kOp, "{}: metadata '{}' is missing (not a kiln training checkpoint?)", path, key);
    return it->second;
  };
  const std::string& name = need("kiln.optimizer");
  if (name != optimizer.name())
    fail(kOp, "{}: the checkpoint holds the state of a {} optimizer, not of {}", path, name, optimizer.name());
  LRSchedulerState sched;
  if (scheduler) {
    try {
      const json s = json::parse(need("kiln.scheduler"));
      sched.last_epoch = s.at("last_epoch").get<int64_t>();
      sched.base_lrs = s.at("base_lrs").get<std::vector<double>>();
      sched.last_lrs = s.at("last_lrs").get<std::vector<double>>();
    } catch (const json::exception& e) {
      fail(kOp, "{}: metadata 'kiln.scheduler' is malformed ({})", path, e.what());
    }
  }
  std::map<std::string, Tensor> model_state, optim_state;
  for (auto& [key, t] : load_safetensors(path)) {
    if (key.rfind("model.", 0) == 0) model_state[key.substr(6)] = t;
    else if (key.rfind("optim.", 0) == 0) optim_state[key.substr(6)] = t;
    else fail(kOp, "{}: unexpected tensor '{}' (expected model.* or optim.*)", path, key);
  }
  const OptimizerStateDict d = optimizer_from_tensors(name, optim_state, need("kiln.param_groups"), path);
  // The model first: it is checked completely before anything is copied; then the optimizer,
  // which checks its state against the parameters before replacing its own.
  model.load_state_dict(model_state, /*strict=*/true);
  optimizer.load_state_dict(d);
  if (scheduler) scheduler->load_state_dict(sched);
}

}  // namespace kiln::optim
