// kiln/codegen_cuda/driver.cpp — dlopen-based loader and checked wrappers of the CUDA driver API (libcuda.so.1).
//
// The entry points kiln uses are declared as function-pointer types (CUresult is an int-sized
// enum, 0 = CUDA_SUCCESS; CUdevice an int; CUdeviceptr an unsigned 64-bit address; handles are
// pointers). Where cuda.h maps a name to a versioned symbol (cuMemAlloc -> cuMemAlloc_v2) the
// versioned one is bound. Loading and cuInit happen once per process (a function-local static);
// the handle stays open for the life of the process. Each device's primary context is retained
// on first use and never released, and made current on the calling thread when it is not.
#include "codegen_cuda/driver.h"

#include "base/dl_symbol.h"
#include "base/error.h"

#include <fmt/format.h>

#include <dlfcn.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <vector>

namespace kiln::cuda {

namespace {

using CUresult = int;
using CUdeviceptr = unsigned long long;
using CUcontext = void*;

constexpr int kAttrMultiprocessorCount = 16;      // CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT
constexpr int kAttrComputeCapabilityMajor = 75;  // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR
constexpr int kAttrComputeCapabilityMinor = 76;  // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR
constexpr CUresult kOutOfMemory = 2;              // CUDA_ERROR_OUT_OF_MEMORY
constexpr CUresult kErrorNotReady = 600;          // CUDA_ERROR_NOT_READY
constexpr unsigned kStreamNonBlocking = 1;        // CU_STREAM_NON_BLOCKING
constexpr unsigned kEventDisableTiming = 2;       // CU_EVENT_DISABLE_TIMING
constexpr int kCaptureModeRelaxed = 2;            // CU_STREAM_CAPTURE_MODE_RELAXED

// Names of the errors kiln meets most, for drivers whose cuGetErrorString gives no text (the stub).
const char* error_name(CUresult rc) {
  switch (rc) {
    case 1: return "CUDA_ERROR_INVALID_VALUE";
    case 2: return "CUDA_ERROR_OUT_OF_MEMORY";
    case 3: return "CUDA_ERROR_NOT_INITIALIZED";
    case 34: return "CUDA_ERROR_STUB_LIBRARY";
    case 100: return "CUDA_ERROR_NO_DEVICE";
    case 101: return "CUDA_ERROR_INVALID_DEVICE";
    case 200: return "CUDA_ERROR_INVALID_IMAGE";
    case 201: return "CUDA_ERROR_INVALID_CONTEXT";
    case 209: return "CUDA_ERROR_NO_BINARY_FOR_GPU";
    case 218: return "CUDA_ERROR_INVALID_PTX";
    case 222: return "CUDA_ERROR_UNSUPPORTED_PTX_VERSION";
    case 400: return "CUDA_ERROR_INVALID_HANDLE";
    case 500: return "CUDA_ERROR_NOT_FOUND";
    case 700: return "CUDA_ERROR_ILLEGAL_ADDRESS";
    case 701: return "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES";
    case 702: return "CUDA_ERROR_LAUNCH_TIMEOUT";
    case 719: return "CUDA_ERROR_LAUNCH_FAILED";
    default: return nullptr;
  }
}

struct Driver {
  std::string error;  // empty when usable
  int devices = 0;
  CUresult (*device_get)(int*, int) = nullptr;
  CUresult (*attribute)(int*, int, int) = nullptr;
  CUresult (*error_string)(CUresult, const char**) = nullptr;
  CUresult (*device_name)(char*, int, int) = nullptr;
  CUresult (*primary_retain)(CUcontext*, int) = nullptr;
  CUresult (*ctx_set_current)(CUcontext) = nullptr;
  CUresult (*ctx_get_current)(CUcontext*) = nullptr;
  CUresult (*ctx_synchronize)() = nullptr;
  CUresult (*mem_get_info)(size_t*, size_t*) = nullptr;
  CUresult (*mem_alloc)(CUdeviceptr*, size_t) = nullptr;
  CUresult (*mem_free)(CUdeviceptr) = nullptr;
  CUresult (*htod)(CUdeviceptr, const void*, size_t, StreamHandle) = nullptr;
  CUresult (*dtoh)(void*, CUdeviceptr, size_t, StreamHandle) = nullptr;
  CUresult (*dtod)(CUdeviceptr, CUdeviceptr, size_t, StreamHandle) = nullptr;
  CUresult (*memset8)(CUdeviceptr, unsigned char, size_t, StreamHandle) = nullptr;
  CUresult (*memset16)(CUdeviceptr, unsigned short, size_t, StreamHandle) = nullptr;
  CUresult (*memset32)(CUdeviceptr, unsigned int, size_t, StreamHandle) = nullptr;
  CUresult (*memset2d32)(CUdeviceptr, size_t, unsigned int, size_t, size_t, StreamHandle) = nullptr;
  CUresult (*stream_create)(StreamHandle*, unsigned) = nullptr;
  CUresult (*stream_destroy)(StreamHandle) = nullptr;
  CUresult (*stream_sync)(StreamHandle) = nullptr;
  CUresult (*stream_wait)(StreamHandle, EventHandle, unsigned) = nullptr;
  CUresult (*event_create)(EventHandle*, unsigned) = nullptr;
  CUresult (*event_destroy)(EventHandle) = nullptr;
  CUresult (*event_record)(EventHandle, StreamHandle) = nullptr;
  CUresult (*event_sync)(EventHandle) = nullptr;
  CUresult (*event_query)(EventHandle) = nullptr;
  CUresult (*event_elapsed)(float*, EventHandle, EventHandle) = nullptr;
  CUresult (*module_load)(ModuleHandle*, const void*) = nullptr;
  CUresult (*module_function)(FunctionHandle*, ModuleHandle, const char*) = nullptr;
  CUresult (*launch)(FunctionHandle, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                     StreamHandle, void**, void**) = nullptr;
  // CUDA graphs (optional: graph_error says which entry point is missing).
  CUresult (*begin_capture)(StreamHandle, int) = nullptr;
  CUresult (*end_capture)(StreamHandle, void**) = nullptr;
  CUresult (*graph_instantiate)(GraphExecHandle*, void*, unsigned long long) = nullptr;
  CUresult (*graph_launch)(GraphExecHandle, StreamHandle) = nullptr;
  CUresult (*graph_exec_destroy)(GraphExecHandle) = nullptr;
  CUresult (*graph_destroy)(void*) = nullptr;
  std::string graph_error;
  // Per device, retained once on first use (under mu) and read without a lock afterwards.
  std::unique_ptr<std::atomic<CUcontext>[]> contexts;
  std::mutex mu;

  std::string describe(CUresult rc) const {
    const char* s = nullptr;
    if (error_string) error_string(rc, &s);
    const char* name = error_name(rc);
    if (s && name) return fmt::format("{}: {} ({})", name, s, rc);
    if (s) return fmt::format("{} ({})", s, rc);
    return name ? fmt::format("{} ({})", name, rc) : fmt::format("CUDA driver error {}", rc);
  }
};

Driver* load() {
  auto* d = new Driver();  // never destroyed: kernels and frees may run during static destruction
  void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char* err = dlerror();
    d->error = fmt::format("the NVIDIA driver is not installed (libcuda.so.1 could not be loaded: {})",
                           err ? err : "not found");
    return d;
  }
  CUresult (*init)(unsigned) = nullptr;
  CUresult (*count)(int*) = nullptr;
  const char* so = "libcuda.so.1";
  std::string& e = d->error;
  bind_symbol(lib, so, "cuInit", init, e);
  bind_symbol(lib, so, "cuDeviceGetCount", count, e);
  bind_symbol(lib, so, "cuDeviceGet", d->device_get, e);
  bind_symbol(lib, so, "cuDeviceGetAttribute", d->attribute, e);
  bind_symbol(lib, so, "cuGetErrorString", d->error_string, e);
  bind_symbol(lib, so, "cuDeviceGetName", d->device_name, e);
  bind_symbol(lib, so, "cuDevicePrimaryCtxRetain", d->primary_retain, e);
  bind_symbol(lib, so, "cuCtxSetCurrent", d->ctx_set_current, e);
  bind_symbol(lib, so, "cuCtxGetCurrent", d->ctx_get_current, e);
  bind_symbol(lib, so, "cuCtxSynchronize", d->ctx_synchronize, e);
  bind_symbol(lib, so, "cuMemGetInfo_v2", d->mem_get_info, e);
  bind_symbol(lib, so, "cuMemAlloc_v2", d->mem_alloc, e);
  bind_symbol(lib, so, "cuMemFree_v2", d->mem_free, e);
  bind_symbol(lib, so, "cuMemcpyHtoDAsync_v2", d->htod, e);
  bind_symbol(lib, so, "cuMemcpyDtoHAsync_v2", d->dtoh, e);
  bind_symbol(lib, so, "cuMemcpyDtoDAsync_v2", d->dtod, e);
  bind_symbol(lib, so, "cuMemsetD8Async", d->memset8, e);
  bind_symbol(lib, so, "cuMemsetD16Async", d->memset16, e);
  bind_symbol(lib, so, "cuMemsetD32Async", d->memset32, e);
  bind_symbol(lib, so, "cuMemsetD2D32Async", d->memset2d32, e);
  bind_symbol(lib, so, "cuStreamCreate", d->stream_create, e);
  bind_symbol(lib, so, "cuStreamDestroy_v2", d->stream_destroy, e);
  bind_symbol(lib, so, "cuStreamSynchronize", d->stream_sync, e);
  bind_symbol(lib, so, "cuStreamWaitEvent", d->stream_wait, e);
  bind_symbol(lib, so, "cuEventCreate", d->event_create, e);
  bind_symbol(lib, so, "cuEventDestroy_v2", d->event_destroy, e);
  bind_symbol(lib, so, "cuEventRecord", d->event_record, e);
  bind_symbol(lib, so, "cuEventSynchronize", d->event_sync, e);
  bind_symbol(lib, so, "cuEventQuery", d->event_query, e);
  std::string no_v2;  // drivers before CUDA 12.8 have only the unversioned name
  if (!bind_symbol(lib, so, "cuEventElapsedTime_v2", d->event_elapsed, no_v2))
    bind_symbol(lib, so, "cuEventElapsedTime", d->event_elapsed, e);
  bind_symbol(lib, so, "cuModuleLoadData", d->module_load, e);
  bind_symbol(lib, so, "cuModuleGetFunction", d->module_function, e);
  bind_symbol(lib, so, "cuLaunchKernel", d->launch, e);
  bind_symbol(lib, so, "cuStreamBeginCapture_v2", d->begin_capture, d->graph_error);
  bind_symbol(lib, so, "cuStreamEndCapture", d->end_capture, d->graph_error);
  bind_symbol(lib, so, "cuGraphInstantiateWithFlags", d->graph_instantiate, d->graph_error);
  bind_symbol(lib, so, "cuGraphLaunch", d->graph_launch, d->graph_error);
  bind_symbol(lib, so, "cuGraphExecDestroy", d->graph_exec_destroy, d->graph_error);
  bind_symbol(lib, so, "cuGraphDestroy", d->graph_destroy, d->graph_error);
  if (!e.empty()) return d;
  if (CUresult rc = init(0); rc != 0) {
    e = "cuInit failed: " + d->describe(rc);
    return d;
  }
  if (CUresult rc = count(&d->devices); rc != 0) {
    e = "cuDeviceGetCount failed: " + d->describe(rc);
    d->devices = 0;
    return d;
  }
  if (d->devices == 0) e = "the NVIDIA driver reports no CUDA device";
  d->contexts = std::make_unique<std::atomic<CUcontext>[]>(static_cast<size_t>(d->devices));
  return d;
}

Driver& driver() {
  static Driver* d = load();
  return *d;
}

// The driver, checked usable for `device`.
Driver& checked(int device, const char* what) {
  Driver& d = driver();
  if (!d.error.empty()) fail("cuda", "{} on cuda:{}: CUDA is not available: {}", what, device, d.error);
  if (device < 0 || device >= d.devices)
    fail("cuda", "{}: device index {} is out of range: the driver reports {} device(s)", what, device, d.devices);
  return d;
}

void check(const Driver& d, CUresult rc, const char* call, int device) {
  if (rc != 0) fail("cuda", "{} failed on cuda:{}: {}", call, device, d.describe(rc));
}

CUdeviceptr dptr(const void* p) { return static_cast<CUdeviceptr>(reinterpret_cast<uintptr_t>(p)); }

}  // namespace

// The driver, with `device`'s context current on this thread.
static Driver& on(int device) {
  use_device(device);
  return driver();
}

bool driver_available(std::string* why) {
  const Driver& d = driver();
  if (why) *why = d.error;
  return d.error.empty();
}

int driver_device_count() { return driver().devices; }

int compute_capability(int device) {
  Driver& d = driver();
  if (!d.error.empty()) fail("cuda", "no compute capability for cuda:{}: {}", device, d.error);
  if (device < 0 || device >= d.devices)
    fail("cuda", "device index {} is out of range: the driver reports {} device(s)", device, d.devices);
  int dev = 0, major = 0, minor = 0;
  if (CUresult rc = d.device_get(&dev, device); rc != 0) fail("cuda", "cuDeviceGet({}) failed: {}", device, d.describe(rc));
  if (CUresult rc = d.attribute(&major, kAttrComputeCapabilityMajor, dev); rc != 0)
    fail("cuda", "reading the compute capability of cuda:{} failed: {}", device, d.describe(rc));
  if (CUresult rc = d.attribute(&minor, kAttrComputeCapabilityMinor, dev); rc != 0)
    fail("cuda", "reading the compute capability of cuda:{} failed: {}", device, d.describe(rc));
  return 10 * major + minor;
}

void use_device(int device) {
  Driver& d = checked(device, "use_device");
  std::atomic<CUcontext>& slot = d.contexts[static_cast<size_t>(device)];
  CUcontext ctx = slot.load(std::memory_order_acquire);
  if (!ctx) {
    std::lock_guard lock(d.mu);
    ctx = slot.load(std::memory_order_relaxed);
    if (!ctx) {
      int dev = 0;
      check(d, d.device_get(&dev, device), "cuDeviceGet", device);
      check(d, d.primary_retain(&ctx, dev), "cuDevicePrimaryCtxRetain", device);
      slot.store(ctx, std::memory_order_release);
    }
  }
  // Asked of the driver each time: other code on this thread (a CUDA runtime user) may have
  // made another context current since.
  CUcontext current = nullptr;
  if (d.ctx_get_current(&current) == 0 && current == ctx) return;
  check(d, d.ctx_set_current(ctx), "cuCtxSetCurrent", device);
}

std::string device_name(int device) {
  Driver& d = checked(device, "device_name");
  int dev = 0;
  check(d, d.device_get(&dev, device), "cuDeviceGet", device);
  char buf[256] = {};
  check(d, d.device_name(buf, sizeof buf - 1, dev), "cuDeviceGetName", device);
  return buf;
}

int multiprocessor_count(int device) {
  Driver& d = checked(device, "multiprocessor_count");
  int dev = 0, n = 0;
  check(d, d.device_get(&dev, device), "cuDeviceGet", device);
  check(d, d.attribute(&n, kAttrMultiprocessorCount, dev), "cuDeviceGetAttribute", device);
  return n;
}

void memory_info(int device, size_t* free_bytes, size_t* total_bytes) {
  Driver& d = on(device);
  check(d, d.mem_get_info(free_bytes, total_bytes), "cuMemGetInfo", device);
}

void* try_mem_alloc(int device, size_t bytes) {
  Driver& d = on(device);
  CUdeviceptr p = 0;
  const CUresult rc = d.mem_alloc(&p, bytes == 0 ? 1 : bytes);
  if (rc == kOutOfMemory) return nullptr;
  check(d, rc, "cuMemAlloc", device);
  return reinterpret_cast<void*>(static_cast<uintptr_t>(p));
}

void mem_free(int device, void* p) {
  if (!p) return;
  Driver& d = on(device);
  check(d, d.mem_free(dptr(p)), "cuMemFree", device);
}

void memcpy_htod(int device, void* dst, const void* src, size_t bytes, StreamHandle stream) {
  if (bytes == 0) return;
  Driver& d = on(device);
  check(d, d.htod(dptr(dst), src, bytes, stream), "cuMemcpyHtoDAsync", device);
}

void memcpy_dtoh(int device, void* dst, const void* src, size_t bytes, StreamHandle stream) {
  if (bytes == 0) return;
  Driver& d = on(device);
  check(d, d.dtoh(dst, dptr(src), bytes, stream), "cuMemcpyDtoHAsync", device);
}

void memcpy_dtod(int device, void* dst, const void* src, size_t bytes, StreamHandle stream) {
  if (bytes == 0) return;
  Driver& d = on(device);
  check(d, d.dtod(dptr(dst), dptr(src), bytes, stream), "cuMemcpyDtoDAsync", device);
}

void memset_d8(int device, void* dst, unsigned char value, size_t bytes, StreamHandle stream) {
  if (bytes == 0) return;
  Driver& d = on(device);
  check(d, d.memset8(dptr(dst), value, bytes, stream), "cuMemsetD8Async", device);
}

void memset_d16(int device, void* dst, uint16_t value, size_t count, StreamHandle stream) {
  if (count == 0) return;
  Driver& d = on(device);
  check(d, d.memset16(dptr(dst), value, count, stream), "cuMemsetD16Async", device);
}

void memset_d32(int device, void* dst, uint32_t value, size_t count, StreamHandle stream) {
  if (count == 0) return;
  Driver& d = on(device);
  check(d, d.memset32(dptr(dst), value, count, stream), "cuMemsetD32Async", device);
}

void memset_d2d32(int device, void* dst, size_t pitch, uint32_t value, size_t width, size_t height,
                  StreamHandle stream) {
  if (width == 0 || height == 0) return;
  Driver& d = on(device);
  check(d, d.memset2d32(dptr(dst), pitch, value, width, height, stream), "cuMemsetD2D32Async", device);
}

StreamHandle stream_create(int device) {
  Driver& d = on(device);
  StreamHandle s = nullptr;
  check(d, d.stream_create(&s, kStreamNonBlocking), "cuStreamCreate", device);
  return s;
}

void stream_destroy(int device, StreamHandle s) {
  if (!s) return;
  Driver& d = on(device);
  check(d, d.stream_destroy(s), "cuStreamDestroy", device);
}

void stream_synchronize(int device, StreamHandle s) {
  Driver& d = on(device);
  check(d, d.stream_sync(s), "cuStreamSynchronize", device);
}

void device_synchronize(int device) {
  Driver& d = on(device);
  check(d, d.ctx_synchronize(), "cuCtxSynchronize", device);
}

EventHandle event_create(int device, bool timing) {
  Driver& d = on(device);
  EventHandle e = nullptr;
  check(d, d.event_create(&e, timing ? 0u : kEventDisableTiming), "cuEventCreate", device);
  return e;
}

void event_destroy(int device, EventHandle e) {
  if (!e) return;
  Driver& d = on(device);
  check(d, d.event_destroy(e), "cuEventDestroy", device);
}

void event_record(int device, EventHandle e, StreamHandle s) {
  Driver& d = on(device);
  check(d, d.event_record(e, s), "cuEventRecord", device);
}

void event_synchronize(int device, EventHandle e) {
  Driver& d = on(device);
  check(d, d.event_sync(e), "cuEventSynchronize", device);
}

bool event_query(int device, EventHandle e) {
  Driver& d = on(device);
  const CUresult rc = d.event_query(e);
  if (rc == kErrorNotReady) return false;
  check(d, rc, "cuEventQuery", device);
  return true;
}

void stream_wait_event(int device, StreamHandle s, EventHandle e) {
  Driver& d = on(device);
  check(d, d.stream_wait(s, e, 0), "cuStreamWaitEvent", device);
}

float event_elapsed_ms(int device, EventHandle start, EventHandle end) {
  Driver& d = on(device);
  float ms = 0;
  check(d, d.event_elapsed(&ms, start, end), "cuEventElapsedTime", device);
  return ms;
}

bool graphs_available(std::string* why) {
  if (!driver_available(why)) return false;
  const Driver& d = driver();
  if (why && !d.graph_error.empty()) *why = d.graph_error;
  return d.graph_error.empty();
}

void stream_begin_capture(int device, StreamHandle s) {
  Driver& d = on(device);
  check(d, d.begin_capture(s, kCaptureModeRelaxed), "cuStreamBeginCapture", device);
}

GraphExecHandle stream_end_capture(int device, StreamHandle s) {
  Driver& d = on(device);
  void* graph = nullptr;
  check(d, d.end_capture(s, &graph), "cuStreamEndCapture", device);
  GraphExecHandle exec = nullptr;
  const CUresult rc = d.graph_instantiate(&exec, graph, 0);
  d.graph_destroy(graph);  // the instantiated graph does not need its template
  check(d, rc, "cuGraphInstantiateWithFlags", device);
  return exec;
}

void graph_launch(int device, GraphExecHandle g, StreamHandle s) {
  Driver& d = on(device);
  check(d, d.graph_launch(g, s), "cuGraphLaunch", device);
}

void graph_exec_destroy(int device, GraphExecHandle g) {
  if (!g) return;
  Driver& d = on(device);
  check(d, d.graph_exec_destroy(g), "cuGraphExecDestroy", device);
}

ModuleHandle module_load(int device, const std::string& image) {
  Driver& d = on(device);
  ModuleHandle m = nullptr;
  check(d, d.module_load(&m, image.data()), "cuModuleLoadData", device);
  return m;
}

FunctionHandle module_function(int device, ModuleHandle m, const std::string& name) {
  Driver& d = on(device);
  FunctionHandle f = nullptr;
  if (CUresult rc = d.module_function(&f, m, name.c_str()); rc != 0)
    fail("cuda", "cuModuleGetFunction({}) failed on cuda:{}: {}", name, device, d.describe(rc));
  return f;
}

void launch_kernel(int device, FunctionHandle f, unsigned grid, unsigned block, unsigned shared_bytes,
                   StreamHandle stream, void** args) {
  Driver& d = on(device);
  check(d, d.launch(f, grid, 1, 1, block, 1, 1, shared_bytes, stream, args, nullptr), "cuLaunchKernel", device);
}

}  // namespace kiln::cuda
