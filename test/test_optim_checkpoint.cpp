// kiln/test/test_optim_checkpoint.cpp — training checkpoints (optim/checkpoint.h): kiln resumes
// a checkpoint PyTorch wrote (test/optim_fixtures/resume*.safetensors, tools/optim_fixtures.py)
// and lands on PyTorch's parameters and lr; a kiln checkpoint resumes to the bit-identical run;
// damaged or mismatched files are refused with the key named, and nothing is changed.
#include "kiln/kiln.h"
#include "test_support/check.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace kiln {
namespace {

using test::error_of;

namespace fs = std::filesystem;

std::string fixture(const std::string& name) { return std::string(KILN_TEST_DATA_DIR) + "/optim_fixtures/" + name; }

fs::path temp_dir() {
  fs::path d = fs::temp_directory_path() / ("kiln_optim_ckpt_" + std::to_string(getpid()));
  fs::create_directories(d);
  return d;
}

bool same(const Tensor& a, const Tensor& b) { return a.sizes() == b.sizes() && a.eq(b).all().item<bool>(); }

TEST(OptimCheckpoint, ResumesWhatPyTorchWrote) {
  nn::Linear model(3, 2);
  optim::AdamW opt(model->parameters(), optim::AdamWOptions(0.05).amsgrad(true));
  optim::StepLR sched(opt, 2, 0.5);
  optim::load_checkpoint(fixture("resume.safetensors"), *model, opt, &sched);
  EXPECT_EQ(sched.last_epoch(), 3);
  EXPECT_DOUBLE_EQ(opt.param_groups()[0].options().get_lr(), 0.025);
  const auto want = load_safetensors(fixture("resume_expected.safetensors"));
  for (int k = 3; k < 6; ++k) {
    for (auto& item : model->named_parameters()) item.value().mutable_grad() = want.at(fmt::format("grad.{}.{}", k, item.key())).clone();
    opt.step();
    sched.step();
  }
  for (const auto& item : model->named_parameters()) {
    const Tensor& w = want.at("final." + item.key());
    EXPECT_TRUE(allclose(item.value(), w, 1e-5, 1e-6)) << item.key() << "\n" << item.value() << "\nvs PyTorch's\n" << w;
  }
  EXPECT_DOUBLE_EQ(sched.get_last_lr()[0], want.at("final_lr").item<double>());
}

// Trains `steps` steps of a small model with deterministic gradients.
void train(nn::Linear& model, optim::Optimizer& opt, optim::LRScheduler& sched, int from, int steps) {
  for (int k = from; k < from + steps; ++k) {
    for (Tensor& p : model->parameters()) p.mutable_grad() = full_like(p, 0.1 * (k + 1)) + arange(p.numel()).reshape(p.sizes()).to(kFloat32) * 0.01;
    opt.step();
    sched.step();
  }
}

TEST(OptimCheckpoint, KilnRoundTripResumesExactly) {
  const fs::path path = temp_dir() / "ckpt.safetensors";
  manual_seed(7);
  nn::Linear a(4, 3);
  optim::Adam opt_a(a->parameters(), optim::AdamOptions(0.01).amsgrad(true));
  optim::CosineAnnealingLR sched_a(opt_a, 8);
  train(a, opt_a, sched_a, 0, 3);
  optim::save_checkpoint(path.string(), *a, opt_a, &sched_a, {{"note", "round trip"}});
  EXPECT_EQ(load_safetensors_metadata(path.string()).at("note"), "round trip");

  manual_seed(8);  // different initial weights: all of them must come from the file
  nn::Linear b(4, 3);
  optim::Adam opt_b(b->parameters(), optim::AdamOptions(0.5));
  optim::CosineAnnealingLR sched_b(opt_b, 8);
  optim::load_checkpoint(path.string(), *b, opt_b, &sched_b);
  train(a, opt_a, sched_a, 3, 3);
  train(b, opt_b, sched_b, 3, 3);
  EXPECT_TRUE(same(a->weight, b->weight));
  EXPECT_TRUE(same(a->bias, b->bias));
  EXPECT_EQ(sched_a.get_last_lr(), sched_b.get_last_lr());
  EXPECT_EQ(opt_b.state(b->weight)->step, 6);
  fs::remove_all(path.parent_path());
}

TEST(OptimCheckpoint, RefusesDamagedOrMismatchedFiles) {
  const fs::path dir = temp_dir();
  const std::string good = (dir / "good.safetensors").string();
  nn::Linear model(3, 2);
  optim::AdamW opt(model->parameters(), optim::AdamWOptions(0.01));
  optim::StepLR sched(opt, 2);
  train(model, opt, sched, 0, 1);
  optim::save_checkpoint(good, *model, opt, &sched);
  const Tensor before = model->weight.clone();

  // Truncated: the safetensors reader names the file.
  const std::string cut = (dir / "cut.safetensors").string();
  fs::copy_file(good, cut);
  fs::resize_file(cut, fs::file_size(cut) - 9);
  EXPECT_NE(error_of([&] { optim::load_checkpoint(cut, *model, opt, &sched); }).find(cut), std::string::npos);

  // Another optimizer's state.
  optim::SGD sgd(model->parameters(), optim::SGDOptions(0.1));
  EXPECT_EQ(error_of([&] { optim::load_checkpoint(good, *model, sgd); }),
            fmt::format("[load_checkpoint] {}: the checkpoint holds the state of a AdamW optimizer, not of SGD", good));

  // A missing state tensor, and one of the wrong shape: named, and nothing changes.
  auto tensors = load_safetensors(good);
  const auto meta = load_safetensors_metadata(good);
  auto without = tensors;
  without.erase("optim.state.0.exp_avg_sq");
  const std::string missing = (dir / "missing.safetensors").string();
  save_safetensors(without, missing, meta);
  EXPECT_EQ(error_of([&] { optim::load_checkpoint(missing, *model, opt, &sched); }),
            "[AdamW] loaded state dict is missing 'exp_avg_sq' for a parameter of shape [2, 3] in group 0");
  auto reshaped = tensors;
  reshaped["optim.state.1.exp_avg"] = zeros({3});
  const std::string shaped = (dir / "shaped.safetensors").string();
  save_safetensors(reshaped, shaped, meta);
  EXPECT_EQ(error_of([&] { optim::load_checkpoint(shaped, *model, opt, &sched); }),
            "[AdamW] state of parameter 1: 'exp_avg' has shape [3], the parameter has shape [2]");
  // A model key missing (strict loading reports it, as PyTorch).
  auto no_bias = tensors;
  no_bias.erase("model.bias");
  const std::string nb = (dir / "nobias.safetensors").string();
  save_safetensors(no_bias, nb, meta);
  EXPECT_NE(error_of([&] { optim::load_checkpoint(nb, *model, opt, &sched); }).find("bias"), std::string::npos);
  // Not a training checkpoint at all.
  const std::string plain = (dir / "plain.safetensors").string();
  model->save(plain);
  EXPECT_EQ(error_of([&] { optim::load_checkpoint(plain, *model, opt, &sched); }),
            fmt::format("[load_checkpoint] {}: metadata 'kiln.optimizer' is missing (not a kiln training checkpoint?)",
                        plain));
  EXPECT_TRUE(same(model->weight, before));
  EXPECT_EQ(opt.state(model->weight)->step, 1);
  fs::remove_all(dir);
}

// Writes a kiln checkpoint for tools/checkpoint_torch.py to load into PyTorch (run by hand:
// KILN_OPTIM_EMIT=dir kiln_test_optim --gtest_filter=OptimCheckpoint.Emit).
TEST(OptimCheckpoint, Emit) {
  const char* dir = std::getenv("KILN_OPTIM_EMIT");
  if (!dir) GTEST_SKIP() << "KILN_OPTIM_EMIT is not set";
  manual_seed(3);
  nn::Linear model(3, 2);
  optim::AdamW opt(model->parameters(), optim::AdamWOptions(0.02).amsgrad(true));
  optim::StepLR sched(opt, 2, 0.5);
  train(model, opt, sched, 0, 3);
  optim::save_checkpoint(std::string(dir) + "/kiln_ckpt.safetensors", *model, opt, &sched);
  train(model, opt, sched, 3, 3);
  save_safetensors({{"weight", model->weight}, {"bias", model->bias}}, std::string(dir) + "/kiln_final.safetensors");
}

}  // namespace
}  // namespace kiln
