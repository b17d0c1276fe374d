// kiln/codegen_cpu/module_compiler.cpp — opening libkiln_llvm on first use (module_compiler.h).
#include "codegen_cpu/module_compiler.h"

#include "base/build_id.h"
#include "base/dl_symbol.h"
#include "base/error.h"

#include <dlfcn.h>

#include <atomic>
#include <string>

namespace kiln::cpu {

namespace {

std::atomic<bool> loaded{false};

// The directory of the library (or executable) this function was linked into.
std::string own_directory() { return library_directory_of(reinterpret_cast<const void*>(&module_compiler_loaded)); }

constexpr const char* kLibrary = "libkiln_llvm.so.0";

const ModuleCompiler* open_compiler() {
  // Already in the process (linked by a test or a tool that uses LLVM itself)?
  using Entry = const ModuleCompiler* (*)();
  if (void* sym = dlsym(RTLD_DEFAULT, "kiln_llvm_module_compiler")) return reinterpret_cast<Entry>(sym)();
  const std::string name = kLibrary;
  std::string errors;
  for (const std::string& path : {own_directory() + name, name}) {
    if (void* lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL)) {
      if (void* sym = dlsym(lib, "kiln_llvm_module_compiler")) return reinterpret_cast<Entry>(sym)();
      errors += fmt::format("; {} has no kiln_llvm_module_compiler", path);
      continue;
    }
    const char* e = dlerror();
    errors += fmt::format("; {}: {}", path, e ? e : "not found");
  }
  throw Error(fmt::format("kiln: compiling CPU kernels needs kiln's LLVM code generator, which could not be opened{}",
                          errors));
}

}  // namespace

const ModuleCompiler& module_compiler() {
  static const ModuleCompiler* const compiler = open_compiler();
  loaded.store(true);
  return *compiler;
}

bool module_compiler_loaded() { return loaded.load(); }

const std::string& module_compiler_id() {
  static const std::string id = [] {
    std::string path = own_directory() + kLibrary;
    if (void* sym = dlsym(RTLD_DEFAULT, "kiln_llvm_module_compiler")) {
      Dl_info info{};
      if (dladdr(sym, &info) != 0 && info.dli_fname) path = info.dli_fname;
    }
    const std::string file = file_build_id(path);
    return "llvm-half " + (file.empty() ? std::string("unknown") : file);
  }();
  return id;
}

}  // namespace kiln::cpu
