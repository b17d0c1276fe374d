// examples/custom_backend.cpp — a whole user backend.
//
// "walker" asks for core-level graphs: softmax, gelu, layer_norm, mean ... arrive whole, the
// composites (linear, matmul, rms_norm) already decomposed. It compiles a graph into a list
// of steps, one per node, each a C++ function on tensors: the ops it knows run on its own
// "kernels" (here kiln's eager ops stand in for the code a real backend would generate), and
// the rest on kiln's reference interpreter. kiln keeps the guards, the cache and dynamic
// shapes: the backend is called once per new signature, its callable on every call.
#include <kiln/kiln.h>
#include <kiln/runtime/interpreter/interpreter.h>

#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <vector>

using namespace kiln;

namespace {

using Step = std::function<std::vector<Tensor>(const std::vector<Tensor>&)>;

// The walker's own kernels for a few core ops; nullptr: run it on the interpreter.
Step own_kernel(const ir::Node& n) {
  const ir::AttrList attrs = n.attrs();
  switch (n.op()) {
    case ir::OpKind::exp: return [](const std::vector<Tensor>& in) { return std::vector<Tensor>{exp(in[0])}; };
    case ir::OpKind::mul: return [](const std::vector<Tensor>& in) { return std::vector<Tensor>{in[0] * in[1]}; };
    case ir::OpKind::softmax: {
      const int64_t dim = attrs.get<int64_t>(0);
      return [dim](const std::vector<Tensor>& in) { return std::vector<Tensor>{softmax(in[0], dim)}; };
    }
    case ir::OpKind::gelu: {
      const std::string approximate = attrs.get<std::string>(0);
      return [approximate](const std::vector<Tensor>& in) { return std::vector<Tensor>{gelu(in[0], approximate)}; };
    }
    default: return nullptr;
  }
}

struct Program {
  struct Instr {
    Step step;
    std::vector<int> args, results;  // slots
  };
  std::vector<Instr> instrs;
  std::vector<int> outputs;
  size_t slots = 0;
};

// Compiles `g` into slots and steps. Called by kiln once per new input signature.
BackendCallable compile_walker(const ir::Graph& g, const std::vector<Tensor>& examples) {
  auto p = std::make_shared<Program>();
  std::map<const ir::Value*, int> slot;
  for (const ir::Value* v : g.inputs()) slot[v] = static_cast<int>(p->slots++);
  int own = 0, interpreted = 0;
  for (const ir::Node* n : g.nodes()) {
    Program::Instr ins;
    ins.step = own_kernel(*n);
    if (ins.step) {
      ++own;
    } else {
      ++interpreted;
      const ir::OpKind op = n->op();
      const ir::AttrList attrs = n->attrs();
      ins.step = [op, attrs](const std::vector<Tensor>& in) { return rt::interpret_op(op, in, attrs); };
    }
    for (const ir::Value* v : n->inputs()) ins.args.push_back(slot.at(v));
    for (const ir::Value* v : n->outputs()) ins.results.push_back(slot[v] = static_cast<int>(p->slots++));
    p->instrs.push_back(std::move(ins));
  }
  for (const ir::Value* v : g.outputs()) p->outputs.push_back(slot.at(v));
  std::cout << "walker: compiled a graph of " << g.nodes().size() << " nodes for " << examples.size()
            << " inputs (" << own << " on its own kernels, " << interpreted << " interpreted)\n";
  return [p](const std::vector<Tensor>& inputs) {
    std::vector<Tensor> slots(p->slots);
    for (size_t i = 0; i < inputs.size(); ++i) slots[i] = inputs[i];
    std::vector<Tensor> args;
    for (const Program::Instr& ins : p->instrs) {
      args.clear();
      for (int a : ins.args) args.push_back(slots[static_cast<size_t>(a)]);
      std::vector<Tensor> r = ins.step(args);
      for (size_t k = 0; k < ins.results.size(); ++k) slots[static_cast<size_t>(ins.results[k])] = r.at(k);
    }
    std::vector<Tensor> out;
    for (int o : p->outputs) out.push_back(slots[static_cast<size_t>(o)]);
    return out;
  };
}

}  // namespace

int main() {
  register_backend("walker", compile_walker, BackendOptions{.level = OpLevel::Core});

  auto model = [](const Tensor& x, const Tensor& w) { return softmax(gelu(linear(x, w)) * 2, -1); };
  auto f = compile(model, CompileOptions{.backend = "walker"});
  Tensor x = randn({4, 8}), w = randn({3, 8});
  for (int call = 0; call < 3; ++call) {
    Tensor got = f(x, w), want = model(x, w);
    if (!allclose(got, want, 1e-5, 1e-6)) {
      std::cerr << "custom_backend: result differs from eager\n" << got << "\n" << want << "\n";
      return 1;
    }
  }
  const CompileStats s = f.stats();
  std::cout << "custom_backend: 3 calls, " << s.compiles << " compile, " << s.cache_hits << " cache hits: ok\n";
  return s.compiles == 1 && s.cache_hits == 2 ? 0 : 1;
}
