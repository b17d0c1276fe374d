// kiln/base/dl_symbol.h — the loader's helpers: opening a library, asking whether one is loaded,
// and binding a dlopen'ed library's entry points to typed function pointers (the NVRTC, driver
// and OpenBLAS loaders), the first missing symbol recorded in `error`.
#pragma once

#include <fmt/format.h>

#include <dlfcn.h>
#include <link.h>

#include <cstddef>
#include <cstring>
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

// Whether a library whose file name starts with `stem` ("libgomp.so", "libLLVM") is loaded in
// this process, asked of the loader's list of objects (dl_iterate_phdr): nothing is opened or
// read. Reading /proc/self/maps answered the same in 0.12-0.18 ms on the test VM.
inline bool library_loaded(const char* stem) {
  auto match = [](dl_phdr_info* info, size_t, void* data) -> int {
    const char* name = info->dlpi_name ? info->dlpi_name : "";
    const char* slash = std::strrchr(name, '/');
    const char* want = static_cast<const char*>(data);
    return std::strncmp(slash ? slash + 1 : name, want, std::strlen(want)) == 0 ? 1 : 0;
  };
  return dl_iterate_phdr(match, const_cast<char*>(stem)) != 0;
}

// The process's handle of library `soname` ("libgomp.so.1") when something has already loaded
// it, else nullptr, without touching the file system. dlopen(RTLD_NOLOAD) answers the same
// question, but for a library not yet loaded it searches the library path and opens the file to
// compare it with the loaded ones: 0.02-0.05 ms each on the test VM, twice in each `kiln run`
// (runtime/openmp.cpp). The loaded objects are matched by their file's name up to ".so"
// ("libgomp.so.1.0.0" too); dlopen(RTLD_NOLOAD) then gives the handle. Unlike dlopen, this
// does not see the library loaded under another file name with the same soname or inode (an
// LLVM libomp reached through a libgomp.so.1 link): kiln then opens it as if it were not
// loaded, which finds the loaded copy, and a policy set for it (openmp.h) has no effect.
inline void* dlopen_if_loaded(const char* soname) {
  const char* so = std::strstr(soname, ".so");
  const std::string stem(soname, so ? static_cast<size_t>(so - soname) + 3 : std::strlen(soname));
  if (!library_loaded(stem.c_str())) return nullptr;
  return dlopen(soname, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
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
