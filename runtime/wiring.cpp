// kiln/runtime/wiring.cpp — the one place where the runtime installs itself into the layers below.
#include "runtime/wiring.h"

#include <mutex>

namespace kiln::rt {

void wire_runtime() {
  static std::once_flag once;
  std::call_once(once, [] {
    wire_cpu_allocator();
    wire_eager();
    wire_eager_composite();
    wire_cuda_allocator();
    wire_cuda_copies();
    wire_cuda_eager();
    wire_decomposition_shapes();
  });
}

namespace {

// The library's only static initializer: loading kiln wires it.
const bool wired = (wire_runtime(), true);

}  // namespace

}  // namespace kiln::rt
