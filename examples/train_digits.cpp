// examples/train_digits.cpp — trains an MLP or a small CNN on scikit-learn's 8x8 digits with
// kiln::nn and kiln::optim, compiled end to end, from the initial weights PyTorch wrote and on
// the batches PyTorch used (test/train_fixtures, tools/train_fixtures.py).
//
//   train_digits DATA_DIR [mlp|cnn] [--device cuda] [--check]
//
// Each step: the loss (forward, cross-entropy) is one compiled function of the batch, whose
// backward is compiled too; the CNN clips the gradients' norm; the optimizer's step is one
// compiled program over every parameter; a scheduler sets the CNN's lr. With --check the loss
// curve and the test accuracy are compared with PyTorch's and the exit status says whether they
// match. With --device the model, the data and the optimizer's state live on that device.
#include <kiln/kiln.h>

#include "train_check.h"

#include <chrono>
#include <cstdio>
#include <string>

using namespace kiln;

namespace {

// PyTorch's Cnn in tools/train_fixtures.py.
struct CnnImpl : nn::Module {
  CnnImpl() : Module("Cnn") {
    conv1 = register_module("conv1", nn::Conv2d(nn::Conv2dOptions(1, 8, 3).padding(1)));
    conv2 = register_module("conv2", nn::Conv2d(nn::Conv2dOptions(8, 16, 3).padding(1)));
    fc = register_module("fc", nn::Linear(16 * 2 * 2, 10));
  }
  Tensor forward(const Tensor& x) const {
    Tensor h = max_pool2d(relu(conv1->forward(x.view({-1, 1, 8, 8}))), {2, 2});  // [B, 8, 4, 4]
    h = max_pool2d(relu(conv2->forward(h)), {2, 2});                             // [B, 16, 2, 2]
    return fc->forward(h.flatten(1));
  }
  nn::Conv2d conv1{nullptr}, conv2{nullptr};
  nn::Linear fc{nullptr};
};
KILN_MODULE(Cnn);

template <typename Net> double accuracy(const Net& net, const Tensor& x, const Tensor& y) {
  NoGradGuard no_grad;
  return net->forward(x).argmax(-1).eq(y).to(kFloat64).mean().template item<double>();
}

// Trains `net` for the epochs of `perm`; returns the loss of each step.
template <typename Net>
std::vector<double> fit(const Net& net, const Tensor& x, const Tensor& y, const Tensor& perm, optim::Optimizer& opt,
                        optim::LRScheduler* sched, double clip) {
  // The loss of a batch, compiled with its backward; the model's parameters are read by reference.
  auto loss_of = kiln::compile([net](const Tensor& xb, const Tensor& yb) { return cross_entropy(net->forward(xb), yb); });
  std::vector<double> losses;
  const int64_t n = perm.size(1), batch = 64;
  for (int64_t e = 0; e < perm.size(0); ++e) {
    for (int64_t s = 0; s < n; s += batch) {
      const Tensor rows = perm[e].slice(0, s, std::min(s + batch, n));
      opt.zero_grad();
      Tensor loss = loss_of(x.index_select(0, rows), y.index_select(0, rows));
      loss.backward();
      if (clip > 0) optim::clip_grad_norm_(net->parameters(), clip);
      opt.step();
      if (sched) sched->step();
      losses.push_back(loss.item<double>());
    }
    std::printf("epoch %2lld: loss %.4f\n", static_cast<long long>(e + 1), losses.back());
  }
  return losses;
}

}  // namespace

int main(int argc, char** argv) {
  const train::Flags flags = train::parse_flags(argc, argv);
  if (flags.positional.empty()) {
    std::fprintf(stderr, "usage: %s DATA_DIR [mlp|cnn] [--device cuda] [--check]\n", argv[0]);
    return 2;
  }
  const std::string dir = flags.positional[0];
  const std::string which = flags.positional.size() > 1 ? flags.positional[1] : "mlp";
  const bool check = flags.check;
  const Device dev = flags.device;
  if (which != "mlp" && which != "cnn") {
    std::fprintf(stderr, "unknown model '%s' (mlp or cnn)\n", which.c_str());
    return 2;
  }
  try {
    const auto data = train::load(dir, "digits.safetensors", dev);
    const Tensor train_x = train::get(data, "train_x").to(kFloat32) / 16, train_y = train::get(data, "train_y");
    const Tensor test_x = train::get(data, "test_x").to(kFloat32) / 16, test_y = train::get(data, "test_y");
    const Tensor perm = train::get(data, "perm");
    const auto reference = train::load(dir, which + "_result.safetensors");

    const auto t0 = std::chrono::steady_clock::now();
    std::vector<double> losses;
    double acc = 0;
    if (which == "mlp") {
      nn::Sequential net(nn::Linear(64, 64), nn::ReLU(), nn::Linear(64, 10));
      net->load(dir + "/mlp_init.safetensors");
      net->to(dev);
      optim::AdamW opt(net->parameters(), optim::AdamWOptions(1e-2).weight_decay(1e-2));
      losses = fit(net, train_x, train_y, perm, opt, nullptr, 0);
      acc = accuracy(net, test_x, test_y);
    } else {
      Cnn net;
      net->load(dir + "/cnn_init.safetensors");
      net->to(dev);
      optim::SGD opt(net->parameters(), optim::SGDOptions(0.05).momentum(0.9).nesterov(true).weight_decay(1e-4));
      optim::CosineAnnealingLR sched(opt, 230);
      losses = fit(net, train_x, train_y, perm, opt, &sched, 1.0);
      acc = accuracy(net, test_x, test_y);
    }
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("%s on %s: %zu steps in %.2f s, test accuracy %.4f\n", which.c_str(), dev.str().c_str(), losses.size(),
                secs, acc);
    if (!check) return 0;
    // The CNN's curve stays within float rounding of PyTorch's for the whole run. The MLP's
    // (AdamW, lr 1e-2) amplifies rounding late in the run (1e-6 noise in the initial weights
    // moves PyTorch's own curve by 4e-4), so its first 100 steps are compared.
    const bool ok = train::check(losses, train::get(reference, "loss"), which == "mlp" ? 100 : 230, 1e-4, acc,
                                 train::get(reference, "test_accuracy").item<double>());
    return ok ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "train_digits: %s\n", e.what());
    return 1;
  }
}
