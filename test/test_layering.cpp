// kiln/test/test_layering.cpp — the library's folders include each other one way only.
//
// Reads every `#include "folder/..."` of the library and checks it against the allowed edges
// (docs/architecture.md, "Layers"): base below everything; ir on base; guards, frontend and
// passes on ir; the code generators on ir alone; the runtime's top files on the compiler's
// layers and the interpreter; the interpreter on the frontend (no compiler); the cpu and cuda
// homes on the runtime and their own code generator, never on each other; the debugging
// tools, the umbrella header kiln/kiln.h and the kiln tool on anything. A home is a folder
// (runtime/cpu is one, the files directly in runtime/ another). There are no exceptions: a
// forbidden edge fails, naming file and line.
//
// The layers below the runtime reach it only through hooks the runtime installs, all from one
// place: runtime/wiring.cpp holds the library's only static initializer. A namespace-scope
// initializer that runs code at load anywhere else fails here too.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

const std::set<std::string> kCompiler = {"base", "ir", "guards", "frontend", "passes"};

std::set<std::string> with(std::set<std::string> s, std::initializer_list<std::string> more) {
  s.insert(more.begin(), more.end());
  return s;
}

const std::map<std::string, std::set<std::string>>& allowed_edges() {
  static const std::map<std::string, std::set<std::string>> edges = [] {
    std::map<std::string, std::set<std::string>> e = {
        {"base", {}},
        {"ir", {"base"}},
        {"guards", {"ir", "base"}},
        {"frontend", {"ir", "base"}},
        {"passes", {"ir", "base"}},
        // Tensors to and from files and other libraries (safetensors, .npy/.npz, DLPack).
        {"io", {"frontend", "ir", "base"}},
        {"codegen_cpu", {"ir", "base"}},
        {"codegen_cuda", {"ir", "base"}},
        {"runtime/interpreter", {"base", "ir", "frontend"}},
        {"runtime/cache", {"base", "runtime"}},
        {"runtime", with(kCompiler, {"runtime/interpreter"})},
        {"runtime/cpu", with(kCompiler, {"codegen_cpu", "runtime", "runtime/interpreter", "runtime/cache"})},
        {"runtime/cuda", with(kCompiler, {"codegen_cuda", "runtime", "runtime/interpreter", "runtime/cache", "runtime/eager"})},
        // compile(): the compiled-function cache and its training entries; eager ops, which
        // run composites as compiled programs.
        {"runtime/compile", with(kCompiler, {"runtime", "runtime/interpreter"})},
        {"runtime/eager", with(kCompiler, {"runtime", "runtime/interpreter", "runtime/compile"})},
        // Exported programs: compile()'s entry taken apart, cpu object code, weights (io); a
        // cuda package's kernels compiled by NVRTC and loaded by the cuda runtime.
        {"runtime/export", with(kCompiler, {"codegen_cpu", "codegen_cuda", "io", "runtime", "runtime/cache",
                                            "runtime/compile", "runtime/cuda", "runtime/interpreter"})},
        // Modules: tensors, checkpoints (io) and compile(module) (runtime/compile).
        {"nn", with(kCompiler, {"io", "runtime", "runtime/compile", "runtime/interpreter"})},
        // Optimizers (their compiled step), schedulers and checkpoints of modules.
        {"optim", with(kCompiler, {"io", "nn", "runtime", "runtime/compile", "runtime/interpreter"})},
    };
    std::set<std::string> all;
    for (const auto& [home, _] : e) all.insert(home);
    e["runtime/debug"] = all;
    all.insert("runtime/debug");
    e["kiln"] = all;
    all.insert("kiln");
    e["tools"] = all;
    return e;
  }();
  return edges;
}

fs::path source_root() { return fs::path(KILN_TEST_DATA_DIR).parent_path(); }

// The home of `#include "path"`: the longest known home that is a prefix of the path's folder.
std::string home_of_include(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return "";
  std::string dir = path.substr(0, slash);
  while (!dir.empty()) {
    if (allowed_edges().count(dir)) return dir;
    const size_t up = dir.rfind('/');
    if (up == std::string::npos) break;
    dir = dir.substr(0, up);
  }
  return "";
}

// The path of `#include "path"` on this line, or "" (no std::regex: GCC 12 warns falsely
// inside it under -O2 with the sanitizers).
std::string included_path(const std::string& line) {
  size_t i = line.find_first_not_of(" \t");
  if (i == std::string::npos || line[i] != '#') return "";
  i = line.find_first_not_of(" \t", i + 1);
  if (i == std::string::npos || line.compare(i, 7, "include") != 0) return "";
  i = line.find_first_not_of(" \t", i + 7);
  if (i == std::string::npos || line[i] != '"') return "";
  const size_t quote = line.find('"', i + 1);
  if (quote == std::string::npos) return "";
  return line.substr(i + 1, quote - i - 1);
}

// A namespace-scope definition that runs code when the library loads: `const bool x = (...)`,
// `const auto x = [] {...}()`, `bool x = f()`, at the start of a line.
bool load_time_initializer(const std::string& line) {
  for (const char* head : {"const bool ", "static const bool ", "bool ", "const auto ", "static bool "}) {
    if (line.rfind(head, 0) != 0) continue;
    const size_t eq = line.find(" = ");
    if (eq == std::string::npos) continue;
    const std::string rhs = line.substr(eq + 3);
    if (rhs.find('(') != std::string::npos || rhs.rfind("[]", 0) == 0) return true;
  }
  return false;
}

struct Source {
  std::string home, rel;
  fs::path path;
};

std::vector<Source> library_sources() {
  std::vector<Source> out;
  for (const auto& [home, _] : allowed_edges()) {
    const fs::path dir = source_root() / home;
    if (!fs::is_directory(dir)) continue;
    for (const auto& entry : fs::directory_iterator(dir)) {  // one folder: subfolders are homes of their own
      const std::string ext = entry.path().extension().string();
      if (!entry.is_regular_file() || (ext != ".h" && ext != ".cpp" && ext != ".def")) continue;
      out.push_back({home, home + "/" + entry.path().filename().string(), entry.path()});
    }
  }
  return out;
}

TEST(Layering, IncludesPointOneWay) {
  int files = 0;
  for (const Source& src : library_sources()) {
    ++files;
    const std::set<std::string>& allowed = allowed_edges().at(src.home);
    std::ifstream in(src.path);
    std::string line;
    for (int no = 1; std::getline(in, line); ++no) {
      const std::string path = included_path(line);
      const std::string target = path.empty() ? "" : home_of_include(path);
      if (target.empty() || target == src.home || allowed.count(target)) continue;
      ADD_FAILURE() << src.rel << ":" << no << ": " << src.home << "/ may not include " << target << "/ (" << line
                    << "); the allowed edges are in test/test_layering.cpp and docs/architecture.md";
    }
  }
  EXPECT_GT(files, 200);
}

TEST(Layering, EveryHomeIsChecked) {
  // A new folder of library code must be given its edges here.
  for (const char* top : {"base", "ir", "guards", "frontend", "passes", "io", "nn", "optim", "codegen_cpu", "codegen_cuda", "runtime"})
    for (const auto& entry : fs::recursive_directory_iterator(source_root() / top)) {
      if (entry.is_directory()) {
        EXPECT_TRUE(allowed_edges().count(fs::relative(entry.path(), source_root()).string()))
            << entry.path() << " is a folder of library code with no layering rule";
      }
    }
}

TEST(Layering, OnlyTheWiringPointRunsCodeAtLoad) {
  for (const Source& src : library_sources()) {
    if (src.rel == "runtime/wiring.cpp" || src.path.extension() != ".cpp") continue;
    std::ifstream in(src.path);
    std::string line;
    for (int no = 1; std::getline(in, line); ++no)
      EXPECT_FALSE(load_time_initializer(line))
          << src.rel << ":" << no << ": a namespace-scope initializer runs code when the library loads (" << line
          << "); install hooks from a wire_* function that runtime/wiring.cpp calls";
  }
}

// libkiln does not link LLVM (issue 34): only libkiln_llvm's files (the CMake list
// KILN_LLVM_SOURCES: codegen_cpu/jit.cpp, kernel_codegen.cpp and llvm_*.cpp) and the headers
// only they include (codegen_cpu/llvm_*.h) may include LLVM's headers.
bool in_llvm_half(const std::string& rel) {
  return rel == "codegen_cpu/jit.cpp" || rel == "codegen_cpu/kernel_codegen.cpp" || rel.rfind("codegen_cpu/llvm_", 0) == 0;
}

TEST(Layering, OnlyTheLlvmHalfIncludesLlvm) {
  for (const Source& src : library_sources()) {
    std::ifstream in(src.path);
    std::string line;
    for (int no = 1; std::getline(in, line); ++no) {
      const bool llvm_header = line.rfind("#include <llvm/", 0) == 0 || line.rfind("#include <llvm-c/", 0) == 0;
      const std::string path = included_path(line);
      const bool llvm_half_header = path.rfind("codegen_cpu/llvm_", 0) == 0;
      if ((llvm_header || llvm_half_header) && !in_llvm_half(src.rel))
        ADD_FAILURE() << src.rel << ":" << no << ": " << line
                      << " outside libkiln_llvm's files; libkiln must build without LLVM (CMakeLists.txt, KILN_LLVM_SOURCES)";
    }
  }
}

// oneDNN's headers only in libkiln_onednn's file (CMakeLists.txt, KILN_ONEDNN_SOURCES): libkiln
// opens it on the first convolution or large f32 product (runtime/cpu/onednn.h).
TEST(Layering, OnlyTheOneDnnLibraryIncludesOneDnn) {
  for (const Source& src : library_sources()) {
    std::ifstream in(src.path);
    std::string line;
    for (int no = 1; std::getline(in, line); ++no) {
      const bool dnnl = line.rfind("#include <oneapi/dnnl/", 0) == 0 || line.rfind("#include <dnnl", 0) == 0;
      if (dnnl && src.rel != "runtime/cpu/onednn_conv.cpp")
        ADD_FAILURE() << src.rel << ":" << no << ": " << line << " outside libkiln_onednn's file; libkiln must not link oneDNN";
    }
  }
}

}  // namespace
