// kiln/tools/run_package.cpp — runs an exported program from the command line (run_package.h).
#include "tools/run_package.h"

#include "kiln/kiln.h"
#include "base/dl_symbol.h"
#include "base/read_file.h"
#include "runtime/openmp.h"

#include <cctype>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace kiln::tools {

namespace {

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

// Whether a library of LLVM's (libLLVM, or kiln's LLVM half) is loaded in this process.
bool llvm_loaded() { return library_loaded("libLLVM") || library_loaded("libkiln_llvm"); }

// The weights of a package exported without them, viewed in place in the mapped file as a
// package's own are (kiln run only reads them): load_safetensors would copy them into fresh
// memory, 2 us a page on the test host, more than the MLP's first call.
std::map<std::string, Tensor> map_weights(const std::string& path) {
  ReadOptions opts;
  opts.max_bytes = size_t{16} << 30;
  std::shared_ptr<const MappedFile> file = MappedFile::map(path, "kiln run --weights", opts);
  return view_safetensors_bytes(file->bytes(), path, file);
}

}  // namespace

// A scalar argument written on the command line, or nothing when `text` is not one of `kind`.
std::optional<ExportArg> parse_scalar(const std::string& text, const std::string& kind) {
  if (kind == "bool") {
    if (text == "true" || text == "1") return ExportArg(true);
    if (text == "false" || text == "0") return ExportArg(false);
    return std::nullopt;
  }
  try {
    size_t used = 0;
    ExportArg v = kind == "int64" ? ExportArg(int64_t{std::stoll(text, &used)}) : ExportArg(std::stod(text, &used));
    if (used == text.size()) return v;
  } catch (const std::exception&) {
  }
  return std::nullopt;
}

bool is_package(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  char head[7] = {};
  return f.read(head, 7) && std::string(head, 7) == "KILNPKG";
}

int run_package(int argc, char** argv) {
  // A process that runs a package once pays for every library it starts: f32 products run on
  // kiln's own SGEMM rather than oneDNN's, whose first product costs about 7 ms more (docs/env.md
  // KILN_SGEMM; set before kiln reads its configuration, unless the user set it).
  setenv("KILN_SGEMM", "kiln", 0);
  // And its threads are bound one to a CPU: on a 2-vCPU VM an unbound worker woken for the
  // first call's kernels often ran on the caller's CPU (runtime/openmp.h); bound, the MLP
  // package's first call took 1.3-1.7 ms instead of 2.0-4.2.
  rt::set_openmp_policy({.spin_count = rt::OpenMpPolicy{}.spin_count, .bind_threads = true});
  const std::string path = argv[2];
  std::vector<std::string> inputs;
  std::string prefix;
  bool stats = false;
  LoadOptions lo;
  for (int i = 3; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "-o" && i + 1 < argc) prefix = argv[++i];
    else if (a == "--cpu-level" && i + 1 < argc) lo.cpu_level = argv[++i];
    else if (a == "--weights" && i + 1 < argc) lo.weights = map_weights(argv[++i]);
    else if (a == "--stats") stats = true;
    else if (a == "--") {
      for (++i; i < argc; ++i) inputs.push_back(argv[i]);  // the rest are arguments, whatever they start with
    } else if (a.rfind("-", 0) == 0 && !(a.size() > 1 && (std::isdigit(static_cast<unsigned char>(a[1])) || a[1] == '.'))) {
      std::cerr << "kiln run: unknown option " << a
                << " (a package takes INPUT.npy or a scalar per argument, -o PREFIX, --cpu-level LEVEL, --weights FILE.safetensors, --stats)\n";
      return 2;
    } else inputs.push_back(a);
  }
  const auto t0 = std::chrono::steady_clock::now();
  const LoadedProgram p = load_program(path, lo);
  const double load_ms = ms_since(t0);
  // Each argument in its place: a tensor from an .npy file (a cuda package's on its device), a
  // scalar as written ("4", "0.5", "true").
  std::vector<ExportArg> in;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const std::string kind = i < p.num_arguments() ? p.argument_kind(i) : "tensor";
    if (kind == "tensor") {
      in.push_back(load_npy(inputs[i]).to(p.device()));
      continue;
    }
    std::optional<ExportArg> v = parse_scalar(inputs[i], kind);
    if (!v) {
      std::cerr << "kiln run: argument " << i << " of " << path << " is " << kind << " scalar; '" << inputs[i]
                << "' is not one\n";
      return 2;
    }
    in.push_back(*v);
  }
  const auto t1 = std::chrono::steady_clock::now();
  const std::vector<Tensor> out = p.call(in);
  const double call_ms = ms_since(t1);
  for (size_t i = 0; i < out.size(); ++i) {
    std::ostringstream shape;
    for (int64_t d = 0; d < out[i].dim(); ++d) shape << (d ? ", " : "") << out[i].size(d);
    std::cout << "output " << i << ": " << dtype_short_name(out[i].dtype()) << "[" << shape.str() << "]\n";
    if (!prefix.empty()) save_npy(out[i].cpu(), prefix + std::to_string(i) + ".npy");
  }
  if (stats)
    std::cout << "target " << p.target() << "\nload_ms " << load_ms << "\nfirst_call_ms " << call_ms << "\nllvm "
              << (llvm_loaded() ? "loaded" : "not loaded") << "\n";
  return 0;
}

}  // namespace kiln::tools
