// examples/deploy_serve.cpp — run a package that deploy_export wrote, in a process that never
// compiles: no tracing, no passes, no LLVM (libkiln_llvm is never opened).
//
//   deploy_serve DIR      loads DIR/mlp.kiln, runs it on DIR/x.npy and on a batch of another
//                         size, and checks the first result against DIR/y.npy
#include <kiln/kiln.h>

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
  const Tensor y = mlp({load_npy(dir + "/x.npy")})[0];
  if (!equal(y, load_npy(dir + "/y.npy"))) {  // the same code on the same input: the same bits
    std::cerr << "deploy_serve: the package's result differs from the exporting process's\n";
    return 1;
  }
  const Tensor probs = mlp({randn({100, 16})})[0];  // another batch size, in the declared range
  std::cout << "served batches of 8 and " << probs.size(0) << "; row sums " << probs.sum({1}).min().item<float>() << "..."
            << probs.sum({1}).max().item<float>() << "\n";
  std::ifstream maps("/proc/self/maps");
  for (std::string line; std::getline(maps, line);)
    if (line.find("libLLVM") != std::string::npos) {
      std::cerr << "deploy_serve: LLVM was loaded\n";
      return 1;
    }
  return 0;
}
