// kiln/test/emulated_cuda/emu_stream_work.h — a library's work on a stream of the emulated device.
//
// The cuBLASLt and cuDNN stand-ins compute on the host when called; a real library queues
// kernels on the stream instead, which a stream capture records into a CUDA graph. So each
// stand-in hands its work, with copies of the descriptors it reads, to the emulated driver
// (libcuda.so.1's kiln_emu_stream_work), which runs it at once or, when the stream is
// capturing, records it for the graph's replays.
#pragma once

#include <dlfcn.h>

#include <functional>
#include <utility>

namespace kiln_emu {

inline int stream_work(void* stream, std::function<void()> work) {
  using Fn = int (*)(void*, void (*)(void*), void*, void (*)(void*));
  static const Fn fn = [] {
    void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    return lib ? reinterpret_cast<Fn>(dlsym(lib, "kiln_emu_stream_work")) : nullptr;
  }();
  if (!fn) {  // no emulated driver loaded: nothing can be capturing
    work();
    return 0;
  }
  auto* held = new std::function<void()>(std::move(work));
  return fn(
      stream, [](void* p) { (*static_cast<std::function<void()>*>(p))(); }, held,
      [](void* p) { delete static_cast<std::function<void()>*>(p); });
}

}  // namespace kiln_emu
