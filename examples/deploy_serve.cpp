// examples/deploy_serve.cpp — run a package that deploy_export wrote, in a process that never
// compiles: no tracing, no passes, no LLVM (libkiln_llvm is never opened).
//
//   deploy_serve DIR      loads DIR/mlp.kiln, runs it on DIR/x.npy and on DIR/x100.npy (a batch of
//                         another size in the declared range), checks the first result against
//                         DIR/y.npy bit for bit and that each row of the second is a distribution;
//                         then DIR/mlp_code.kiln with the weights of DIR/mlp.safetensors, which
//                         must give the same result
//
// Only the package computes here: the checks read the outputs' floats in plain C++ (an eager
// kiln op would be compiled, or read from the compile cache, on first use).
#include <kiln/kiln.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <iostream>
#include <string>

using namespace kiln;

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: deploy_serve DIR\n";
    return 2;
  }
  const std::string dir = argv[1];
  const LoadedProgram mlp = load_program(dir + "/mlp.kiln");
  const Tensor y = mlp({load_npy(dir + "/x.npy")})[0];  // outputs are fresh contiguous tensors
  const Tensor want = load_npy(dir + "/y.npy");
  auto same = [](const Tensor& a, const Tensor& b) {
    return a.sizes().vec() == b.sizes().vec() &&
           std::memcmp(a.data_ptr(), b.data_ptr(), static_cast<size_t>(a.numel()) * sizeof(float)) == 0;
  };
  if (!same(y, want)) {
    std::cerr << "deploy_serve: the package's result differs from the exporting process's\n";
    return 1;
  }
  // The program without its weights, given a checkpoint's by name.
  const LoadedProgram code = load_program(dir + "/mlp_code.kiln", {.weights = load_safetensors(dir + "/mlp.safetensors")});
  if (!same(code({load_npy(dir + "/x.npy")})[0], want)) {
    std::cerr << "deploy_serve: the package with the checkpoint's weights differs from the exporting process's\n";
    return 1;
  }
  const Tensor probs = mlp({load_npy(dir + "/x100.npy")})[0];  // another batch size
  const float* p = probs.data_ptr<float>();
  for (int64_t r = 0; r < probs.size(0); ++r) {
    double total = 0;
    for (int64_t c = 0; c < probs.size(1); ++c) total += p[r * probs.size(1) + c];
    if (std::abs(total - 1.0) > 1e-5) {
      std::cerr << "deploy_serve: row " << r << " sums to " << total << "\n";
      return 1;
    }
  }
  std::cout << "served batches of " << y.size(0) << " and " << probs.size(0) << "; every row a distribution\n";
  std::ifstream maps("/proc/self/maps");
  for (std::string line; std::getline(maps, line);)
    if (line.find("libLLVM") != std::string::npos || line.find("libkiln_llvm") != std::string::npos) {
      std::cerr << "deploy_serve: LLVM was loaded\n";
      return 1;
    }
  return 0;
}
