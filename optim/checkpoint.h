// kiln/optim/checkpoint.h — training checkpoints: a model, its optimizer and (optionally) its
// learning-rate scheduler in one safetensors file that PyTorch can read (docs/optim.md).
//
//   optim::save_checkpoint("run/ckpt.safetensors", *model, opt, &sched);
//   optim::load_checkpoint("run/ckpt.safetensors", *model, opt, &sched);  // resumes exactly
//
// The file holds:
//   - "model.<name>": the model's state_dict();
//   - "optim.state.<i>.<key>": the optimizer's state by parameter index, with "step" as a 0-d
//     f32 tensor, as torch.optim keeps it;
//   - metadata "kiln.optimizer" (the optimizer's name), "kiln.param_groups" (the groups'
//     hyperparameters and parameter indices, as JSON in PyTorch's param_groups layout) and
//     "kiln.scheduler" (last_epoch, base_lrs, last_lrs as JSON) when a scheduler is saved.
// tools/checkpoint_torch.py turns such a file into PyTorch's model and optimizer state_dicts and
// back. Writes are atomic (a crash leaves the old file or the new one, never a torn one);
// loading checks everything (missing keys, shapes, the optimizer's type and groups) before it
// changes anything, and each error names the key.
#pragma once

#include "nn/module.h"
#include "optim/lr_scheduler.h"
#include "optim/optimizer.h"

#include <map>
#include <string>

namespace kiln::optim {

// The optimizer alone: its state_dict() as tensors "state.<i>.<key>" and the metadata above
// (keys without the "optim." prefix); optimizer_from_tensors is the inverse.
std::map<std::string, Tensor> optimizer_tensors(const OptimizerStateDict& d);
std::string param_groups_json(const OptimizerStateDict& d);
OptimizerStateDict optimizer_from_tensors(const std::string& optimizer, const std::map<std::string, Tensor>& tensors,
                                          const std::string& param_groups_json, const std::string& where);

void save_checkpoint(const std::string& path, const nn::Module& model, const Optimizer& optimizer,
                     const LRScheduler* scheduler = nullptr,
                     const std::map<std::string, std::string>& metadata = {});
void load_checkpoint(const std::string& path, nn::Module& model, Optimizer& optimizer,
                     LRScheduler* scheduler = nullptr);

}  // namespace kiln::optim
