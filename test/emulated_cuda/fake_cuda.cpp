// kiln/test/emulated_cuda/fake_cuda.cpp — an emulated CUDA driver (libcuda.so.1) that runs kernels on the host.
//
// The subset of the driver API kiln binds (codegen_cuda/driver.cpp), on the host: device
// memory is host memory (a CUdeviceptr is the address malloc gave), copies and memsets are
// memcpy and loops, streams and events complete at once (work runs when it is enqueued), and a
// module is a shared object the emulated NVRTC built from CUDA C (fake_nvrtc.cpp).
//
// A launch runs its blocks one after another. A block's threads are fibers on the calling
// thread, a stack each, switched by kiln_emu_switch below (ucontext's swapcontext makes a system
// call per switch, and a 2048-key sort tile switches 67,000 times). They run in turn until each
// finishes or waits at __syncthreads or a warp rendezvous (a shuffle or a vote), and are
// released when every live thread of the block, or every lane of the warp, waits there. Each
// round runs them in a fresh (seeded) random order, as a GPU may, and the blocks run in a
// random order too. A block whose threads wait at different barriers, a warp whose lanes meet
// at different warp operations, or a shuffle from a lane that does not exist fails the launch
// (CUDA_ERROR_LAUNCH_FAILED) with a message saying which threads do what: on a GPU that is
// undefined behaviour. Fresh device memory and each block's dynamic shared memory hold 0xff
// bytes (NaNs), and both end at inaccessible pages, as each fiber's stack starts at one. One device: sm_90 with an H100's 132 SMs (so that plans are what an
// H100 gets), 8 GiB.
//
// Test infrastructure, not part of kiln: a test process finds it first on LD_LIBRARY_PATH
// (test/CMakeLists.txt, the EmulatedGpu tests; docs/cuda.md, "The emulated device").
#include "emu_api.h"

#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <set>
#include <memory>
#include <functional>
#include <mutex>
#include <random>
#include <string>
#include <vector>

namespace {

using CUresult = int;
using CUdeviceptr = unsigned long long;
constexpr CUresult kSuccess = 0, kInvalidValue = 1, kOutOfMemory = 2, kInvalidDevice = 101, kInvalidImage = 200,
                   kInvalidHandle = 400, kIllegalState = 401, kNotFound = 500, kLaunchFailed = 719,
                   kCaptureUnsupported = 900, kCaptureInvalidated = 901;
constexpr size_t kStackBytes = size_t{32} << 10;
constexpr size_t kDeviceBytes = size_t{8} << 30;

struct Module {
  void* lib = nullptr;
};
struct Function {
  void (*entry)(void**) = nullptr;
  void (*param_sizes)(size_t*, size_t*) = nullptr;  // each parameter's size (a capture copies them)
  std::string name;
};
struct Event {
  std::chrono::steady_clock::time_point at;
};

std::mutex g_mu;  // one launch (and one module load) at a time: a block's __shared__ are statics
std::string g_last_error;
size_t g_allocated = 0;

// Device memory: each allocation its own mapping, ending 16 bytes or less before an
// inaccessible page and starting after one, so that a kernel's access past either end faults
// and the launch fails naming the allocation (a memcheck of sorts; run with
// KILN_ALLOCATOR=system so that every tensor is an allocation of its own). Allocations are
// 16-byte aligned, the widest access kiln's kernels make, rather than the driver's 256: the
// nearer the end is to the guard page, the smaller the overrun that goes unseen.
constexpr size_t kPage = 4096, kAlign = 16;
constexpr unsigned kSharedLimit = 48 << 10;
struct Allocation {
  char* base = nullptr;
  size_t mapped = 0;
  char* ptr = nullptr;
  size_t bytes = 0;
};
std::map<uintptr_t, Allocation> g_allocations;  // by ptr; changed under g_mu, which a launch holds
int g_context_token = 0;

// ---- the block scheduler -------------------------------------------------------------------
enum class Wait { None, Block, Warp, Done };

// Saves the callee-saved registers and the stack pointer of the running context into *from and
// resumes the context saved at `to` (x86-64 System V; the vector registers are caller-saved,
// and no kernel changes the floating-point control words, so they are not switched).
extern "C" void kiln_emu_switch(void** from, void* to);
asm(R"(
  .text
  .globl kiln_emu_switch
  .type kiln_emu_switch, @function
kiln_emu_switch:
  pushq %rbp
  pushq %rbx
  pushq %r12
  pushq %r13
  pushq %r14
  pushq %r15
  movq %rsp, (%rdi)
  movq %rsi, %rsp
  popq %r15
  popq %r14
  popq %r13
  popq %r12
  popq %rbx
  popq %rbp
  ret
  .size kiln_emu_switch, .-kiln_emu_switch
)");

struct Fiber {
  void* sp = nullptr;  // the saved stack pointer while switched out
  kiln_emu::Thread t;
  Wait wait = Wait::None;
  unsigned char slot[8] = {};  // a warp rendezvous: this lane's value
  size_t bytes = 0;
  int src = 0;                 // the lane whose value this one receives
  void* out = nullptr;         // where it goes
  int op = 0;                  // the rendezvous: kSyncWarp, kExchange or kBallot (all lanes must agree)
};

constexpr int kSyncWarp = 0, kExchange = 1, kBallot = 2;
const char* const kOpNames[] = {"__syncwarp", "a shuffle", "a vote"};

struct Launch {
  pthread_t thread{};  // the launching thread: its faults, and only its, are a kernel's
  std::string name;
  unsigned block = 0;  // the block running (x)
  void (*entry)(void**) = nullptr;
  void** params = nullptr;
  std::vector<Fiber> fibers;
  void* scheduler = nullptr;  // the scheduler's saved stack pointer
  Fiber* running = nullptr;
  bool trapped = false;
  std::string trap;
};

Launch* g_launch = nullptr;
uint64_t g_launches = 0;  // seeds each launch's thread order
// KILN_EMU_ORDER=in-order runs a block's threads in index order (a failure that needs a shuffled
// order then says so); anything else shuffles.
const bool g_shuffle = [] {
  const char* v = std::getenv("KILN_EMU_ORDER");
  return !(v && std::strcmp(v, "in-order") == 0);
}();
kiln_emu::Thread* g_current = nullptr;

void to_scheduler(Wait w) {
  Fiber* f = g_launch->running;
  f->wait = w;
  kiln_emu_switch(&f->sp, g_launch->scheduler);
}

void api_syncthreads() { to_scheduler(Wait::Block); }

void rendezvous(const void* value, void* out, size_t bytes, int src, int op) {
  Fiber* f = g_launch->running;
  std::memcpy(f->slot, value, bytes);
  f->bytes = bytes, f->src = src, f->out = out, f->op = op;
  to_scheduler(Wait::Warp);
}

void api_syncwarp() {
  int none = 0;
  rendezvous(&none, nullptr, 0, 0, kSyncWarp);
}
void api_exchange(const void* value, void* out, size_t bytes, int src) { rendezvous(value, out, bytes, src, kExchange); }
unsigned api_ballot(int vote) {
  unsigned mask = 0;
  const int v = vote != 0;
  rendezvous(&v, &mask, sizeof v, 0, kBallot);
  return mask;
}
[[noreturn]] void api_trap(const char* message) {
  g_launch->trapped = true;
  g_launch->trap = g_launch->name + ", block " + std::to_string(g_launch->block) + ": " + message;
  to_scheduler(Wait::Done);
  std::abort();  // never resumed
}

const kiln_emu::Api g_api = {&g_current, api_syncthreads, api_syncwarp, api_exchange, api_ballot, api_trap};

// A fiber's first frame: runs the kernel, then leaves for good.
[[noreturn]] void fiber_main() {
  g_launch->entry(g_launch->params);
  to_scheduler(Wait::Done);
  std::abort();  // never resumed
}

// A fresh fiber's stack, as kiln_emu_switch leaves one: six zeroed registers and fiber_main as
// the return address, aligned as a call would have left it.
void* fresh_stack(char* base, size_t bytes) {
  auto* top = reinterpret_cast<uint64_t*>(reinterpret_cast<uintptr_t>(base + bytes) & ~uintptr_t{15});
  *--top = 0;  // fiber_main's own return address: never used
  *--top = reinterpret_cast<uint64_t>(&fiber_main);
  for (int i = 0; i < 6; ++i) *--top = 0;
  return top;
}

// What a faulting address is, if it is next to device memory: "N bytes past the end of a
// B-byte allocation at P" (or before its start).
std::string near_allocation(uintptr_t addr) {
  for (const auto& [p, a] : g_allocations) {
    const auto base = reinterpret_cast<uintptr_t>(a.base), ptr = reinterpret_cast<uintptr_t>(a.ptr);
    if (addr < base || addr >= base + a.mapped) continue;
    char buf[200];
    if (addr >= ptr + a.bytes)
      std::snprintf(buf, sizeof buf, "%zu bytes past the end of a %zu-byte allocation at %#zx",
                    static_cast<size_t>(addr - ptr - a.bytes), a.bytes, static_cast<size_t>(ptr));
    else
      std::snprintf(buf, sizeof buf, "%zu bytes before the start of a %zu-byte allocation at %#zx",
                    static_cast<size_t>(ptr - addr), a.bytes, static_cast<size_t>(ptr));
    return buf;
  }
  return "";
}

struct sigaction g_previous_segv;

// A kernel's access to an inaccessible page ends its launch, as a GPU's memory fault would, with
// what the address was; any other fault is the process's own.
void on_segv(int sig, siginfo_t* info, void* context) {
  Launch* L = g_launch;
  if (L && L->running && pthread_equal(L->thread, pthread_self())) {
    const auto addr = reinterpret_cast<uintptr_t>(info->si_addr);
    const std::string near = near_allocation(addr);
    char buf[400];
    std::snprintf(buf, sizeof buf, "%s, block %u, thread %u: an out-of-bounds access at %#zx%s%s", L->name.c_str(),
                  L->block, L->running->t.thread_idx.x, static_cast<size_t>(addr), near.empty() ? "" : ", ",
                  near.c_str());
    L->trapped = true;
    L->trap = buf;
    L->running->wait = Wait::Done;
    kiln_emu_switch(&L->running->sp, L->scheduler);  // never resumed
  }
  sigaction(SIGSEGV, &g_previous_segv, nullptr);  // not a kernel's: fault again, as if unhandled
  (void)sig, (void)context;
}

void catch_kernel_faults() {
  // The launching thread's signal stack (each launching thread gets one, once).
  thread_local std::vector<char> alt(size_t{256} << 10);
  thread_local bool installed = false;
  if (!installed) {
    stack_t ss = {};
    ss.ss_sp = alt.data();
    ss.ss_size = alt.size();
    sigaltstack(&ss, nullptr);
    installed = true;
  }
  static std::once_flag once;
  std::call_once(once, [] {
    struct sigaction sa = {};
    sa.sa_sigaction = on_segv;
    // Left by a fiber switch, never returned from; on a stack of its own, since a fiber's may
    // be the one that overflowed.
    sa.sa_flags = SA_SIGINFO | SA_NODEFER | SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGSEGV, &sa, &g_previous_segv);
  });
}

const char* wait_name(Wait w) {
  switch (w) {
    case Wait::None: return "running";
    case Wait::Block: return "__syncthreads";
    case Wait::Warp: return "a warp shuffle or vote";
    case Wait::Done: return "exited";
  }
  return "?";
}

// Releases the threads a barrier holds: Released, Stuck (none can be: a deadlock), or Invalid
// (a warp whose lanes meet at different operations, or shuffle from a lane that does not exist:
// undefined on a GPU), with why in L.trap.
enum class Release { Released, Stuck, Invalid };
Release release(Launch& L) {
  const size_t n = L.fibers.size();
  size_t live = 0, at_block = 0;
  for (const Fiber& f : L.fibers) live += f.wait != Wait::Done, at_block += f.wait == Wait::Block;
  if (live > 0 && at_block == live) {
    for (Fiber& f : L.fibers)
      if (f.wait == Wait::Block) f.wait = Wait::None;
    return Release::Released;
  }
  bool released = false;
  for (size_t w0 = 0; w0 < n; w0 += 32) {
    const size_t w1 = std::min(n, w0 + 32);
    bool all = true;
    for (size_t i = w0; i < w1; ++i) all = all && L.fibers[i].wait == Wait::Warp;
    if (!all) continue;
    const Fiber& first = L.fibers[w0];
    for (size_t i = w0; i < w1; ++i) {
      const Fiber& f = L.fibers[i];
      if (f.op != first.op || f.bytes != first.bytes) {
        L.trap = L.name + ", block " + std::to_string(L.block) + ": warp " + std::to_string(w0 / 32) + "'s lanes " +
                 std::to_string(w0) + " and " + std::to_string(i) + " meet at different warp operations (" +
                 kOpNames[first.op] + " of " + std::to_string(first.bytes) + " bytes, " + kOpNames[f.op] + " of " +
                 std::to_string(f.bytes) + " bytes)";
        return Release::Invalid;
      }
      if (f.op == kExchange && (f.src < 0 || w0 + static_cast<size_t>(f.src) >= w1)) {
        L.trap = L.name + ", block " + std::to_string(L.block) + ": thread " + std::to_string(i) +
                 " shuffles from lane " + std::to_string(f.src) + ", which this block's last warp does not have";
        return Release::Invalid;
      }
    }
    unsigned votes = 0;
    for (size_t i = w0; i < w1; ++i)
      if (L.fibers[i].op == kBallot && L.fibers[i].slot[0]) votes |= 1u << (i - w0);
    for (size_t i = w0; i < w1; ++i) {
      Fiber& f = L.fibers[i];
      if (f.op == kBallot) std::memcpy(f.out, &votes, sizeof votes);
      else if (f.op == kExchange) std::memcpy(f.out, L.fibers[w0 + static_cast<size_t>(f.src)].slot, f.bytes);
      f.wait = Wait::None;
    }
    released = true;
  }
  return released ? Release::Released : Release::Stuck;
}

std::string describe_waits(const Launch& L) {
  std::string s;
  for (size_t i = 0; i < L.fibers.size(); ++i) {
    const Wait w = L.fibers[i].wait;
    size_t j = i;
    while (j + 1 < L.fibers.size() && L.fibers[j + 1].wait == w) ++j;
    s += (s.empty() ? "" : "; ") + std::string("threads ") + std::to_string(i) + "-" + std::to_string(j) + ": " +
         wait_name(w);
    i = j;
  }
  return s;
}

CUresult run_launch(const Function& fn, kiln_emu::Dim3 grid, kiln_emu::Dim3 block, unsigned shared, void** params);

// ---- stream capture and graphs ------------------------------------------------------------
// A capturing stream records what it receives (launches with their arguments copied, device
// copies and fills) instead of running it; a graph replays the record. What a graph cannot
// hold fails as the driver fails it: a synchronization of a capturing stream or of the
// context, a copy between host and device, or a wait on an event the capture recorded returns
// CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED and invalidates the capture, whose end then returns
// CUDA_ERROR_STREAM_CAPTURE_INVALIDATED. The legacy stream (nullptr) cannot be captured.
using Op = std::function<CUresult()>;
// A launch's arguments copied by size (each in 16-byte-aligned storage), and pointers to them as
// kernelParams.
struct BoundArgs {
  BoundArgs(const Function& fn, void** p) {
    size_t sizes[kiln_emu::kMaxParams], count = 0;
    fn.param_sizes(sizes, &count);
    for (size_t i = 0; i < count; ++i) {
      storage.emplace_back(new std::max_align_t[(sizes[i] + sizeof(std::max_align_t) - 1) / sizeof(std::max_align_t)]);
      std::memcpy(storage.back().get(), p[i], sizes[i]);
      params.push_back(storage.back().get());
    }
  }
  std::vector<std::unique_ptr<std::max_align_t[]>> storage;
  std::vector<void*> params;
};
struct Capture {
  std::vector<Op> ops;
  bool invalid = false;
};
struct Graph {
  std::vector<Op> ops;
};
std::mutex g_capture_mu;
std::map<void*, Capture> g_captures;   // by stream
std::set<void*> g_captured_events;     // recorded into a capture (not to be waited on while it lasts)

// Records `op` when `stream` is capturing (true), else leaves it to the caller to run.
bool captured(void* stream, Op op) {
  std::lock_guard<std::mutex> lock(g_capture_mu);
  auto it = g_captures.find(stream);
  if (it == g_captures.end()) return false;
  it->second.ops.push_back(std::move(op));
  return true;
}
// Runs `op` now, or records it when `stream` is capturing.
CUresult on_stream(void* stream, const Op& op) { return captured(stream, op) ? kSuccess : op(); }
// n values v from dst.
template <class T> Op fill(CUdeviceptr dst, T v, size_t n) {
  return [=] {
    auto* p = reinterpret_cast<T*>(dst);
    for (size_t i = 0; i < n; ++i) p[i] = v;
    return kSuccess;
  };
}
// A call no capture may see: fails and invalidates the captures it concerns (one stream, or
// every capture for nullptr), when there are any.
CUresult refuse_in_capture(void* stream, bool every, const char* what) {
  std::lock_guard<std::mutex> lock(g_capture_mu);
  bool hit = false;
  for (auto& [st, c] : g_captures)
    if (every || st == stream) {
      c.invalid = true;
      hit = true;
    }
  if (!hit) return kSuccess;
  g_last_error = std::string(what) + " while a stream is capturing";
  return kCaptureUnsupported;
}

// The fibers' stacks and the dynamic shared memory outlive a launch: mapping them, guarding
// every stack and touching their pages afresh at each launch was a sixth of the op database's
// time on this device. The stacks grow when a launch has more threads; each slot keeps its
// inaccessible page below it. A stack is rewritten for every block (fresh_stack), and what a
// kernel left on it is stale data, as a GPU's registers hold. Dynamic shared memory keeps one
// mapping per size in pages, each ending at its inaccessible page.
struct LaunchMemory {
  static constexpr size_t kSlot = kStackBytes + kPage;
  char* stacks = nullptr;
  size_t slots = 0;
  std::map<size_t, char*> shared;  // bytes before the inaccessible page -> the mapping
  LaunchMemory() = default;
  LaunchMemory(const LaunchMemory&) = delete;
  LaunchMemory& operator=(const LaunchMemory&) = delete;
  ~LaunchMemory() {
    if (stacks) munmap(stacks, slots * kSlot);
    for (const auto& [bytes, map] : shared) munmap(map, bytes + kPage);
  }
  // n stacks, each above an inaccessible page (an overflow faults instead of overwriting the
  // next fiber's frames); nullptr when the host is out of memory.
  char* stacks_for(size_t n) {
    if (n <= slots) return stacks;
    void* m = mmap(nullptr, n * kSlot, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (m == MAP_FAILED) return nullptr;
    for (size_t i = 0; i < n; ++i) mprotect(static_cast<char*>(m) + i * kSlot, kPage, PROT_NONE);
    if (stacks) munmap(stacks, slots * kSlot);
    stacks = static_cast<char*>(m);
    slots = n;
    return stacks;
  }
  // `bytes` (a multiple of the page) followed by an inaccessible page; nullptr when out of memory.
  char* shared_for(size_t bytes) {
    if (auto it = shared.find(bytes); it != shared.end()) return it->second;
    void* m = mmap(nullptr, bytes + kPage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) return nullptr;
    mprotect(static_cast<char*>(m) + bytes, kPage, PROT_NONE);
    return shared[bytes] = static_cast<char*>(m);
  }
};

CUresult run_launch(const Function& fn, kiln_emu::Dim3 grid, kiln_emu::Dim3 block, unsigned shared, void** params) {
  if (block.y != 1 || block.z != 1) {
    g_last_error = "the emulated device runs 1-D blocks only";
    return kInvalidValue;
  }
  const size_t n = block.x;
  if (n == 0 || n > 1024 || grid.x == 0 || grid.y == 0 || grid.z == 0) {
    g_last_error = "a launch of " + std::to_string(n) + " threads per block";
    return kInvalidValue;
  }
  if (shared > kSharedLimit) {  // more needs cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES) first
    g_last_error = fn.name + ": " + std::to_string(shared) + " bytes of dynamic shared memory, more than the " +
                   std::to_string(kSharedLimit) + " a launch gets without opting in";
    return kInvalidValue;
  }
  catch_kernel_faults();
  Launch L;
  L.name = fn.name;
  L.entry = fn.entry;
  L.params = params;
  L.fibers.resize(n);
  thread_local LaunchMemory memory;
  const size_t slot = LaunchMemory::kSlot;
  char* stacks = memory.stacks_for(n);
  // Dynamic shared memory ends at an inaccessible page, and holds 0xff bytes (NaNs) when each
  // block starts: a kernel reading what it never wrote sees garbage, as on a GPU.
  const size_t shared_pages = (shared + kPage - 1) / kPage * kPage;
  char* shared_map = memory.shared_for(shared_pages);
  if (!stacks || !shared_map) return kOutOfMemory;
  unsigned char* dynamic = reinterpret_cast<unsigned char*>(shared_map) + shared_pages - (shared + kAlign - 1) / kAlign * kAlign;
  L.thread = pthread_self();
  g_launch = &L;
  CUresult rc = kSuccess;
  std::vector<size_t> order;
  std::mt19937_64 rng(++g_launches);
  // Blocks in a seeded random order too: no block may depend on another's writes.
  std::vector<unsigned> blocks(grid.x);
  for (unsigned b = 0; b < grid.x; ++b) blocks[b] = b;
  if (g_shuffle)
    for (size_t i = blocks.size(); i > 1; --i) std::swap(blocks[i - 1], blocks[std::uniform_int_distribution<size_t>(0, i - 1)(rng)]);
  for (unsigned bz = 0; bz < grid.z && rc == kSuccess; ++bz)
    for (unsigned by = 0; by < grid.y && rc == kSuccess; ++by)
      for (size_t bi = 0; bi < blocks.size() && rc == kSuccess; ++bi) {
        const unsigned bx = blocks[bi];
        L.block = bx;
        std::memset(dynamic, 0xff, shared);
        for (size_t i = 0; i < n; ++i) {
          Fiber& f = L.fibers[i];
          f.t.thread_idx = {static_cast<unsigned>(i), 0, 0};
          f.t.block_idx = {bx, by, bz};
          f.t.block_dim = block;
          f.t.grid_dim = grid;
          f.t.dynamic_shared = dynamic;
          f.wait = Wait::None;
          f.sp = fresh_stack(stacks + i * slot + kPage, kStackBytes);
        }
        for (;;) {
          // Between two barriers a GPU may run a block's threads in any order and interleaving:
          // each round runs them in a fresh random order (seeded, so a failure reproduces), so
          // that a read of another thread's shared-memory write that lacks its barrier sees a
          // stale value on some runs instead of always the written one.
          order.resize(n);
          for (size_t i = 0; i < n; ++i) order[i] = i;
          if (g_shuffle)
            for (size_t i = n; i > 1; --i) std::swap(order[i - 1], order[std::uniform_int_distribution<size_t>(0, i - 1)(rng)]);
          for (size_t i : order) {
            Fiber& f = L.fibers[i];
            if (f.wait != Wait::None) continue;
            L.running = &f;
            g_current = &f.t;
            kiln_emu_switch(&L.scheduler, f.sp);
            L.running = nullptr;
            if (L.trapped) break;
          }
          if (L.trapped) {
            g_last_error = L.trap;
            rc = kLaunchFailed;
            break;
          }
          bool done = true;
          for (const Fiber& f : L.fibers) done = done && f.wait == Wait::Done;
          if (done) break;
          const Release r = release(L);
          if (r == Release::Invalid) {
            g_last_error = L.trap;
            rc = kLaunchFailed;
            break;
          }
          if (r == Release::Stuck) {
            g_last_error = fn.name + ", block " + std::to_string(bx) + " of " + std::to_string(grid.x) +
                           ": its threads wait at different barriers (" + describe_waits(L) + ")";
            rc = kLaunchFailed;
            break;
          }
        }
      }
  g_launch = nullptr;
  g_current = nullptr;
  if (rc != kSuccess) std::fprintf(stderr, "[emulated cuda] %s\n", g_last_error.c_str());
  return rc;
}

// ---- modules: shared objects, or their bytes in base64 as "PTX" ----------------------------
std::string unbase64(const char* s) {
  auto val = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    return c == '+' ? 62 : c == '/' ? 63 : -1;
  };
  std::string out;
  unsigned acc = 0;
  int bits = 0;
  for (; *s; ++s) {
    const int v = val(*s);
    if (v < 0) continue;
    acc = acc << 6 | static_cast<unsigned>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((acc >> bits) & 0xff));
    }
  }
  return out;
}

constexpr const char* kPtxPrefix = "// kiln emulated module, base64:";

CUresult load_module(Module** out, const void* image) {
  const char* p = static_cast<const char*>(image);
  std::string bytes;
  if (std::memcmp(p, "\x7f" "ELF", 4) == 0) {
    // An ELF image's size is in its header: the section headers end it.
    uint64_t shoff = 0;
    uint16_t shentsize = 0, shnum = 0;
    std::memcpy(&shoff, p + 0x28, 8);
    std::memcpy(&shentsize, p + 0x3a, 2);
    std::memcpy(&shnum, p + 0x3c, 2);
    if (static_cast<unsigned char>(p[18]) != 62) {  // e_machine: not x86-64 (a real cubin)
      g_last_error = "a device image the emulated device cannot run (not built by its NVRTC)";
      return kInvalidImage;
    }
    bytes.assign(p, shoff + static_cast<uint64_t>(shentsize) * shnum);
  } else if (const char* at = std::strstr(p, kPtxPrefix)) {
    bytes = unbase64(at + std::strlen(kPtxPrefix));
  } else {
    g_last_error = "an image the emulated device cannot run";
    return kInvalidImage;
  }
  char path[] = "/tmp/kiln_emu_module_XXXXXX";
  const int fd = mkstemp(path);
  if (fd < 0) return kOutOfMemory;
  const bool ok = write(fd, bytes.data(), bytes.size()) == static_cast<ssize_t>(bytes.size());
  close(fd);
  void* lib = ok ? dlopen(path, RTLD_NOW | RTLD_LOCAL) : nullptr;
  const char* err = lib ? nullptr : dlerror();
  unlink(path);
  if (!lib) {
    g_last_error = std::string("the module does not load: ") + (err ? err : "write failed");
    return kInvalidImage;
  }
  auto bind = reinterpret_cast<void (*)(const kiln_emu::Api*)>(dlsym(lib, "kiln_emu_bind"));
  if (!bind) {
    g_last_error = "the module has no kiln_emu_bind (not built by the emulated NVRTC)";
    return kInvalidImage;
  }
  bind(&g_api);
  *out = new Module{lib};
  return kSuccess;
}

}  // namespace

extern "C" {

CUresult cuInit(unsigned) { return kSuccess; }
CUresult cuDeviceGetCount(int* n) {
  *n = 1;
  return kSuccess;
}
CUresult cuDeviceGet(int* d, int ordinal) {
  if (ordinal != 0) return kInvalidDevice;
  *d = 0;
  return kSuccess;
}
CUresult cuDeviceGetAttribute(int* v, int attr, int dev) {
  if (dev != 0) return kInvalidDevice;
  switch (attr) {
    case 16: *v = 132; return kSuccess;  // multiprocessors: an H100 SXM's, so plans are an H100's
    case 75: *v = 9; return kSuccess;   // compute capability 9.0
    case 76: *v = 0; return kSuccess;
    case 1: *v = 1024; return kSuccess;  // max threads per block
    case 8: *v = 48 << 10; return kSuccess;  // shared memory per block
    case 10: *v = 32; return kSuccess;  // warp size
    default: *v = 0; return kSuccess;
  }
}
CUresult cuGetErrorString(CUresult rc, const char** s) {
  static thread_local std::string text;
  text = rc == kSuccess ? "no error" : g_last_error.empty() ? "emulated device error" : g_last_error;
  *s = text.c_str();
  return kSuccess;
}
CUresult cuDeviceGetName(char* name, int len, int) {
  std::snprintf(name, static_cast<size_t>(len), "kiln emulated device (host fibers)");
  return kSuccess;
}
CUresult cuDevicePrimaryCtxRetain(void** ctx, int) {
  *ctx = &g_context_token;
  return kSuccess;
}
CUresult cuCtxSetCurrent(void*) { return kSuccess; }
CUresult cuCtxGetCurrent(void** ctx) {
  *ctx = &g_context_token;
  return kSuccess;
}
CUresult cuCtxSynchronize() { return refuse_in_capture(nullptr, true, "cuCtxSynchronize"); }
CUresult cuMemGetInfo_v2(size_t* free_bytes, size_t* total) {
  std::lock_guard<std::mutex> lock(g_mu);
  *total = kDeviceBytes;
  *free_bytes = g_allocated < kDeviceBytes ? kDeviceBytes - g_allocated : 0;
  return kSuccess;
}
CUresult cuMemAlloc_v2(CUdeviceptr* p, size_t bytes) {
  std::lock_guard<std::mutex> lock(g_mu);
  if (bytes == 0) return kInvalidValue;
  if (bytes > kDeviceBytes - g_allocated) return kOutOfMemory;
  const size_t span = (bytes + kAlign - 1) / kAlign * kAlign, pages = (span + kPage - 1) / kPage * kPage;
  void* base = mmap(nullptr, pages + 2 * kPage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (base == MAP_FAILED) return kOutOfMemory;
  char* b = static_cast<char*>(base);
  mprotect(b, kPage, PROT_NONE);
  mprotect(b + kPage + pages, kPage, PROT_NONE);
  Allocation a{b, pages + 2 * kPage, b + kPage + pages - span, bytes};
  std::memset(a.ptr, 0xff, bytes);  // as cuMemAlloc promises nothing: what is read unwritten is NaN
  g_allocations[reinterpret_cast<uintptr_t>(a.ptr)] = a;
  g_allocated += bytes;
  *p = reinterpret_cast<CUdeviceptr>(a.ptr);
  return kSuccess;
}
CUresult cuMemFree_v2(CUdeviceptr p) {
  std::lock_guard<std::mutex> lock(g_mu);
  if (p == 0) return kSuccess;
  auto it = g_allocations.find(p);
  if (it == g_allocations.end()) return kInvalidValue;
  g_allocated -= it->second.bytes;
  munmap(it->second.base, it->second.mapped);
  g_allocations.erase(it);
  return kSuccess;
}
CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dst, const void* src, size_t n, void* stream) {
  if (CUresult rc = refuse_in_capture(stream, false, "a copy from host memory"); rc != kSuccess) return rc;
  if (n) std::memmove(reinterpret_cast<void*>(dst), src, n);
  return kSuccess;
}
CUresult cuMemcpyDtoHAsync_v2(void* dst, CUdeviceptr src, size_t n, void* stream) {
  if (CUresult rc = refuse_in_capture(stream, false, "a copy to host memory"); rc != kSuccess) return rc;
  if (n) std::memmove(dst, reinterpret_cast<const void*>(src), n);
  return kSuccess;
}
CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr dst, CUdeviceptr src, size_t n, void* stream) {
  return on_stream(stream, [=] {
    if (n) std::memmove(reinterpret_cast<void*>(dst), reinterpret_cast<const void*>(src), n);
    return kSuccess;
  });
}
CUresult cuMemsetD8Async(CUdeviceptr dst, unsigned char v, size_t n, void* stream) {
  return on_stream(stream, fill(dst, v, n));
}
CUresult cuMemsetD16Async(CUdeviceptr dst, unsigned short v, size_t n, void* stream) {
  return on_stream(stream, fill(dst, v, n));
}
CUresult cuMemsetD32Async(CUdeviceptr dst, unsigned int v, size_t n, void* stream) {
  return on_stream(stream, fill(dst, v, n));
}
CUresult cuMemsetD2D32Async(CUdeviceptr dst, size_t pitch, unsigned int v, size_t width, size_t height, void* stream) {
  return on_stream(stream, [=] {
    for (size_t r = 0; r < height; ++r) fill(dst + r * pitch, v, width)();
    return kSuccess;
  });
}
CUresult cuStreamCreate(void** s, unsigned) {
  *s = new int(0);
  return kSuccess;
}
CUresult cuStreamDestroy_v2(void* s) {
  delete static_cast<int*>(s);
  return kSuccess;
}
CUresult cuStreamSynchronize(void* stream) { return refuse_in_capture(stream, false, "cuStreamSynchronize"); }
CUresult cuStreamWaitEvent(void*, void*, unsigned) { return kSuccess; }
CUresult cuEventCreate(void** e, unsigned) {
  *e = new Event{std::chrono::steady_clock::now()};
  return kSuccess;
}
CUresult cuEventDestroy_v2(void* e) {
  delete static_cast<Event*>(e);
  return kSuccess;
}
CUresult cuEventRecord(void* e, void* stream) {
  Op op = [e] {
    static_cast<Event*>(e)->at = std::chrono::steady_clock::now();
    return kSuccess;
  };
  if (!captured(stream, op)) return op();
  std::lock_guard<std::mutex> lock(g_capture_mu);
  g_captured_events.insert(e);
  return kSuccess;
}
// Waiting on an event a live capture recorded is refused (it is a node of a graph, not work).
CUresult event_wait(void* e, const char* what) {
  {
    std::lock_guard<std::mutex> lock(g_capture_mu);
    if (!g_captured_events.count(e)) return kSuccess;
  }
  return refuse_in_capture(nullptr, true, what);
}
CUresult cuEventSynchronize(void* e) { return event_wait(e, "cuEventSynchronize on a captured event"); }
CUresult cuEventQuery(void* e) { return event_wait(e, "cuEventQuery on a captured event"); }
CUresult cuEventElapsedTime_v2(float* ms, void* a, void* b) {
  *ms = std::chrono::duration<float, std::milli>(static_cast<Event*>(b)->at - static_cast<Event*>(a)->at).count();
  return kSuccess;
}
CUresult cuEventElapsedTime(float* ms, void* a, void* b) { return cuEventElapsedTime_v2(ms, a, b); }
CUresult cuModuleLoadData(void** m, const void* image) {
  std::lock_guard<std::mutex> lock(g_mu);
  Module* mod = nullptr;
  const CUresult rc = load_module(&mod, image);
  if (rc == kSuccess) *m = mod;
  return rc;
}
CUresult cuModuleGetFunction(void** f, void* m, const char* name) {
  auto* mod = static_cast<Module*>(m);
  if (!mod) return kInvalidHandle;
  void* sym = dlsym(mod->lib, ("kiln_emu_entry_" + std::string(name)).c_str());
  void* sizes = dlsym(mod->lib, ("kiln_emu_sizes_" + std::string(name)).c_str());
  if (!sym || !sizes) return kNotFound;
  *f = new Function{reinterpret_cast<void (*)(void**)>(sym), reinterpret_cast<void (*)(size_t*, size_t*)>(sizes), name};
  return kSuccess;
}
CUresult cuLaunchKernel(void* f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                        unsigned shared, void* stream, void** params, void** extra) {
  if (!f || extra) return kInvalidValue;
  const Function& fn = *static_cast<Function*>(f);
  {
    std::lock_guard<std::mutex> lock(g_capture_mu);
    if (g_captures.count(stream)) {  // the arguments are copied now, as the driver copies them
      size_t sizes[kiln_emu::kMaxParams], count = 0;
      fn.param_sizes(sizes, &count);
      if (count > kiln_emu::kMaxParams) {
        g_last_error = fn.name + ": more parameters than the emulated capture copies";
        return kInvalidValue;
      }
      auto bound = std::make_shared<BoundArgs>(fn, params);
      g_captures[stream].ops.push_back([fn, bound, gx, gy, gz, bx, by, bz, shared] {
        std::lock_guard<std::mutex> launch_lock(g_mu);
        return run_launch(fn, {gx, gy, gz}, {bx, by, bz}, shared, bound->params.data());
      });
      return kSuccess;
    }
  }
  std::lock_guard<std::mutex> lock(g_mu);
  return run_launch(fn, {gx, gy, gz}, {bx, by, bz}, shared, params);
}
// A library stand-in's work on `stream` (emu_stream_work.h): run now, or recorded by a capture.
int kiln_emu_stream_work(void* stream, void (*run)(void*), void* ctx, void (*drop)(void*)) {
  std::shared_ptr<void> owned(ctx, drop);
  return on_stream(stream, [run, owned] {
    run(owned.get());
    return kSuccess;
  });
}
CUresult cuStreamBeginCapture_v2(void* stream, int) {
  if (!stream) {
    g_last_error = "the legacy stream cannot be captured";
    return kCaptureUnsupported;
  }
  std::lock_guard<std::mutex> lock(g_capture_mu);
  if (!g_captures.try_emplace(stream).second) return kIllegalState;
  return kSuccess;
}
CUresult cuStreamEndCapture(void* stream, void** graph) {
  std::lock_guard<std::mutex> lock(g_capture_mu);
  auto it = g_captures.find(stream);
  if (it == g_captures.end()) return kIllegalState;
  Capture c = std::move(it->second);
  g_captures.erase(it);
  if (g_captures.empty()) g_captured_events.clear();
  *graph = nullptr;
  if (c.invalid) return kCaptureInvalidated;
  *graph = new Graph{std::move(c.ops)};
  return kSuccess;
}
CUresult cuGraphInstantiateWithFlags(void** exec, void* graph, unsigned long long) {
  if (!graph) return kInvalidValue;
  *exec = new Graph(*static_cast<Graph*>(graph));
  return kSuccess;
}
CUresult cuGraphLaunch(void* exec, void* stream) {
  if (!exec) return kInvalidValue;
  const Graph g = *static_cast<Graph*>(exec);
  return on_stream(stream, [g] {
    for (const Op& o : g.ops)
      if (CUresult rc = o(); rc != kSuccess) return rc;
    return kSuccess;
  });
}
CUresult cuGraphExecDestroy(void* exec) {
  delete static_cast<Graph*>(exec);
  return kSuccess;
}
CUresult cuGraphDestroy(void* graph) {
  delete static_cast<Graph*>(graph);
  return kSuccess;
}

}  // extern "C"
