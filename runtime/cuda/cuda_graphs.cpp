// kiln/runtime/cuda/cuda_graphs.cpp — a program's warm calls as CUDA graph replays (cuda_graphs.h).
#include "runtime/cuda/cuda_graphs.h"

#include "base/error.h"
#include "base/tensor_impl.h"
#include "codegen_cuda/driver.h"
#include "frontend/ops_factory.h"
#include "frontend/ops_random.h"
#include "frontend/tensor_options.h"
#include "ir/op.h"
#include "runtime/cuda/capture_pool.h"
#include "runtime/cuda/cuda_faults.h"
#include "runtime/config.h"
#include "runtime/log.h"

#include <fmt/format.h>

#include <atomic>
#include <optional>
#include <utility>
#include <set>

namespace kiln::rt {

namespace {

std::atomic<int64_t> g_captures{0}, g_replays{0};

// The graph being recorded on this thread whose kernels read their draws from the device.
struct RngCapture {
  const KernelLauncher* launcher = nullptr;
  void* slot = nullptr;
};
thread_local RngCapture t_rng;

class RngCaptureScope {
 public:
  RngCaptureScope(const KernelLauncher* launcher, void* slot) : saved_(t_rng) { t_rng = {launcher, slot}; }
  ~RngCaptureScope() { t_rng = saved_; }
  RngCaptureScope(const RngCaptureScope&) = delete;
  RngCaptureScope& operator=(const RngCaptureScope&) = delete;

 private:
  RngCapture saved_;
};

// The graph input a buffer is, or views (-1: none).
int input_of(const ir::ExecPlan& plan, int b) {
  while (b >= 0) {
    const ir::PlanBuffer& pb = plan.buffers.at(static_cast<size_t>(b));
    if (pb.role == ir::BufferRole::Input) return pb.input_index;
    if (pb.role != ir::BufferRole::View) return -1;
    b = pb.base;
  }
  return -1;
}

struct InputKey {
  ScalarType dtype;
  std::vector<int64_t> sizes, strides;
};

// Whether the inputs have the signature `key` (compared in place: this runs on every call).
bool has_key(const std::vector<Tensor>& inputs, const std::vector<InputKey>& key) {
  if (inputs.size() != key.size()) return false;
  for (size_t i = 0; i < key.size(); ++i) {
    const Tensor& t = inputs[i];
    if (t.dtype() != key[i].dtype || t.sizes() != IntArrayRef(key[i].sizes) || t.strides() != IntArrayRef(key[i].strides))
      return false;
  }
  return true;
}

std::vector<InputKey> key_of(const std::vector<Tensor>& inputs) {
  std::vector<InputKey> k;
  for (const Tensor& t : inputs) k.push_back({t.dtype(), t.sizes().vec(), t.strides().vec()});
  return k;
}

// dst (a fresh or graph-owned tensor of src's sizes and strides, on its device) = src: the bytes
// the layout spans, copied whole (an expanded input, whose elements share memory, included).
void copy_same_layout(const Tensor& dst, const Tensor& src, int device, cuda::StreamHandle stream) {
  if (src.numel() == 0) return;
  int64_t last = 0;  // the offset of the last element
  for (int64_t d = 0; d < src.dim(); ++d) {
    if (src.stride(d) < 0) {  // (no kiln view has one; copied element by element if one appears)
      Tensor(dst).copy_(src);
      return;
    }
    last += (src.size(d) - 1) * src.stride(d);
  }
  cuda::memcpy_dtod(device, dst.impl()->data(), src.impl()->data(), static_cast<size_t>(last + 1) * element_size(src.dtype()),
                    stream);
}

// The buffer a plan buffer's memory belongs to (itself, or the base a chain of views ends at).
int root_of(const ir::ExecPlan& plan, int b) {
  while (plan.buffers.at(static_cast<size_t>(b)).role == ir::BufferRole::View) b = plan.buffers.at(static_cast<size_t>(b)).base;
  return b;
}

}  // namespace

bool plan_graphable(const ir::ExecPlan& plan, std::string* why) {
  auto no = [&](std::string reason) {
    if (why) *why = std::move(reason);
    return false;
  };
  for (const ir::PlanStep& st : plan.steps)  // a kernel's draws move with each replay; a library step's would not
    if (st.kind != ir::StepKind::Kernel && ir::op_info(st.op).family == ir::OpFamily::Random)
      return no(fmt::format("a step other than a kernel draws random numbers ({}): a replay would draw the same ones",
                            ir::op_name(st.op)));
  std::set<int> outs;
  for (const ir::PlanOutput& o : plan.outputs) {
    if (input_of(plan, o.buffer) >= 0) continue;  // a view of the caller's input, made at each call
    if (!outs.insert(root_of(plan, o.buffer)).second) return no("two outputs share memory");
    if (plan.buffers.at(static_cast<size_t>(o.buffer)).donor_input >= 0) return no("an output may take an input's memory");
  }
  for (const ir::PlanStep& st : plan.steps)
    for (int b : st.written())
      if (input_of(plan, b) >= 0) return no("a step writes an input");
  return true;
}

// What the program's graphs share: the pool of the memory their captures kept (capture_pool.h),
// and the event recorded after each replay of any of them. Every replay waits for the one
// before it, whatever its signature and stream, so a kept block is free for any graph.
struct GraphedProgram::Shared {
  explicit Shared(int d) : device(d), pool(d) {}
  // Waits for the queued replays (the event after the last one, not the device: another thread
  // may be capturing, and a device-wide synchronization would spoil its capture); false, with a
  // warning, when that fails: then nothing the graphs use may ever be freed.
  bool wait() noexcept {
    if (!replayed || stuck) return !stuck;
    try {
      cuda::event_synchronize(device, done);
      return true;
    } catch (const std::exception& e) {
      warn(fmt::format("cuda:{}: a CUDA graph's replays could not be waited for (their memory is kept): {}", device, e.what()));
      stuck = true;
      return false;
    }
  }
  int device;
  CapturePool pool;
  // The outputs of graphs dropped for a recapture: a capture may have placed one in a block that
  // another graph uses between its kernels, so it is held until the program goes.
  std::vector<Tensor> retired;
  cuda::EventHandle done = nullptr;  // recorded after each replay
  bool replayed = false;
  bool stuck = false;  // the replays could not be waited for: the graphs' memory is never freed
};

struct GraphedProgram::Entry {
  enum class State { Warm, Graphed, Plain };
  explicit Entry(int d) : device(d) {}
  // Destroys the graph once its replays are done; false when they could not be waited for (its
  // memory must then outlive it).
  bool drop_graph(Shared& shared) noexcept {
    if (!exec) return true;
    const bool waited = shared.wait();
    if (waited) {
      try {
        cuda::graph_exec_destroy(device, exec);
      } catch (const std::exception& e) {
        warn(fmt::format("cuda:{}: a CUDA graph could not be released: {}", device, e.what()));
      }
    }
    exec = nullptr;
    return waited;
  }
  // A graph dropped unwaited: its buffers are leaked, not handed out (a reference never dropped).
  void leak() {
    for (Tensor& t : static_inputs) new Tensor(std::move(t));
    for (Tensor& t : static_outputs) new Tensor(std::move(t));
    new Tensor(std::move(rng));
  }
  int device;
  std::vector<InputKey> key;
  bool tf32 = false;  // config().allow_tf32 when recorded: cuBLASLt's choice is part of the graph
  std::vector<const void*> seen;  // each input's address at the last plain call
  State state = State::Warm;
  int recaptures = 0;
  cuda::GraphExecHandle exec = nullptr;
  std::vector<Tensor> static_inputs;  // the graph's copy of each input (undefined: read in place)
  std::vector<const void*> in_place;  // the address an in-place input is read at
  std::vector<Tensor> static_outputs;  // undefined where the output is an input or views one
  // Per output: the input it is or views (-1: none), as the view (sizes, strides, storage offset
  // from the input's) that the capture gave, made again on each call's input.
  struct Alias {
    int input = -1;
    bool whole = false;  // the input itself (else a view of its storage, as Program::buffer makes it)
    ScalarType dtype = ScalarType::Float;
    std::vector<int64_t> sizes, strides;
    int64_t offset = 0;
  };
  std::vector<Alias> aliases;
  Tensor rng;  // a program that draws: the {seed, base} its graph's kernels read, written per replay
  uint32_t rng_words[4] = {};  // what rng holds (little-endian halves), once rng_written
  bool rng_written = false;
};

GraphedProgram::GraphedProgram(const Program& program)
    : program_(program), shared_(std::make_unique<Shared>(program.device().index)) {}

GraphedProgram::~GraphedProgram() {
  bool waited = true;
  for (const std::unique_ptr<Entry>& e : entries_)
    if (!e->drop_graph(*shared_)) waited = false;
  if (!waited || shared_->stuck) {  // replays may still be queued: their memory is leaked, not handed out
    shared_->pool.leak();
    for (const std::unique_ptr<Entry>& e : entries_) e->leak();
    for (Tensor& t : shared_->retired) new Tensor(std::move(t));
  }
  entries_.clear();
  shared_->retired.clear();
  shared_->pool.release();
  if (shared_->done) {
    try {
      cuda::event_destroy(shared_->device, shared_->done);
    } catch (const std::exception& e) {  // a destructor must not throw (a sticky fault, the driver gone at exit)
      warn(fmt::format("cuda:{}: a CUDA graph's event could not be released: {}", shared_->device, e.what()));
    }
  }
  if (capture_stream_.handle()) {
    try {
      cuda::stream_destroy(capture_stream_.device(), capture_stream_.handle());
    } catch (const std::exception&) {
    }
  }
}

GraphedProgram::Entry* GraphedProgram::find(const std::vector<Tensor>& inputs) const {
  const bool tf32 = config().allow_tf32;
  for (const std::unique_ptr<Entry>& e : entries_)
    if (e->tf32 == tf32 && has_key(inputs, e->key)) return e.get();
  if (entries_.size() >= kMaxGraphs) return nullptr;
  auto e = std::make_unique<Entry>(program_.device().index);
  e->key = key_of(inputs);
  e->tf32 = tf32;
  entries_.push_back(std::move(e));
  return entries_.back().get();
}

bool GraphedProgram::capture(Entry& e, const std::vector<Tensor>& inputs) const {
  const int device = e.device;
  std::vector<Tensor> in(inputs.size());
  e.static_inputs.assign(inputs.size(), Tensor());
  e.in_place.assign(inputs.size(), nullptr);
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Tensor& t = inputs[i];
    // Where it was last time: read in place. A 0-dim input is always copied (a cpu scalar the
    // executable moves to the device lands anywhere, and one element costs nothing to copy).
    if (t.dim() > 0 && t.impl()->data() == e.seen.at(i)) {
      e.in_place[i] = t.impl()->data();
      in[i] = t;
    } else {
      e.static_inputs[i] = empty_strided(t.sizes().vec(), t.strides().vec(), TensorOptions(t.dtype()).device(t.device()));
      in[i] = e.static_inputs[i];
    }
  }
  std::string failure;
  const bool draws = program_.plan().random_draws > 0;
  // Recording takes no draws of its own. One that another program took during it (an eager op in
  // a lowering) would be skipped by every replay: the capture fails, and the offsets the capture
  // took are given back, so that the plain run takes exactly the draws it would have taken.
  const uint64_t seed = default_generator().seed(), offset = default_generator().offset();
  try {
    if (!capture_stream_.handle()) capture_stream_ = cuda::Stream::create(device);
    if (!shared_->done) shared_->done = cuda::event_create(device, /*timing=*/false);
    if (draws && !e.rng.defined()) e.rng = empty({2}, TensorOptions(ScalarType::Int64).device(program_.device()));
    cuda::StreamGuard on(capture_stream_);
    shared_->pool.begin();
    CapturePool::Active keep(shared_->pool);
    // The recorded kernels read their draws from e.rng; recording takes no offsets from the
    // generator (each replay reserves its own).
    const RngCaptureScope rng(program_.launcher(), draws ? e.rng.impl()->data() : nullptr);
    std::optional<RandomDrawScope> no_offsets;
    if (draws) no_offsets.emplace(0, 0);
    cuda::stream_begin_capture(device, capture_stream_.handle());
    std::vector<Tensor> outs;
    try {
      outs = program_.run(in);
    } catch (const std::exception& ex) {
      failure = ex.what();
    }
    try {  // ends the capture, spoiled or not
      e.exec = cuda::stream_end_capture(device, capture_stream_.handle());
    } catch (const std::exception& ex) {
      if (failure.empty()) failure = ex.what();
      e.exec = nullptr;
    }
    if (failure.empty() && default_generator().seed() == seed && default_generator().offset() != offset)
      failure = "another program drew random numbers during the capture; every replay would skip its draws";
    if (failure.empty()) {
      e.aliases.assign(outs.size(), Entry::Alias());
      for (size_t j = 0; j < outs.size(); ++j) {
        const int i = input_of(program_.plan(), program_.plan().outputs.at(j).buffer);
        if (i < 0) continue;
        const Tensor& base = in.at(static_cast<size_t>(i));
        if (outs[j].impl()->storage().get() != base.impl()->storage().get())
          internal_fail("cuda graphs: output {} of the plan views input {}, but not its memory", j, i);
        e.aliases[j] = {i, outs[j].impl() == base.impl(), outs[j].dtype(), outs[j].sizes().vec(), outs[j].strides().vec(),
                        outs[j].storage_offset() - base.storage_offset()};
        outs[j] = Tensor();
      }
      e.static_outputs = std::move(outs);
    }
  } catch (const std::exception& ex) {
    if (failure.empty()) failure = ex.what();
  }
  if (!failure.empty() && default_generator().seed() == seed && default_generator().offset() > offset) {
    Generator back(seed);  // (the generator is not synchronized: draws of other threads meanwhile are given back too)
    back.reserve_offsets(offset);
    default_generator() = back;
  }
  if (!failure.empty()) {  // nothing ran: the memory the capture kept is free again
    if (cuda::GraphExecHandle x = std::exchange(e.exec, nullptr)) {
      try {
        cuda::graph_exec_destroy(device, x);
      } catch (const std::exception&) {
      }
    }
    shared_->pool.release_fresh();
    e.static_inputs.clear();
    KILN_LOG_IF(LogChannel::Perf, "cuda graphs: the program cannot be captured, and runs without a graph: {}", failure);
    return false;
  }
  g_captures.fetch_add(1, std::memory_order_relaxed);
  return true;
}

std::vector<Tensor> GraphedProgram::replay(Entry& e, const std::vector<Tensor>& inputs) const {
  const int device = e.device;
  Shared& sh = *shared_;
  const cuda::StreamHandle s = cuda::current_stream(device).handle();
  if (sh.replayed) cuda::stream_wait_event(device, s, sh.done);  // the last replay (any graph, any stream) comes first
  for (size_t i = 0; i < inputs.size(); ++i)
    if (e.static_inputs[i].defined()) copy_same_layout(e.static_inputs[i], inputs[i], device, s);
  if (e.rng.defined()) {  // this call's draws, as a plain call takes them (Program::run)
    Generator& g = default_generator();
    const uint64_t words[2] = {g.seed(), g.reserve_offsets(static_cast<uint64_t>(program_.plan().random_draws))};
    // Each changed 32-bit half set by value on the stream (no host buffer, which a copy from
    // pageable memory may synchronize on): usually only the offset's low half.
    const bool known = e.rng_written;
    e.rng_written = false;  // until every write below has been queued
    for (size_t w = 0; w < 4; ++w) {
      const uint32_t half = static_cast<uint32_t>(words[w / 2] >> (32 * (w % 2)));
      if (known && e.rng_words[w] == half) continue;
      cuda::memset_d32(device, static_cast<uint32_t*>(e.rng.impl()->data()) + w, half, 1, s);
      e.rng_words[w] = half;
    }
    e.rng_written = true;
  }
  cuda::graph_launch(device, e.exec, s);
  // The launch is what a later wait must cover, whatever fails after it (an output's allocation);
  // an event that cannot be recorded leaves nothing to wait on, so the memory is never freed.
  sh.replayed = true;
  try {
    cuda::event_record(device, sh.done, s);
  } catch (...) {
    sh.stuck = true;
    throw;
  }
  // Checked kernels of the plan, or of eager ops its library steps ran, may have failed.
  note_checked_launch(device);
  std::vector<Tensor> out;
  for (size_t j = 0; j < e.static_outputs.size(); ++j) {
    if (const Entry::Alias& a = e.aliases[j]; a.input >= 0) {  // this call's input, or the capture's view of it
      const Tensor& in = inputs[static_cast<size_t>(a.input)];
      if (a.whole)
        out.push_back(in);
      else  // bare, as a plain run's view (no autograd history, no view base)
        out.push_back(Tensor(make_intrusive<TensorImpl>(in.impl()->storage(), a.dtype, a.sizes, a.strides,
                                                        in.storage_offset() + a.offset)));
      continue;
    }
    const Tensor& o = e.static_outputs[j];
    Tensor r = empty_strided(o.sizes().vec(), o.strides().vec(), TensorOptions(o.dtype()).device(o.device()));
    copy_same_layout(r, o, device, s);
    out.push_back(std::move(r));
  }
  try {
    cuda::event_record(device, sh.done, s);
  } catch (...) {
    sh.stuck = true;
    throw;
  }
  g_replays.fetch_add(1, std::memory_order_relaxed);
  return out;
}

std::vector<Tensor> GraphedProgram::run(const std::vector<Tensor>& inputs) const {
  // Called from inside a capture (a custom op or lowering running another compiled function):
  // its launches belong to the graph being recorded, so it runs as usual, taking no lock.
  if (CapturePool::capturing()) {
    const RngCaptureScope none(nullptr, nullptr);  // its draws are not the outer graph's (the launcher refuses them)
    return program_.run(inputs);
  }
  {
    // Under the lock: the entry's state, its capture and the replays it queues (which share its
    // buffers). A call that runs without a graph runs outside it.
    std::lock_guard lock(mu_);
    Entry* e = find(inputs);
    if (e && e->state == Entry::State::Graphed) {
      bool moved = false;
      for (size_t i = 0; i < inputs.size(); ++i) moved = moved || (e->in_place[i] && inputs[i].impl()->data() != e->in_place[i]);
      if (!moved) return replay(*e, inputs);
      // An input read in place has moved: back to the first step, with a fresh graph (the pool's
      // blocks stay with the program's other graphs and serve the next capture).
      if (e->drop_graph(*shared_)) {
        e->static_inputs.clear();
        for (Tensor& t : e->static_outputs)
          if (t.defined()) shared_->retired.push_back(std::move(t));
        e->static_outputs.clear();
        e->state = ++e->recaptures > kMaxRecaptures ? Entry::State::Plain : Entry::State::Warm;
      } else {
        e->state = Entry::State::Plain;  // its memory stays with it (~GraphedProgram leaks what it cannot wait for)
      }
      e->seen.clear();
    }
    if (e && e->state == Entry::State::Warm) {
      if (e->seen.size() == inputs.size()) {
        if (capture(*e, inputs)) {
          e->state = Entry::State::Graphed;
          return replay(*e, inputs);
        }
        e->state = Entry::State::Plain;
      } else {
        for (const Tensor& t : inputs) e->seen.push_back(t.impl()->data());
      }
    }
  }
  return program_.run(inputs);
}

void* graph_rng_slot(const KernelLauncher* launcher) {
  return launcher && t_rng.launcher == launcher ? t_rng.slot : nullptr;
}

int64_t cuda_graph_captures() { return g_captures.load(std::memory_order_relaxed); }
int64_t cuda_graph_replays() { return g_replays.load(std::memory_order_relaxed); }

}  // namespace kiln::rt
