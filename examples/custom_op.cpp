// examples/custom_op.cpp — a custom op and a custom lowering.
//
// mylib::softclip(x, t) = t * tanh(x / t) is registered from its schema with an eager
// implementation and a decomposition: it runs eagerly, traces into one node, and on the cpu
// backend decomposes into ops that fuse with their neighbours. Then gelu's lowering on cpu
// is replaced by the user's own function, called as an extern step on kiln's buffers.
#include <kiln/kiln.h>

#include <atomic>
#include <iostream>
#include <string>
#include <vector>

using namespace kiln;

int main() {
  auto softclip_math = [](const Tensor& x, double t) { return tanh(x / t) * t; };
  CustomOp softclip = register_op(
      "mylib::softclip(Tensor x, float t) -> Tensor",
      {.eager = [&](const std::vector<Tensor>& in, const ir::AttrList& a) {
         return std::vector<Tensor>{softclip_math(in[0], a.get<double>(0))};
       },
       .decomposition = [&](const std::vector<Tensor>& in, const ir::AttrList& a) {
         return std::vector<Tensor>{softclip_math(in[0], a.get<double>(0))};
       }});

  std::atomic<int> gelu_calls{0};
  register_lowering("cpu", "gelu",
                    Lowering::extern_call("my_gelu", [&](const std::vector<Tensor>& in, const ir::AttrList& a,
                                                         const std::vector<Tensor>& out) {
                      ++gelu_calls;
                      Tensor o = out[0];
                      o.copy_(gelu(in[0], a.get<std::string>(0)));  // a user's kernel would go here
                    }));

  auto fn = [&](const Tensor& x) { return gelu(softclip(x * 3, 0.5)) + 1; };
  Tensor x = randn({16, 32});
  Tensor eager = fn(x);  // softclip runs its eager implementation
  auto f = compile(fn);  // cpu: softclip decomposes and fuses; gelu calls my_gelu
  Tensor compiled = f(x);
  const std::string plan = f.explain(x);
  std::cout << plan.substr(plan.find("--- plan"), plan.find("--- LLVM") - plan.find("--- plan"));
  const bool ok = allclose(compiled, eager, 1e-5, 1e-6) && gelu_calls.load() >= 1 &&
                   plan.find("extern gelu [lowering my_gelu]") != std::string::npos &&
                   plan.find("mylib::softclip(") != std::string::npos;
  std::cout << (ok ? "custom_op: ok\n" : "custom_op: FAILED\n");
  return ok ? 0 : 1;
}
