// kiln/test/emulated_cuda/fake_nvrtc_builtins.cpp — the emulated NVRTC's builtins library (libnvrtc-builtins.so.13.99).
//
// Empty: kiln loads NVRTC's builtins library from beside libnvrtc (codegen_cuda/nvrtc.cpp) and
// refuses an NVRTC without one; the emulated NVRTC needs none.
extern "C" int kiln_emulated_nvrtc_builtins() { return 0; }
