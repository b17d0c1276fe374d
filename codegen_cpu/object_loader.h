// kiln/codegen_cpu/object_loader.h — links kiln's object code into the process without LLVM.
//
// LLVM compiles each module of kernels to an x86-64 ELF relocatable object (codegen_cpu/jit.h);
// the compile cache stores those bytes. This loader is what makes them callable: it maps the
// allocated sections of one or more objects into one region, resolves their symbols (the
// objects' own, then libm, libmvec and the process, with dlsym), applies the relocations LLVM
// emits for position-independent small-code-model code (absolute 64-bit, PC-relative 32- and
// 64-bit, PLT calls through a stub, GOT loads through a slot) and protects the code as read
// and execute, the constants as read only. It reads no LLVM data structure and links no LLVM
// library, so a process whose kernels all come from a cache never needs the compiler.
//
// Object files are untrusted bytes (a damaged cache entry, a hostile package): every offset,
// size, index and string is checked against the file, and anything the loader does not
// support (another machine, a relocation type, a common symbol, a reference out of the 2 GiB a
// 32-bit displacement reaches) is refused with a message naming it, never guessed.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kiln::cpu {

// A function an object defines, at its address in the loaded code.
struct LoadedFunction {
  std::string symbol;
  uint64_t address = 0, size = 0;
};

// Code loaded into the process: its functions stay callable while this exists; destruction
// unmaps it.
class LoadedCode {
 public:
  ~LoadedCode();
  LoadedCode(const LoadedCode&) = delete;
  LoadedCode& operator=(const LoadedCode&) = delete;
  // The addresses of the names load_objects was asked for, in order.
  const std::vector<void*>& addrs() const { return addrs_; }
  // Every function the objects define (for perf maps).
  const std::vector<LoadedFunction>& functions() const { return functions_; }
  // The size of the mapping, in bytes.
  size_t mapped_bytes() const { return size_; }

 private:
  friend std::unique_ptr<LoadedCode> load_objects(const std::vector<std::string_view>&, const std::vector<std::string>&,
                                                  std::string*);
  LoadedCode(void* base, size_t size, std::vector<void*> addrs, std::vector<LoadedFunction> functions)
      : base_(base), size_(size), addrs_(std::move(addrs)), functions_(std::move(functions)) {}
  void* base_ = nullptr;
  size_t size_ = 0;
  std::vector<void*> addrs_;
  std::vector<LoadedFunction> functions_;
};

// Links `objects` into one mapping and returns it with the addresses of `names` (global
// symbols some object defines). Null, with *error saying why, when an object is malformed or
// unsupported, a symbol is undefined everywhere, or a name is not defined.
std::unique_ptr<LoadedCode> load_objects(const std::vector<std::string_view>& objects,
                                         const std::vector<std::string>& names, std::string* error);

}  // namespace kiln::cpu
