// examples/deploy_export.cpp — compile a model once and write it as a package.
//
//   deploy_export DIR     writes DIR/mlp.kiln, and DIR/x.npy and DIR/y.npy (an input and the
//                         package's output for it here) and DIR/x100.npy (a batch of 100) for
//                         deploy_serve
//
// The model's weights are captured by the lambda, so they travel inside the package; the
// batch dim is dynamic, serving batches of 2 to 256 (sizes 0 and 1 are always specialized).
// It is exported under NoGradGuard: a package runs inference. deploy_serve loads it in
// another process.
#include <kiln/kiln.h>

#include <iostream>
#include <string>
#include <vector>

using namespace kiln;

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: deploy_export DIR\n";
    return 2;
  }
  const std::string dir = argv[1];
  manual_seed(0);
  nn::Sequential mlp(nn::Linear(16, 64), nn::GELU(), nn::Linear(64, 4));
  mlp->eval();
  NoGradGuard no_grad;
  auto model = [&](const std::vector<Tensor>& in) { return std::vector<Tensor>{softmax(mlp->forward(in[0]), -1)}; };

  const Tensor x = randn({8, 16});
  export_program(model, {x}, {.path = dir + "/mlp.kiln", .name = "mlp", .input_names = {"x"}, .dynamic = {{0, 0, 2, 256}}});
  save_npy(x, dir + "/x.npy");
  save_npy(randn({100, 16}), dir + "/x100.npy");
  save_npy(load_program(dir + "/mlp.kiln")({x})[0], dir + "/y.npy");  // what the package computes here
  std::cout << "wrote " << dir << "/mlp.kiln\n";
  return 0;
}
