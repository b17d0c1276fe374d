// kiln/runtime/cuda/cuda_faults.cpp — per-device fault records and the registry of checked kernels.
#include "runtime/cuda/cuda_faults.h"

#include "base/error.h"
#include "codegen_cuda/driver.h"
#include "ir/kernel_abi.h"

#include <fmt/format.h>

#include <atomic>
#include <cstdlib>
#include <deque>
#include <map>
#include <mutex>

namespace kiln::rt {

namespace {

struct Registry {
  std::mutex mu;
  std::deque<ir::Kernel> kernels;  // id = position; never shrinks (ids stay valid)
  std::map<int, void*> records;    // device -> its record
  std::map<int, bool> pending;     // device -> a checked kernel ran since the last look
};

Registry& registry() {
  static auto* r = new Registry();  // never destroyed: kernels may report during exit
  return *r;
}

// At exit, the records go back to the driver (a sanitizer's leak check counts them otherwise).
void free_fault_records() {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  for (auto& [device, rec] : r.records) {
    if (!rec) continue;
    try {
      cuda::device_synchronize(device);  // a checked kernel still running may write it
      cuda::mem_free(device, rec);
    } catch (...) {  // the driver may be torn down already: the process is ending anyway
    }
    rec = nullptr;
  }
  r.pending.clear();  // a later synchronization (a static destructor's) has no record to read
}

}  // namespace

int64_t register_checked_kernel(const ir::Kernel& k) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  r.kernels.push_back(k);
  return static_cast<int64_t>(r.kernels.size());  // ids start at 1: 0 is "no kernel"
}

void* device_fault_record(int device) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  void*& rec = r.records[device];
  if (!rec) {
    void* p = cuda::try_mem_alloc(device, sizeof(ir::KernelFault));
    if (!p) fail("cuda", "out of memory on cuda:{} allocating the kernels' fault record", device);
    cuda::memset_d8(device, p, 0, sizeof(ir::KernelFault), nullptr);
    cuda::device_synchronize(device);
    static const bool freed_at_exit = std::atexit(free_fault_records) == 0;  // once, with the first record
    (void)freed_at_exit;
    rec = p;
  }
  return rec;
}

void note_checked_launch(int device) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  if (r.records.count(device)) r.pending[device] = true;  // no record: no checked kernel ever ran there
}

void raise_pending_faults(int device) {
  Registry& r = registry();
  void* rec = nullptr;
  {
    std::lock_guard<std::mutex> lock(r.mu);
    auto it = r.pending.find(device);
    if (it == r.pending.end() || !it->second) return;
    it->second = false;
    rec = r.records.at(device);
  }
  if (!rec) return;  // freed at exit
  ir::KernelFault f;
  cuda::memcpy_dtoh(device, &f, rec, sizeof f, nullptr);
  cuda::device_synchronize(device);
  if (f.site == 0) return;
  cuda::memset_d8(device, rec, 0, sizeof f, nullptr);
  cuda::device_synchronize(device);
  ir::Kernel k;
  {
    std::lock_guard<std::mutex> lock(r.mu);
    if (f.kernel < 1 || static_cast<size_t>(f.kernel) > r.kernels.size())
      internal_fail("cuda:{}: a fault names kernel id {}, which was never registered", device, f.kernel);
    k = r.kernels[static_cast<size_t>(f.kernel - 1)];
  }
  const std::string msg = ir::kernel_fault_message(k, f);  // "[op] ..."
  const size_t close = msg.find("] ");
  fail(msg.substr(1, close - 1), "{} (reported by a cuda kernel at the next synchronization)", msg.substr(close + 2));
}

}  // namespace kiln::rt
