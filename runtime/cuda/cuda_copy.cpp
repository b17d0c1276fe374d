// kiln/runtime/cuda/cuda_copy.cpp — moving tensors between the host and CUDA devices, and Tensor::copy_ across devices.
//
// Installed into the frontend when the library loads (frontend/dispatch.h's device mover and
// copy kernel). A move copies the tensor's elements in row-major order into fresh contiguous
// storage on the other side: to a device with one host-to-device copy on the device's current
// stream (a non-contiguous source is made contiguous on the host first), to the host after
// making the tensor contiguous on its device (a generated clone kernel) with one
// device-to-host copy, then a wait for the stream. A move between two devices goes through
// the host. copy_ into a contiguous device tensor is one copy of the converted source; into a
// strided device view a generated kernel storing with the view's strides (runtime/eager/eager.h,
// eager_copy_into); only a view that overlaps itself round-trips the bytes it spans through the
// host (correct, not fast, and not atomic with other writers of those bytes).
#include "base/error.h"
#include "runtime/wiring.h"
#include "base/tensor_impl.h"
#include "codegen_cuda/driver.h"
#include "frontend/dispatch.h"
#include "frontend/ops_factory.h"
#include "frontend/tensor.h"
#include "runtime/cuda/cuda_device.h"
#include "runtime/cuda/cuda_faults.h"
#include "runtime/eager/eager.h"
#include "runtime/interpreter/interp_kernels.h"


namespace kiln::rt {

namespace {

Tensor fresh_on(Device device, ScalarType dtype, const std::vector<int64_t>& sizes) {
  return empty(sizes, TensorOptions(dtype).device(device));
}

size_t nbytes_of(const Tensor& t) { return static_cast<size_t>(t.numel()) * element_size(t.dtype()); }

void* stream_of(Device d) { return cuda::current_stream(d.index).handle(); }

void check_device(const Tensor& src, Device to) {
  const Device from = src.device();
  const Device cuda_side = to.is_cuda() ? to : from;
  std::string why;
  if (!cuda::driver_available(&why))
    fail("to", "cannot move a tensor from {} to {}: CUDA is not available: {}", from.str(), to.str(), why);
  if (cuda_side.index < 0 || cuda_side.index >= cuda::driver_device_count())
    fail("to", "cannot move a tensor from {} to {}: device index {} is out of range (this machine has {} CUDA device(s))",
         from.str(), to.str(), cuda_side.index, cuda::driver_device_count());
}

Tensor upload(const Tensor& src, Device to) {
  const Tensor h = src.contiguous();
  Tensor d = fresh_on(to, h.dtype(), h.sizes().vec());
  cuda::memcpy_htod(to.index, d.impl()->data(), h.impl()->data(), nbytes_of(h), stream_of(to));
  // `h` may be a temporary whose memory the cpu allocator hands out again at once: a copy from
  // pageable memory is not promised to have read it all on return (PyTorch waits here too).
  cuda::stream_synchronize(to.index, stream_of(to));
  return d;
}

Tensor download(const Tensor& src) {
  const Device from = src.device();
  const Tensor d = src.contiguous();  // a clone kernel on the device when strided
  Tensor h = fresh_on(Device(), d.dtype(), d.sizes().vec());
  cuda::memcpy_dtoh(from.index, h.impl()->data(), d.impl()->data(), nbytes_of(d), stream_of(from));
  cuda::stream_synchronize(from.index, stream_of(from));
  raise_pending_faults(from.index);  // the data came from a kernel whose check failed: its error, not the data
  return h;
}

Tensor move_to_device(const Tensor& src, Device to) {
  check_device(src, to);
  if (src.device().is_cpu()) return upload(src, to);
  const Tensor host = download(src);
  return to.is_cpu() ? host : upload(host, to);
}

void copy_through_host(const Tensor& dst, const Tensor& src);

// copy_: `src` has dst's sizes (any strides, dtype and device).
void copy_any(const Tensor& dst, const Tensor& src) {
  if (dst.device().is_cpu()) {
    interp::copy_into(dst, src.device().is_cpu() ? src : move_to_device(src, Device()));
    return;
  }
  const Device to = dst.device();
  if (dst.numel() == 0) return;
  if (dst.is_contiguous()) {
    // The converted, materialized source on dst's device (a host source converts on the host).
    Tensor v = src.device() == to ? src.to(dst.dtype()).contiguous() : move_to_device(src.to(dst.dtype()), to);
    cuda::memcpy_dtod(to.index, dst.impl()->data(), v.impl()->data(), nbytes_of(dst), stream_of(to));
    return;
  }
  // A strided view that does not overlap itself: a generated kernel storing with the view's
  // strides, straight into its memory (runtime/eager/eager.h). The source, on the device, in a
  // copy of its own when it shares dst's memory (the kernel must not read what it overwrites).
  // If the kernel cannot be had (no NVRTC, a compiler error), the host path still copies.
  if (!overlaps_itself(dst.sizes(), dst.strides())) {
    try {
      Tensor s = src.device() == to ? src : move_to_device(src, to);
      if (s.impl()->storage().get() == dst.impl()->storage().get()) s = s.clone();
      const Tensor out = eager_copy_into(dst, s);
      if (out.impl() == dst.impl()) return;
      if (out.impl()->storage().get() != dst.impl()->storage().get()) {  // not donated: the values, from a copy
        copy_through_host(dst, out);
        return;
      }
    } catch (const Error&) {
    }
  }
  copy_through_host(dst, src);
}

// The bytes strided view `dst` spans, through the host (other bytes of the storage are neither
// read nor written back): an overlapping view, or a copy the kernel could not make in place.
void copy_through_host(const Tensor& dst, const Tensor& src) {
  const Device to = dst.device();
  const size_t es = element_size(dst.dtype());
  int64_t last = 0;  // element offset of the view's last element, from its first
  for (size_t d = 0; d < dst.sizes().size(); ++d) last += (dst.sizes()[d] - 1) * dst.strides()[d];
  const size_t span = static_cast<size_t>(last + 1) * es;
  char* const base = static_cast<char*>(dst.impl()->data());
  auto host = make_intrusive<StorageImpl>(span, Device());
  cuda::memcpy_dtoh(to.index, host->data(), base, span, stream_of(to));
  cuda::stream_synchronize(to.index, stream_of(to));
  Tensor view(make_intrusive<TensorImpl>(host, dst.dtype(), dst.sizes(), dst.strides(), 0));
  interp::copy_into(view, src.device().is_cpu() ? src : move_to_device(src, Device()));
  cuda::memcpy_htod(to.index, base, host->data(), span, stream_of(to));
  cuda::stream_synchronize(to.index, stream_of(to));  // the host buffer dies here
}

}  // namespace

void wire_cuda_copies() {
  install_device_mover(&move_to_device);
  install_copy_kernel(&copy_any);
}

}  // namespace kiln::rt
