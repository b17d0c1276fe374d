// kiln/codegen_cuda/driver.h — the CUDA driver API, loaded at run time with dlopen.
//
// kiln builds and runs without an NVIDIA driver: libcuda.so.1 is opened on first use and
// cuInit(0) called once. A machine without the driver, or whose driver finds no device, is
// not an error here: available() is false and says why, so callers fail with a clear message
// (a cuda tensor requested) or skip (GPU tests). No CUDA header is needed to include this.
//
// Everything past availability is a thin, checked wrapper of one driver call: the device's
// primary context is made current on the calling thread first (use_device), and a failing
// call throws kiln::Error "[cuda] <call> failed on cuda:N: <driver's name for the error>".
// Device memory is addressed as void* (a CUdeviceptr in the process's unified address space);
// a stream is an opaque handle, nullptr being the device's legacy default stream.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace kiln::cuda {

// Whether the driver loaded, initialized and reports at least one device; if not and `why`
// is given, the reason (which library could not be loaded, or the driver's error).
bool driver_available(std::string* why = nullptr);

// Devices the driver reports (0 without a driver).
int driver_device_count();

// The compute capability of `device` as 10*major+minor (90 for H100); throws kiln::Error for
// a device index out of range or without a driver.
int compute_capability(int device);

using StreamHandle = void*;  // CUstream
using ModuleHandle = void*;  // CUmodule
using FunctionHandle = void*;  // CUfunction
using EventHandle = void*;   // CUevent

// Checks `device` (driver present, index in range) and makes its primary context current on
// this thread; cheap when it already is.
void use_device(int device);

std::string device_name(int device);
int multiprocessor_count(int device);
// Free and total bytes of device memory (cuMemGetInfo).
void memory_info(int device, size_t* free_bytes, size_t* total_bytes);

// cuMemAlloc: nullptr when the device is out of memory (other failures throw).
void* try_mem_alloc(int device, size_t bytes);
void mem_free(int device, void* p);

// Copies on `stream`, asynchronous with respect to the host where the driver allows (a copy
// to or from pageable host memory returns once the host side is done with it). Host memory
// read by dtoh must not be reused before the stream is synchronized.
void memcpy_htod(int device, void* dst, const void* src, size_t bytes, StreamHandle stream);
void memcpy_dtoh(int device, void* dst, const void* src, size_t bytes, StreamHandle stream);
void memcpy_dtod(int device, void* dst, const void* src, size_t bytes, StreamHandle stream);
void memset_d8(int device, void* dst, unsigned char value, size_t bytes, StreamHandle stream);
// `count` 16-bit or 32-bit values (dst aligned to their size).
void memset_d16(int device, void* dst, uint16_t value, size_t count, StreamHandle stream);
void memset_d32(int device, void* dst, uint32_t value, size_t count, StreamHandle stream);
// `height` rows of `width` 32-bit values, rows `pitch` bytes apart (an 8-byte element's halves:
// width 1, pitch 8).
void memset_d2d32(int device, void* dst, size_t pitch, uint32_t value, size_t width, size_t height,
                  StreamHandle stream);

StreamHandle stream_create(int device);  // a non-blocking stream
void stream_destroy(int device, StreamHandle s);
void stream_synchronize(int device, StreamHandle s);
void device_synchronize(int device);  // every stream of the device's context

EventHandle event_create(int device, bool timing);
void event_destroy(int device, EventHandle e);
void event_record(int device, EventHandle e, StreamHandle s);
void event_synchronize(int device, EventHandle e);
// Whether the work the event marks has completed (cuEventQuery), without waiting.
bool event_query(int device, EventHandle e);
void stream_wait_event(int device, StreamHandle s, EventHandle e);
float event_elapsed_ms(int device, EventHandle start, EventHandle end);

// CUDA graphs: the work a stream receives between begin_capture and end_capture is recorded, not
// run, and replayed as one launch (cuGraphLaunch), which costs the host one call however many
// kernels the graph holds. Capture is in the driver's relaxed mode (other threads are not held
// back); an operation a graph cannot hold (a synchronization, a copy to pageable host memory)
// invalidates the capture, and end_capture throws with the driver's reason.
using GraphExecHandle = void*;  // CUgraphExec
// Whether the driver has the graph entry points (CUDA 11.4 and later); if not and `why` is
// given, which is missing.
bool graphs_available(std::string* why = nullptr);
void stream_begin_capture(int device, StreamHandle s);
// Ends the capture on `s` and instantiates what it recorded.
GraphExecHandle stream_end_capture(int device, StreamHandle s);
void graph_launch(int device, GraphExecHandle g, StreamHandle s);
void graph_exec_destroy(int device, GraphExecHandle g);

// Loads a cubin or PTX image (the driver JIT-compiles PTX) into the device's context.
ModuleHandle module_load(int device, const std::string& image);
FunctionHandle module_function(int device, ModuleHandle m, const std::string& name);
// cuLaunchKernel with a 1-D grid and block; `args` points at each parameter's value.
void launch_kernel(int device, FunctionHandle f, unsigned grid, unsigned block, unsigned shared_bytes,
                   StreamHandle stream, void** args);

}  // namespace kiln::cuda
