// kiln/runtime/cpu/onednn.cpp — opening libkiln_onednn on first use (onednn.h).
#include "runtime/cpu/onednn.h"

#include "base/dl_symbol.h"
#include "base/error.h"
#include "runtime/openmp.h"

#include <string>

namespace kiln::rt {

const OneDnn& onednn() {
  static const OneDnn* const table = [] {
    using Entry = const OneDnn* (*)();
    if (void* sym = dlsym(RTLD_DEFAULT, "kiln_onednn_entry")) return reinterpret_cast<Entry>(sym)();  // linked in
    (void)openmp();  // oneDNN runs on libgomp: opened first, with kiln's wait (runtime/openmp.h)
    const std::string here = library_directory_of(reinterpret_cast<const void*>(&onednn));
    const std::string beside = here + "libkiln_onednn.so.0";
    const char* const paths[] = {beside.c_str(), "libkiln_onednn.so.0"};
    std::string tried;
    void* lib = dlopen_first(paths, tried);
    if (!lib) throw Error("kiln: convolutions and large f32 products need libkiln_onednn (kiln's oneDNN kernels), which "
                          "could not be opened:" + tried);
    auto entry = reinterpret_cast<Entry>(dlsym(lib, "kiln_onednn_entry"));
    if (!entry) throw Error("kiln: " + beside + " has no kiln_onednn_entry");
    return entry();
  }();
  return *table;
}

}  // namespace kiln::rt
