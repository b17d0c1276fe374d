// kiln/base/dl_symbol.h — binding a dlopen'ed library's entry points to typed function
// pointers (the NVRTC, driver and OpenBLAS loaders): the first missing symbol is recorded in `error`.
#pragma once

#include <fmt/format.h>

#include <dlfcn.h>

#include <string>

namespace kiln {

template <typename Fn> bool bind_symbol(void* lib, const char* library, const char* name, Fn& fn, std::string& error) {
  fn = reinterpret_cast<Fn>(dlsym(lib, name));
  if (!fn && error.empty()) error = fmt::format("{} has no symbol {}", library, name);
  return fn != nullptr;
}

}  // namespace kiln
