// kiln/runtime/export/export.h — compile once, ship anywhere: a compiled program in one file,
// run by a process that never loads the compiler.
//
//   kiln::export_program([&](const std::vector<Tensor>& in) { return std::vector<Tensor>{model(in[0])}; },
//                        {example}, {.path = "model.kiln", .input_names = {"x"}, .dynamic = {{0, 0, 1, 64}}});
//   ...
//   kiln::LoadedProgram p = kiln::load_program("model.kiln");   // another process, no LLVM
//   std::vector<Tensor> y = p({x});
//
// export_program traces and compiles fn as compile() does (static, except the dims declared
// dynamic, which serve every size in their range), and writes a package (runtime/export/
// package.h; its sections in docs/export.md): the execution plan with its kernels as text,
// the guards, the sizes and ranges of the dynamic dims, the kernels' object code for this
// host's cpu, and the tensors fn captured (weights, as safetensors). load_program checks the
// package (format, kiln version, checksums, this cpu's features against the ones the code
// was compiled for) and links the object code with kiln's own loader: no LLVM, no tracing,
// no passes. A call checks the inputs against the guards and the declared ranges, and a
// failure names the guard ("x.size(1) == 64, got 32").
#pragma once

#include "frontend/tensor.h"

#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

namespace kiln {

// Input `input`'s dim `dim` takes every size in [min, max] (a size of 0 or 1 is always
// specialized by the trace, so min >= 2).
struct ExportDynamicDim {
  size_t input = 0;
  int64_t dim = 0;
  int64_t min = 2;
  int64_t max = std::numeric_limits<int64_t>::max();
};

struct ExportOptions {
  std::string path;                      // the package file to write (required)
  std::string name = "program";          // in logs and errors
  std::vector<std::string> input_names;  // in guards and errors; missing entries read "arg0", ...
  std::vector<ExportDynamicDim> dynamic;
};

using ExportFn = std::function<std::vector<Tensor>(const std::vector<Tensor>&)>;

// Traces fn on example_inputs (cpu tensors), compiles it for this cpu and writes the package
// at opts.path. A function that cannot be one program (a data-dependent op, an in-place update
// of an input, a tensor requiring grad under grad mode, a dynamic dim the trace pins) is a
// kiln::Error saying so.
void export_program(const ExportFn& fn, const std::vector<Tensor>& example_inputs, const ExportOptions& opts);

class LoadedProgram {
 public:
  // The outputs for `inputs`, which must pass the guards and lie in the declared ranges.
  std::vector<Tensor> operator()(const std::vector<Tensor>& inputs) const;
  // What the package holds: its manifest, then the guards, one per line.
  std::string describe() const;
  const std::string& path() const;

  struct State;
  explicit LoadedProgram(std::shared_ptr<const State> s) : s_(std::move(s)) {}

 private:
  std::shared_ptr<const State> s_;
};

// kiln::Error "[load_program] path: ..." for a file that is not an intact package of this
// kiln's format and version, or whose code this cpu cannot run (naming the missing features).
LoadedProgram load_program(const std::string& path);

}  // namespace kiln
