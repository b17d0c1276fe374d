// examples/train_check.h — what the training examples share: reading a PyTorch reference run
// (test/train_fixtures, tools/train_fixtures.py) and comparing kiln's loss curve with it.
#pragma once

#include <kiln/kiln.h>

#include <cmath>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

namespace train {

// The command line's flags: --check, and --device NAME ("cpu" unless given).
struct Flags {
  bool check = false;
  kiln::Device device;
  std::vector<std::string> positional;
};
inline Flags parse_flags(int argc, char** argv) {
  Flags f;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--check") f.check = true;
    else if (a == "--device" && i + 1 < argc) f.device = kiln::Device(argv[++i]);
    else f.positional.push_back(a);
  }
  return f;
}

inline std::map<std::string, kiln::Tensor> load(const std::string& dir, const std::string& file,
                                                 kiln::Device device = kiln::Device()) {
  return kiln::load_safetensors(dir + "/" + file, device);
}

inline const kiln::Tensor& get(const std::map<std::string, kiln::Tensor>& m, const std::string& key) {
  auto it = m.find(key);
  if (it == m.end()) throw std::runtime_error("the reference run has no tensor '" + key + "'");
  return it->second;
}

// Compares the first `n` losses with PyTorch's: |kiln - torch| <= tol * max(1, |torch|) at each
// step, and the final accuracy within one point. Prints the comparison; true when both hold.
inline bool check(const std::vector<double>& losses, const kiln::Tensor& torch_losses, int64_t n, double tol,
                  double accuracy, double torch_accuracy) {
  const kiln::Tensor want = torch_losses.to(kiln::kFloat64).contiguous();
  const double* w = want.data_ptr<double>();
  double worst = 0;
  int64_t worst_step = 0;
  bool ok = static_cast<int64_t>(losses.size()) >= n && want.numel() >= n;
  for (int64_t i = 0; ok && i < n; ++i) {
    const double err = std::abs(losses[i] - w[i]) / std::max(1.0, std::abs(w[i]));
    if (err > worst) worst = err, worst_step = i;
  }
  ok = ok && worst <= tol;
  std::printf("loss curve: first %lld steps within %.3g of PyTorch's (worst %.3g at step %lld): %s\n",
              static_cast<long long>(n), tol, worst, static_cast<long long>(worst_step), ok ? "yes" : "NO");
  const bool acc_ok = std::abs(accuracy - torch_accuracy) <= 0.01;
  std::printf("accuracy: kiln %.4f, PyTorch %.4f (within a point: %s)\n", accuracy, torch_accuracy,
              acc_ok ? "yes" : "NO");
  return ok && acc_ok;
}

}  // namespace train
