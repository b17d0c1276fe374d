// kiln/test/test_support/model_zoo.h — the four models of tools/model_fixtures.py (a ResNet-18,
// a 2-block GPT-2, a U-Net and a 2-layer BERT) written with kiln::nn as PyTorch defines them,
// built from a fixture folder's config and state_dict. test/test_models.cpp checks them against
// PyTorch's outputs at the test scale; bench/bench_models.cpp --zoo times them at the bench scale.
#pragma once

#include "kiln/kiln.h"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace kiln::test {

inline const std::vector<std::string> kZooModels = {"resnet18", "gpt2", "unet", "bert"};

struct ZooModel {
  std::string name;
  std::shared_ptr<nn::Module> module;  // loaded from <dir>/<name>.safetensors, in evaluation mode
  std::vector<Tensor> inputs;          // from <dir>/<name>_io.safetensors
  Tensor expected;                     // PyTorch's output on inputs
  std::function<Tensor()> eager;       // the forward on inputs
  std::function<Tensor()> compiled;    // kiln::compile(module) on inputs (compiles on its first call)
  std::function<CompileStats()> stats;  // the compiled forward's
};

// Builds `name` (one of kZooModels) from the fixtures in dir, with `opts` for the compiled forward.
ZooModel load_zoo_model(const std::string& dir, const std::string& name, CompileOptions opts = {});

}  // namespace kiln::test
