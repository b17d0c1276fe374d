// kiln/runtime/cuda/cuda_graphs.h — warm calls of a compiled cuda program replayed as CUDA graphs (CompileOptions::cuda_graphs).
//
// torch.compile's mode="reduce-overhead": a program's launches (kernels, cuBLASLt, cuDNN, kiln's
// sort and attention kernels) are recorded once into a CUDA graph and each later call replays
// them with one cuGraphLaunch, so the host's cost of a call no longer grows with its kernels.
//
// Per input signature (dtypes, sizes, strides), at most kMaxGraphs of them:
//  - the first call runs the program as usual and notes where each input lives;
//  - the second records the graph. An input at the same address as in the first call (a
//    captured weight, a buffer the caller reuses) is read where it is; every other input gets a
//    buffer of the graph's own, into which each replay first copies it. The graph's
//    temporaries stay allocated for it, in one pool that all of the program's graphs share
//    (capture_pool.h): memory grows with the largest signature's needs, not with their sum;
//  - later calls replay it. Their outputs are copies of the graph's outputs, so a result stays
//    valid when the next call replays the graph again; an output that is or views an input (a
//    training step's forward returns the tensors its backward needs) is that view of the call's
//    own input, as without a graph. An in-place input found elsewhere sends
//    the signature back to the first step, at most kMaxRecaptures times. A 0-dim input is
//    always copied. Replays of all the program's graphs are ordered after one another whatever
//    streams they run on (an event after each), and config().allow_tf32 is part of the signature.
// Random draws are replayed with fresh numbers: the graph's kernels that draw read the call's
// (seed, base) from a buffer of the graph's (the kernel argument kiln_rng, cuda_emitter.h), into
// which each replay copies the default generator's seed and the offsets it reserves, as a plain
// call would (PyTorch's graph-safe Philox state does the same). So a graphed function draws what
// the same function without graphs draws from the same seed.
// Programs a graph cannot replay faithfully run as usual: a random draw in a step other than a
// kernel (its attributes would be frozen), a step that writes an input, outputs that alias each
// other. So does a program whose capture the driver refuses (a step that
// synchronizes or copies to the host, such as a step staged through the host): it is not
// tried again for that signature.
#pragma once

#include "frontend/tensor.h"
#include "runtime/cuda/cuda_device.h"
#include "runtime/program.h"

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace kiln::rt {

// Whether the plan can be replayed from a graph; if not and `why` is given, why not.
bool plan_graphable(const ir::ExecPlan& plan, std::string* why = nullptr);

inline constexpr size_t kMaxGraphs = 8;
inline constexpr int kMaxRecaptures = 3;

class GraphedProgram {
 public:
  explicit GraphedProgram(const Program& program);  // which outlives this
  ~GraphedProgram();
  GraphedProgram(const GraphedProgram&) = delete;
  GraphedProgram& operator=(const GraphedProgram&) = delete;

  // The program's outputs for `inputs` (on the program's device), replayed where it can.
  std::vector<Tensor> run(const std::vector<Tensor>& inputs) const;

 private:
  struct Shared;
  struct Entry;
  Entry* find(const std::vector<Tensor>& inputs) const;
  bool capture(Entry& e, const std::vector<Tensor>& inputs) const;
  std::vector<Tensor> replay(Entry& e, const std::vector<Tensor>& inputs) const;

  const Program& program_;
  mutable std::mutex mu_;
  std::unique_ptr<Shared> shared_;  // the graphs' memory pool and replay order
  mutable std::vector<std::unique_ptr<Entry>> entries_;
  mutable cuda::Stream capture_stream_;
};

// While this thread records a graph of the program `launcher` launches for: the device address
// of the graph's {seed, base}, which that program's drawing kernels are given (null otherwise,
// and for any other launcher: an eager op run inside the capture keeps its own draws).
void* graph_rng_slot(const KernelLauncher* launcher);

// Graphs recorded and replays run in this process (tests, bench).
int64_t cuda_graph_captures();
int64_t cuda_graph_replays();

}  // namespace kiln::rt
