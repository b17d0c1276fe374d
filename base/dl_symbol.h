// kiln/base/dl_symbol.h — binding a dlopen'ed library's entry points to typed function
// pointers (the NVRTC, driver and OpenBLAS loaders): the first missing symbol is recorded in `error`.
#pragma once

#include <fmt/format.h>

#include <dlfcn.h>

#include <cstddef>
#include <string>

namespace kiln {

// dlopen()s the first of `paths` that loads (RTLD_NOW | RTLD_LOCAL); nullptr when none does,
// with each path and the loader's reason appended to `tried`.
template <size_t N> void* dlopen_first(const char* const (&paths)[N], std::string& tried) {
  for (const char* path : paths) {
    if (void* lib = dlopen(path, RTLD_NOW | RTLD_LOCAL)) return lib;
    const char* err = dlerror();
    tried += fmt::format("\n  {}: {}", path, err ? err : "not found");
  }
  return nullptr;
}

// The directory (with its trailing '/') of the library or executable holding `address`: kiln
// opens its own parts (libkiln_llvm, libkiln_onednn) from libkiln's directory. "" if unknown.
inline std::string library_directory_of(const void* address) {
  Dl_info info{};
  if (dladdr(address, &info) == 0 || !info.dli_fname) return "";
  const std::string path = info.dli_fname;
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? "" : path.substr(0, slash + 1);
}

template <typename Fn> bool bind_symbol(void* lib, const char* library, const char* name, Fn& fn, std::string& error) {
  fn = reinterpret_cast<Fn>(dlsym(lib, name));
  if (!fn && error.empty()) error = fmt::format("{} has no symbol {}", library, name);
  return fn != nullptr;
}

}  // namespace kiln
