// kiln/runtime/wiring.h — the pieces the runtime installs into the layers below it.
//
// Lower layers reach higher ones only through hooks (DESIGN.md: "the higher layer registers
// it and the lower one calls it"): the frontend's eager executor and copy kernel, base's
// allocators, ir's source of decomposition result types, the device eager path. Each piece
// defines a wire_* function that installs its hooks; runtime/wiring.cpp calls them all, in
// one static initializer, the only one in the library (test_layering.cpp fails on another).
#pragma once

namespace kiln {
void wire_decomposition_shapes();  // frontend/decompositions.cpp
}  // namespace kiln

namespace kiln::rt {

void wire_cpu_allocator();     // runtime/allocator.cpp: the caching allocator behind base's interface
void wire_eager();             // runtime/eager/eager.cpp: the eager executor and fast path
void wire_eager_composite();   // runtime/eager/eager_composite.cpp: composite ops as compiled programs
void wire_cuda_allocator();    // runtime/cuda/cuda_allocator.cpp
void wire_cuda_copies();       // runtime/cuda/cuda_copy.cpp: moves between devices, copy_
void wire_cuda_eager();        // runtime/cuda/cuda_eager.cpp: eager prims no cuda kernel computes

// Calls every wire_* above (once; further calls do nothing).
void wire_runtime();

}  // namespace kiln::rt
