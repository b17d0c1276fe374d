// kiln/runtime/backend_interpreter.cpp — the "interpreter" and "eager" backends: a graph run on the reference interpreter, and a function run as it is.
//
// "interpreter": level Prim; the decomposed, simplified graph is kept and walked by the
// reference interpreter (runtime/interpreter/interpreter.h) on every call — the executable
// specification every other backend is tested against. "eager": compile() never traces the
// function; it runs op by op (Backend::traces() is false), so it has nothing to compile.
#include "base/error.h"
#include "runtime/backend.h"
#include "runtime/pipeline.h"
#include "runtime/interpreter/interpreter.h"

namespace kiln::rt {

namespace {

class InterpreterExecutable final : public Executable {
 public:
  explicit InterpreterExecutable(std::shared_ptr<const ir::Graph> g) : graph_(std::move(g)) {}
  // Its calls come from compile(), whose guards the inputs passed.
  std::vector<Tensor> run(const std::vector<Tensor>& inputs) const override {
    return interpret(*graph_, inputs, SizeChecks::Guarded);
  }

 private:
  std::shared_ptr<const ir::Graph> graph_;
};

class InterpreterBackend final : public Backend {
 public:
  const std::string& name() const override { return name_; }
  ir::OpLevel level() const override { return ir::OpLevel::Prim; }
  CompileStatus compile(Compilation& c) const override {
    CompileStatus s;
    s.exe = std::make_unique<InterpreterExecutable>(c.graph);
    return s;
  }

 private:
  std::string name_ = "interpreter";
};

class EagerBackend final : public Backend {
 public:
  const std::string& name() const override { return name_; }
  ir::OpLevel level() const override { return ir::OpLevel::Composite; }
  bool traces() const override { return false; }
  CompileStatus compile(Compilation& c) const override {
    internal_fail("the eager backend compiles nothing ('{}' should have run eagerly)", c.opts.name);
  }

 private:
  std::string name_ = "eager";
};

}  // namespace

std::shared_ptr<const Backend> make_interpreter_backend() { return std::make_shared<InterpreterBackend>(); }
std::shared_ptr<const Backend> make_eager_backend() { return std::make_shared<EagerBackend>(); }

}  // namespace kiln::rt
