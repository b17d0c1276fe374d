// kiln/runtime/cuda/cuda_device.cpp — CUDA availability, streams (a current one per thread and device) and synchronization.
#include "runtime/cuda/cuda_device.h"

#include "runtime/cuda/cuda_faults.h"

#include "base/error.h"
#include "codegen_cuda/driver.h"

#include <unordered_map>

namespace kiln::cuda {

bool is_available() { return driver_available(); }

std::string unavailable_reason() {
  std::string why;
  driver_available(&why);
  return why;
}

int device_count() { return driver_device_count(); }

std::string get_device_name(int device) { return device_name(device); }

namespace {

thread_local std::unordered_map<int, void*> t_current;

}  // namespace

Stream Stream::create(int device) {
  return Stream(device, stream_create(device));
}

Stream Stream::default_stream(int device) {
  use_device(device);  // checks the index
  return Stream(device, nullptr);
}

void Stream::synchronize() const { stream_synchronize(device_, handle_); }

void Stream::wait_stream(const Stream& other) const {
  if (other.device_ != device_)
    fail("wait_stream", "streams of two devices (cuda:{} and cuda:{}): kiln orders streams of one device",
         device_, other.device_);
  if (other == *this) return;
  EventHandle e = event_create(device_, /*timing=*/false);
  event_record(device_, e, other.handle_);
  stream_wait_event(device_, handle_, e);
  event_destroy(device_, e);  // released once the wait has been satisfied
}

Stream current_stream(int device) {
  auto it = t_current.find(device);
  if (it == t_current.end()) return Stream::default_stream(device);
  return Stream::wrap(device, it->second);
}

void set_current_stream(const Stream& s) {
  use_device(s.device());
  t_current[s.device()] = s.handle();
}

StreamGuard::StreamGuard(const Stream& s) : previous_(current_stream(s.device())) { set_current_stream(s); }
StreamGuard::~StreamGuard() { t_current[previous_.device()] = previous_.handle(); }

void synchronize(int device) {
  std::string why;
  if (!driver_available(&why)) fail("synchronize", "CUDA is not available: {}", why);
  if (device >= 0) {
    device_synchronize(device);
    return rt::raise_pending_faults(device);
  }
  for (int d = 0; d < device_count(); ++d) device_synchronize(d);
  for (int d = 0; d < device_count(); ++d) rt::raise_pending_faults(d);
}

}  // namespace kiln::cuda
