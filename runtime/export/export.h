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
// the guards, the sizes and ranges of the dynamic dims, the kernels' object code for each
// x86-64 feature level asked for (base/cpu_level.h; by default x86-64-v4 and x86-64-v3, each
// with its own plan, scheduled for the level's vector registers), and the tensors fn captured
// (weights, as safetensors, unless ExportOptions::external_weights leaves them to the caller).
// load_program checks the package (format, kiln version,
// checksums), picks the widest level this cpu runs, and links its object code with kiln's own
// loader: no LLVM, no tracing, no passes. A call checks the inputs against the guards and the declared ranges, and a
// failure names the guard ("x.size(1) == 64, got 32").
#pragma once

#include "frontend/tensor.h"

#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <variant>
#include <vector>

namespace kiln {

// Argument `input`'s dim `dim` takes every size in [min, max]. `input` counts every argument,
// scalars included, and must name a tensor; a size of 0 or 1 is always specialized by the
// trace, so min >= 2.
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
  // The x86-64 levels to carry code for ("x86-64-v2", "x86-64-v3", "x86-64-v4", or "native":
  // this host's cpu, all its features); empty: x86-64-v4 and x86-64-v3.
  std::vector<std::string> cpu_levels{};
  // "cpu", or "cuda": a program for NVIDIA GPUs (the cuda backend's plan; cubins for sm_80 and
  // sm_90 and PTX for newer devices, made by NVRTC, which must be available; no device is
  // needed to export). Its inputs are traced on the host and passed on the device.
  std::string backend = "cpu";
  // Names for the tensors fn captures (weights), each matched to a captured tensor by identity
  // (the same tensor, or a view of the same memory with the same sizes and strides); a module's
  // named_parameters() fits, names that match nothing are ignored. The other weights are named
  // w0, w1, ... by the order the trace first uses them. Names are non-empty, without spaces.
  std::vector<std::pair<std::string, Tensor>> weight_names{};
  // Leave the weights out of the package: the caller passes them to load_program
  // (LoadOptions::weights) by name, a checkpoint's tensors for one. The package keeps each one's
  // name, dtype and sizes (describe()), and load_program checks them. With weight_names given,
  // every captured tensor must be named there.
  bool external_weights = false;
};

struct LoadOptions {
  // Run the code of this level (it must be in the package, and this cpu must run it); empty:
  // the widest level in the package this cpu runs.
  std::string cpu_level{};
  // A cuda package: the device it runs on (its inputs must be there; its weights are copied there).
  int cuda_device = 0;
  // The weights of a package exported with ExportOptions::external_weights, by name (more
  // tensors than the package names are ignored; load_safetensors(path) gives a checkpoint's).
  // Each must have the dtype and sizes the program was exported for; a tensor on another device
  // or in another layout than the program reads is copied, any other is used in place: the
  // program then sees later writes into its memory (an optimizer's step), while one copied does
  // not, nor does either follow set_data (nn::Module::to). Empty for a package that holds its
  // weights.
  std::map<std::string, Tensor> weights{};
};

using ExportFn = std::function<std::vector<Tensor>(const std::vector<Tensor>&)>;

// An argument of an exported function that takes scalars too: a tensor, or an integer, double
// or bool the program is specialized for (guarded by value, as compile() guards scalars; a
// value a call should vary belongs in a 0-dim tensor).
using ExportArg = std::variant<Tensor, int64_t, double, bool>;
using ExportArgsFn = std::function<std::vector<Tensor>(const std::vector<ExportArg>&)>;

// Traces fn on example_inputs (cpu tensors), compiles it for each of opts.cpu_levels and
// writes the package at opts.path. A function that cannot be one program (a data-dependent op, an in-place update
// of an input, a tensor requiring grad under grad mode, a dynamic dim the trace pins) is a
// kiln::Error saying so.
void export_program(const ExportFn& fn, const std::vector<Tensor>& example_inputs, const ExportOptions& opts);
// The same for a function of tensors and scalars: `fn(x, int64_t{4}, 0.5)` exported as
// `export_program(fn, {x, int64_t{4}, 0.5}, opts)`; the package's manifest lists each scalar
// with its value, and a call must pass the same values (LoadedProgram::call).
void export_program(const ExportArgsFn& fn, const std::vector<ExportArg>& example_args, const ExportOptions& opts);

class LoadedProgram {
 public:
  // The outputs for `inputs`, which must pass the guards and lie in the declared ranges.
  std::vector<Tensor> operator()(const std::vector<Tensor>& inputs) const;
  // The same for a program exported with scalar arguments: every argument in its place, each
  // scalar of the kind and value it was exported with ("n == 4, got 3" otherwise).
  std::vector<Tensor> call(const std::vector<ExportArg>& args) const;
  // The program's arguments (tensors and scalars), and the kind of argument i: "tensor", or the
  // scalar's "int64", "double" or "bool".
  size_t num_arguments() const;
  const std::string& argument_kind(size_t i) const;
  // What the package holds: its manifest, then the guards, one per line.
  std::string describe() const;
  const std::string& path() const;
  // The code that runs: an x86-64 level ("x86-64-v4", ...) or, for a cuda package, the
  // architecture of the images loaded ("sm_90", "sm_80", or "compute_90": PTX).
  const std::string& target() const;
  // Where its inputs, weights and outputs live: the host, or the cuda device it was loaded for.
  Device device() const;

  struct State;
  explicit LoadedProgram(std::shared_ptr<const State> s) : s_(std::move(s)) {}

 private:
  std::shared_ptr<const State> s_;
};

// kiln::Error "[load_program] path: ..." for a file that is not an intact package of this
// kiln's format and version, or none of whose levels this cpu runs (naming, per level, the
// features it lacks).
LoadedProgram load_program(const std::string& path, const LoadOptions& opts = {});

}  // namespace kiln
