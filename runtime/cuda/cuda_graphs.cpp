// kiln/runtime/cuda/cuda_graphs.cpp — a program's warm calls as CUDA graph replays (cuda_graphs.h).
#include "runtime/cuda/cuda_graphs.h"

#include "base/error.h"
#include "base/tensor_impl.h"
#include "codegen_cuda/driver.h"
#include "frontend/ops_factory.h"
#include "runtime/cuda/capture_pool.h"
#include "runtime/cuda/cuda_faults.h"
#include "runtime/log.h"

#include <fmt/format.h>

#include <atomic>
#include <set>

namespace kiln::rt {

namespace {

std::atomic<int64_t> g_captures{0}, g_replays{0};

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
  bool operator==(const InputKey&) const = default;
};

std::vector<InputKey> key_of(const std::vector<Tensor>& inputs) {
  std::vector<InputKey> k;
  for (const Tensor& t : inputs) k.push_back({t.dtype(), t.sizes().vec(), t.strides().vec()});
  return k;
}

// dst (a fresh or graph-owned tensor of src's sizes and strides, on its device) = src.
void copy_same_layout(const Tensor& dst, const Tensor& src, int device, cuda::StreamHandle stream) {
  if (src.numel() == 0) return;
  if (src.is_contiguous() && dst.is_contiguous()) {
    cuda::memcpy_dtod(device, dst.impl()->data(), src.impl()->data(), static_cast<size_t>(src.numel()) * element_size(src.dtype()),
                      stream);
    return;
  }
  Tensor(dst).copy_(src);
}

}  // namespace

bool plan_graphable(const ir::ExecPlan& plan, std::string* why) {
  auto no = [&](std::string reason) {
    if (why) *why = std::move(reason);
    return false;
  };
  if (plan.random_draws > 0) return no("it draws random numbers (a replay would draw the same ones)");
  std::set<int> outs;
  for (const ir::PlanOutput& o : plan.outputs) {
    if (input_of(plan, o.buffer) >= 0) return no("an output is, or views, an input");
    if (!outs.insert(o.buffer).second) return no("two outputs are one tensor");
    if (plan.buffers.at(static_cast<size_t>(o.buffer)).donor_input >= 0) return no("an output may take an input's memory");
  }
  for (const ir::PlanStep& st : plan.steps)
    for (int b : st.written())
      if (input_of(plan, b) >= 0) return no("a step writes an input");
  return true;
}

struct GraphedProgram::Entry {
  enum class State { Warm, Graphed, Plain };
  explicit Entry(int d) : device(d), pool(d) {}
  ~Entry() {
    if (!exec) return;
    try {  // the replays still queued use the graph's memory
      cuda::device_synchronize(device);
      cuda::graph_exec_destroy(device, exec);
    } catch (const std::exception& e) {
      warn(fmt::format("cuda:{}: a CUDA graph could not be released: {}", device, e.what()));
    }
  }
  int device;
  std::vector<InputKey> key;
  std::vector<const void*> seen;  // each input's address at the last plain call
  State state = State::Warm;
  int recaptures = 0;
  CapturePool pool;
  cuda::GraphExecHandle exec = nullptr;
  std::vector<Tensor> static_inputs;  // the graph's copy of each input (undefined: read in place)
  std::vector<const void*> in_place;  // the address an in-place input is read at
  std::vector<Tensor> static_outputs;
  cuda::StreamHandle last_stream = nullptr;
  int64_t last_stream_device = -1;
};

GraphedProgram::GraphedProgram(const Program& program) : program_(program) {
  for (const ir::Kernel* k : program.plan().kernels()) checks_ = checks_ || ir::has_checks(*k);
}

GraphedProgram::~GraphedProgram() {
  entries_.clear();  // each entry waits for its replays
  if (capture_stream_.handle()) {
    try {
      cuda::stream_destroy(capture_stream_.device(), capture_stream_.handle());
    } catch (const std::exception&) {
    }
  }
}

GraphedProgram::Entry* GraphedProgram::find(const std::vector<Tensor>& inputs) const {
  const std::vector<InputKey> key = key_of(inputs);
  for (const std::unique_ptr<Entry>& e : entries_)
    if (e->key == key) return e.get();
  if (entries_.size() >= kMaxGraphs) return nullptr;
  auto e = std::make_unique<Entry>(program_.device().index);
  e->key = key;
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
    if (t.impl()->data() == e.seen.at(i)) {  // where it was last time: read in place
      e.in_place[i] = t.impl()->data();
      in[i] = t;
    } else {
      e.static_inputs[i] = empty_strided(t.sizes().vec(), t.strides().vec(), TensorOptions(t.dtype()).device(t.device()));
      in[i] = e.static_inputs[i];
    }
  }
  if (!capture_stream_.handle()) capture_stream_ = cuda::Stream::create(device);
  std::string failure;
  {
    cuda::StreamGuard on(capture_stream_);
    CapturePool::Active keep(e.pool);
    cuda::stream_begin_capture(device, capture_stream_.handle());
    std::vector<Tensor> outs;
    try {
      outs = program_.run(in);
    } catch (const std::exception& ex) {
      failure = ex.what();
    }
    try {
      e.exec = cuda::stream_end_capture(device, capture_stream_.handle());
    } catch (const std::exception& ex) {
      if (failure.empty()) failure = ex.what();
      e.exec = nullptr;
    }
    if (failure.empty()) e.static_outputs = std::move(outs);
  }
  if (!failure.empty()) {  // nothing ran: the memory the capture kept is free again
    if (e.exec) cuda::graph_exec_destroy(device, e.exec);
    e.exec = nullptr;
    e.pool.release();
    e.static_inputs.clear();
    KILN_LOG_IF(LogChannel::Perf, "cuda graphs: the program cannot be captured, and runs without a graph: {}", failure);
    return false;
  }
  g_captures.fetch_add(1, std::memory_order_relaxed);
  return true;
}

std::vector<Tensor> GraphedProgram::replay(Entry& e, const std::vector<Tensor>& inputs) const {
  const int device = e.device;
  const cuda::Stream s = cuda::current_stream(device);
  if (e.last_stream != s.handle() && e.last_stream_device >= 0)  // the last replay's writes come first
    s.wait_stream(cuda::Stream::wrap(device, e.last_stream));
  for (size_t i = 0; i < inputs.size(); ++i)
    if (e.static_inputs[i].defined()) copy_same_layout(e.static_inputs[i], inputs[i], device, s.handle());
  cuda::graph_launch(device, e.exec, s.handle());
  if (checks_) note_checked_launch(device);
  e.last_stream = s.handle();
  e.last_stream_device = device;
  std::vector<Tensor> out;
  for (const Tensor& o : e.static_outputs) {
    Tensor r = empty_strided(o.sizes().vec(), o.strides().vec(), TensorOptions(o.dtype()).device(o.device()));
    copy_same_layout(r, o, device, s.handle());
    out.push_back(std::move(r));
  }
  g_replays.fetch_add(1, std::memory_order_relaxed);
  return out;
}

std::vector<Tensor> GraphedProgram::run(const std::vector<Tensor>& inputs) const {
  std::lock_guard lock(mu_);
  Entry* e = find(inputs);
  if (!e || e->state == Entry::State::Plain) return program_.run(inputs);
  if (e->state == Entry::State::Graphed) {
    bool moved = false;
    for (size_t i = 0; i < inputs.size(); ++i) moved = moved || (e->in_place[i] && inputs[i].impl()->data() != e->in_place[i]);
    if (!moved) return replay(*e, inputs);
    // An input read in place has moved: back to the first step, with a fresh graph.
    cuda::device_synchronize(e->device);
    cuda::graph_exec_destroy(e->device, e->exec);
    e->exec = nullptr;
    e->pool.release();
    e->static_inputs.clear();
    e->static_outputs.clear();
    e->state = ++e->recaptures > kMaxRecaptures ? Entry::State::Plain : Entry::State::Warm;
    e->seen.clear();
  }
  if (e->state == Entry::State::Warm && e->seen.size() == inputs.size()) {
    if (capture(*e, inputs)) {
      e->state = Entry::State::Graphed;
      return replay(*e, inputs);
    }
    e->state = Entry::State::Plain;
    return program_.run(inputs);
  }
  e->seen.clear();
  for (const Tensor& t : inputs) e->seen.push_back(t.impl()->data());
  return program_.run(inputs);
}

int64_t cuda_graph_captures() { return g_captures.load(std::memory_order_relaxed); }
int64_t cuda_graph_replays() { return g_replays.load(std::memory_order_relaxed); }

}  // namespace kiln::rt
