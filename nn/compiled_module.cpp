// kiln/nn/compiled_module.cpp — the guards of compiled modules (nn/compiled_module.h).
#include "nn/compiled_module.h"

#include "base/error.h"

namespace kiln::nn {

ModuleSignature module_signature(const Module& m) {
  bool any = false, every = true;
  int64_t count = 0, mask = 0;
  uint64_t tree = 0xcbf29ce484222325ull;  // FNV-1a over the modules' stamps, a word at a time
  m.for_each_module([&](const Module& x) {
    const bool t = x.is_training();
    any = any || t;
    every = every && t;
    if (t && count < 61) mask |= int64_t{1} << count;
    ++count;
    tree = (tree ^ x.stamp()) * 0x100000001b3ull;
  });
  ModuleSignature s;
  s.tree = static_cast<int64_t>(tree);
  if (every) {
    s.modes = 1;
  } else if (!any) {
    s.modes = 0;
  } else {
    if (count > 61)
      fail("compile", "modules of a compiled {} with {} submodules mix train and eval modes; kiln guards mixed modes "
                      "for at most 61 modules: set one mode for all (train() or eval())", m.name(), count);
    s.modes = mask | (int64_t{1} << 62);  // mixed: never equal to 0 or 1
  }
  return s;
}

}  // namespace kiln::nn
