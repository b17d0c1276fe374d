// examples/deploy_export.cpp — compile a model once and write it as a package.
//
//   deploy_export DIR     writes DIR/mlp.kiln, and DIR/x.npy and DIR/y.npy (an input and the
//                         package's output for it here) and DIR/x100.npy (a batch of 100) for
//                         deploy_serve; and DIR/mlp_code.kiln with DIR/mlp.safetensors, the
//                         same program with its weights kept apart
//
// The model's weights are captured by the lambda, so they travel inside the package; the
// batch dim is dynamic, serving batches of 2 to 256 (sizes 0 and 1 are always specialized).
// mlp_code.kiln leaves them out (ExportOptions::external_weights) and names them as the
// module's checkpoint does, so a server passes a checkpoint's tensors (a fine-tuned one too)
// to the program exported once.
// It is exported under NoGradGuard: a package runs inference. deploy_serve loads it in
// another process.
#include <kiln/kiln.h>

#include <iostream>
#include <string>
#include <utility>
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

  std::vector<std::pair<std::string, Tensor>> names;
  for (const auto& p : mlp->named_parameters()) names.emplace_back(p.key(), p.value());
  export_program(model, {x},
                 {.path = dir + "/mlp_code.kiln", .name = "mlp", .input_names = {"x"}, .dynamic = {{0, 0, 2, 256}},
                  .weight_names = names, .external_weights = true});
  mlp->save(dir + "/mlp.safetensors");
  std::cout << "wrote " << dir << "/mlp.kiln and " << dir << "/mlp_code.kiln with " << dir << "/mlp.safetensors\n";
  return 0;
}
