// kiln/test/test_opdb_cuda.cpp — the op database (test_support/opdb.h) on a CUDA device.
//
// Every sample is copied to cuda:0 and run there eagerly, compiled (static) and compiled with
// Dynamic::True; the outputs, copied back, must match the traced graph on the interpreter (the
// reference, run on the cpu copies of the inputs) within the entry's float tolerance, and a
// sample the interpreter rejects must raise kiln::Error on the device too. Failures are
// collected per entry (its first failing sample) and reported together, so that one run on
// the GPU machine lists every op that disagrees. The tensors an entry's function captures
// outside its sample (gather's index, a cross_entropy target) come from the database's cuda
// twin (opdb.cpp, built with every made tensor on the device), so that those entries run on
// cuda too; one still refused with PyTorch's device error fails the test. Without a GPU each
// test skips with the reason.
#include "codegen_cuda/cuda_emitter.h"
#include "codegen_cuda/cuda_scalar.h"
#include "codegen_cuda/nvrtc.h"
#include "frontend/tracer.h"
#include "passes/partition.h"
#include "runtime/compile/compiled_backward.h"
#include "runtime/cuda/cuda_device.h"
#include "runtime/pipeline.h"
#include "test_support/grad_run.h"
#include "test_support/opdb.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <map>
#include <optional>
#include <thread>
#include <cstdlib>
#include <iostream>
#include <utility>
#include <set>
#include <string>
#include <vector>

namespace kiln {
namespace {

#define KILN_SKIP_WITHOUT_GPU() \
  if (!cuda::is_available()) GTEST_SKIP() << "no CUDA device: " << cuda::unavailable_reason()

// KILN_OPDB_SHARD=i/n: only entries i, i + n, i + 2n, ... (scripts/gpu_check.sh runs n
// processes at once, since each compiled entry waits for NVRTC).
std::pair<size_t, size_t> shard() {
  const char* v = std::getenv("KILN_OPDB_SHARD");
  size_t i = 0, n = 1;
  if (v && std::sscanf(v, "%zu/%zu", &i, &n) == 2 && n > 0 && i < n) return {i, n};
  return {0, 1};
}

// Returns the number of samples compared; every entry with a failing sample is reported.
int check_on_cuda(opdb::Mode m) {
  int checked = 0;
  std::vector<std::string> failures, captured;
  const auto [part, parts] = shard();
  size_t index = 0;
  for (const opdb::OpEntry& e : opdb::database()) {
    if (index++ % parts != part) continue;
    std::string first;
    for (size_t s = 0; s < e.samples.size() && first.empty(); ++s) {
      const opdb::Sample& in = e.samples[s];
      const std::string where = e.name + " sample " + std::to_string(s) + ": ";
      std::vector<Tensor> ref;
      try {
        ref = opdb::run(e, in, opdb::Mode::Traced);
      } catch (const Error&) {
        try {
          opdb::run(e, in, m);
          first = where + "the interpreter raised; " + opdb::mode_name(m) + " did not";
        } catch (const Error&) {
        } catch (const std::exception& x) {
          first = where + "raised a non-kiln error: " + x.what();
        }
        continue;
      }
      std::vector<Tensor> got;
      try {
        got = opdb::run(e, in, m);
      } catch (const std::exception& x) {
        const std::string what = x.what();
        if (what.find("ll tensors to be on the same device") != std::string::npos &&
            what.find("cpu") != std::string::npos) {
          captured.push_back(e.name);
          break;
        }
        first = where + "raised: " + what.substr(0, 400);
        continue;
      }
      if (got.size() != ref.size()) {
        first = where + std::to_string(got.size()) + " outputs, expected " + std::to_string(ref.size());
        continue;
      }
      for (size_t k = 0; k < ref.size() && first.empty(); ++k) {
        const std::string diff = opdb::compare(ref[k], got[k], opdb::tolerance_of(e, ref[k].dtype()), e.random);
        if (!diff.empty()) first = where + "output " + std::to_string(k) + ": " + diff.substr(0, 400);
      }
      ++checked;
    }
    if (!first.empty()) failures.push_back(first);
  }
  std::string report, refused;
  for (const std::string& f : failures) report += "\n  " + f;
  for (const std::string& c : captured) refused += " " + c;
  std::cout << captured.size() << " entries capture cpu tensors and are refused on cuda:" << refused << "\n";
  EXPECT_TRUE(captured.empty()) << "entries refused with a device error (a cpu tensor made outside test::make or a "
                                   "factory):" << refused;
  EXPECT_TRUE(failures.empty()) << failures.size() << " entries disagree " << opdb::mode_name(m) << ":" << report;
  return checked;
}

// A kernel the cuda backend planned, renamed "k" (so that equal kernels of different entries
// are one), and the entry it came from.
struct PlannedKernel {
  ir::Kernel kernel;
  std::string from;
};
using PlannedKernels = std::map<std::string, PlannedKernel>;  // its CUDA C source -> it

// NVRTC compiles every kernel of `kernels` to a cubin for sm_90, on every core; failures go to
// gtest. NVRTC's cost per call (its start, the prelude) is most of the cost of a small kernel,
// so kernels whose sources start with the same prelude are compiled up to kBatch per call, in
// one translation unit with that prelude once and each kernel under a name of its own; only a
// batch that fails is compiled kernel by kernel, to name the ones NVRTC rejects. Returns how
// many kernels were compiled.
size_t compile_all(const PlannedKernels& kernels) {
  constexpr size_t kBatch = 32;
  struct Batch {
    std::string source;
    std::vector<const PlannedKernel*> members;
  };
  std::map<std::pair<bool, bool>, std::vector<Batch>> by_prelude;
  for (const auto& [source, planned] : kernels) {
    const bool half = source.find("#include <cuda_fp16.h>") != std::string::npos;
    const bool bf16 = source.find("#include <cuda_bf16.h>") != std::string::npos;
    const std::string prelude = cuda::detail::prelude(half, bf16);
    std::vector<Batch>& batches = by_prelude[{half, bf16}];
    if (batches.empty() || batches.back().members.size() == kBatch) batches.push_back({prelude, {}});
    Batch& b = batches.back();
    ir::Kernel named = planned.kernel;
    named.name = "k" + std::to_string(b.members.size());
    const std::string own = cuda::emit_cuda(named);
    const size_t at = own.find(prelude);
    if (at == std::string::npos) {
      ADD_FAILURE() << planned.from << ": a kernel's source does not hold its prelude\n" << own;
      continue;
    }
    b.source += own.substr(at + prelude.size());
    b.members.push_back(&planned);
  }
  std::vector<const Batch*> work;
  for (const auto& [flags, batches] : by_prelude)
    for (const Batch& b : batches) work.push_back(&b);
  std::vector<std::string> failures(work.size());
  std::atomic<size_t> next{0};
  std::vector<std::thread> threads;
  for (unsigned t = 0; t < std::max(1u, std::thread::hardware_concurrency()); ++t)
    threads.emplace_back([&] {
      for (size_t i; (i = next++) < work.size();) {
        if (cuda::compile_for_device(work[i]->source, 90).ok) continue;
        for (const PlannedKernel* m : work[i]->members) {
          const std::string source = cuda::emit_cuda(m->kernel);
          const cuda::NvrtcResult r = cuda::compile_for_device(source, 90);
          if (!r.ok) failures[i] += m->from + ": " + r.log.substr(0, 600) + "\n" + source + "\n";
        }
        if (failures[i].empty()) failures[i] = "a batch failed whose kernels compile one by one:\n" + work[i]->source;
      }
    });
  for (std::thread& t : threads) t.join();
  int failed = 0;
  for (const std::string& f : failures)
    if (!f.empty() && ++failed <= 3) ADD_FAILURE() << f;
  EXPECT_EQ(failed, 0) << "batches with kernels that NVRTC rejects, of " << work.size();
  return kernels.size();
}

// Every kernel the cuda backend plans for `g`, from the entry `from`.
void add_kernels(const std::shared_ptr<ir::Graph>& g, const std::string& from, PlannedKernels& kernels) {
  rt::DriverOptions o;
  o.name = "k";
  o.stop_before_compile = true;
  rt::Compilation c = rt::compile_graph(g, *rt::find_backend("cuda"), o);
  for (const ir::Kernel* k : c.plan.kernels()) {
    ir::Kernel named = *k;
    named.name = "k";
    kernels.emplace(cuda::emit_cuda(named), PlannedKernel{named, from});
  }
}

// Without a GPU too: every kernel the cuda backend plans for the database's programs (first
// sample of each entry, static shapes) prints as CUDA C that NVRTC compiles to a cubin for
// sm_90. Equal kernels are compiled once, in batches (compile_all).
TEST(OpDbCuda, EveryKernelCompilesToCubin) {
  std::string why;
  if (!cuda::nvrtc_available(&why)) GTEST_SKIP() << "no NVRTC: " << why;
  PlannedKernels sources;
  for (const opdb::OpEntry& e : opdb::database()) {
    if (e.data_dependent || e.samples.empty()) continue;
    TracedProgram p;
    try {
      p = trace(e.fn, e.samples[0]);
    } catch (const Error&) {
      continue;  // an error sample: nothing to compile
    }
    add_kernels(p.graph, e.name, sources);
  }
  EXPECT_GT(compile_all(sources), 200u);
}

// Without a GPU too: what the cuda backend still stages through the host. Every entry's
// samples are planned for cuda (no device, no NVRTC needed); an extern step named "host ..." is
// a prim the device cannot run yet. The prims staged must be in this list, each with the
// reason, and a prim that no entry stages any more must leave it (KILN_PRINT_STAGED=1 prints
// the entries per prim).
TEST(OpDbCuda, PlansStageOnlyTheListedPrimsThroughTheHost) {
  // (mm and bmm plan as cuBLASLt steps whatever the dtype; an f64 or integer one is copied to
  // the host inside that step, which this plan-level test does not see.)
  const std::map<std::string, std::string> listed = {
      {"convolution", "integer convolutions: cuDNN computes floating ones only (runtime/cuda/cuda_conv.h)"},
  };
  std::map<std::string, std::set<std::string>> staged;
  for (const opdb::OpEntry& e : opdb::database()) {
    if (e.data_dependent) continue;
    for (const opdb::Sample& sample : e.samples) {
      TracedProgram p;
      try {
        p = trace(e.fn, sample);
      } catch (const Error&) {
        continue;
      }
      rt::DriverOptions o;
      o.name = "staged";
      o.stop_before_compile = true;
      const rt::Compilation c = rt::compile_graph(p.graph, *rt::find_backend("cuda"), o);
      for (const ir::PlanStep& st : c.plan.steps)
        if (st.kind != ir::StepKind::Kernel && st.lowering.rfind("host ", 0) == 0)
          staged[std::string(ir::op_name(st.op))].insert(e.name);
    }
  }
  const bool print = std::getenv("KILN_PRINT_STAGED") != nullptr;
  for (const auto& [op, entries] : staged) {
    EXPECT_TRUE(listed.count(op)) << op << " is staged through the host by " << entries.size() << " entries, e.g. "
                                  << *entries.begin() << "; it is not in the list";
    if (print) {
      std::string names;
      for (const std::string& n : entries) names += " " + n;
      std::printf("[staged] %s (%zu):%s\n", op.c_str(), entries.size(), names.c_str());
    }
  }
  for (const auto& [op, why] : listed)
    EXPECT_TRUE(staged.count(op)) << op << " is no longer staged by any entry: take it off the list (" << why << ")";
}

// The backward programs too (issue 30): each entry's first sample with its floating inputs
// differentiated, traced as the joint graph a compiled training entry traces
// (runtime/compile/compiled_backward.h), split by the partition pass; every kernel the cuda backend
// plans for the backward graph compiles to a cubin.
TEST(OpDbCuda, EveryBackwardKernelCompilesToCubin) {
  std::string why;
  if (!cuda::nvrtc_available(&why)) GTEST_SKIP() << "no NVRTC: " << why;
  PlannedKernels sources;
  int graphs = 0;
  for (const opdb::OpEntry& e : opdb::database()) {
    if (e.data_dependent || e.random || e.samples.empty()) continue;
    const opdb::Sample& sample = e.samples[0];
    std::vector<bool> grad;
    for (const Tensor& t : sample) grad.push_back(t.defined() && is_floating_point(t.dtype()));
    if (std::find(grad.begin(), grad.end(), true) == grad.end()) continue;
    rt::JointInfo info;
    TracedProgram p;
    try {
      p = trace(rt::joint_trace_fn(e.fn, grad, &info), sample);
    } catch (const Error&) {
      continue;  // an error sample, or nothing differentiable
    }
    if (info.cotangents.empty()) continue;
    passes::PartitionSpec spec;
    spec.num_forward_outputs = info.num_outputs;
    spec.num_backward_outputs = info.grad_args.size() + info.grad_captured.size();
    spec.backward_inputs = info.cotangents;
    add_kernels(passes::partition_joint(*p.graph, spec).backward, e.name, sources);
    ++graphs;
  }
  std::printf("[cubin] %d backward graphs, %zu kernels\n", graphs, sources.size());
  EXPECT_GT(graphs, 300);
  EXPECT_GT(compile_all(sources), 200u);
}

TEST(OpDbCuda, EagerAgreesWithInterpreter) {
  KILN_SKIP_WITHOUT_GPU();
  EXPECT_GT(check_on_cuda(opdb::Mode::CudaEager), 300 / static_cast<int>(shard().second));
}
TEST(OpDbCuda, CompiledAgreesWithInterpreter) {
  KILN_SKIP_WITHOUT_GPU();
  EXPECT_GT(check_on_cuda(opdb::Mode::CudaCompiled), 300 / static_cast<int>(shard().second));
}
TEST(OpDbCuda, DynamicCompiledAgreesWithInterpreter) {
  KILN_SKIP_WITHOUT_GPU();
  EXPECT_GT(check_on_cuda(opdb::Mode::CudaDynamic), 300 / static_cast<int>(shard().second));
}

// The gradients too (issue 30 on a GPU): each entry's first sample, differentiated through
// its floating inputs (test_support/grad_run.h) with the function run on cuda (eagerly, or as
// a compiled training entry whose forward and backward run there), must match the gradients
// of the same contraction on the cpu in f64. Random entries draw differently and are left
// out; an entry the device refuses (a captured cpu tensor) is listed and counted.
void check_gradients_on_cuda(opdb::Mode m) {
  int checked = 0;
  std::vector<std::string> failures, refused;
  const auto [part, parts] = shard();
  size_t index = 0;
  for (const opdb::OpEntry& e : opdb::database()) {
    if (index++ % parts != part || e.random || e.samples.empty()) continue;
    const std::optional<opdb::GradRun> cpu = opdb::grad_run(e, e.samples[0], opdb::Mode::Eager);
    if (!cpu || cpu->diff_outputs.empty()) continue;
    std::vector<Tensor> want, got;
    try {
      want = opdb::grads_of(*cpu);
    } catch (const Error&) {
      continue;  // not differentiable on the cpu either
    }
    const std::optional<opdb::GradRun> dev = opdb::grad_run(e, e.samples[0], m);
    if (!dev || dev->diff_outputs.empty()) {
      refused.push_back(e.name);
      continue;
    }
    try {
      got = opdb::grads_of(*dev);
    } catch (const std::exception& x) {
      failures.push_back(e.name + ": backward raised: " + std::string(x.what()).substr(0, 400));
      std::cout << "  " << failures.back() << std::endl;
      continue;
    }
    std::string first;
    for (size_t i = 0; i < want.size() && first.empty(); ++i) {
      if (!want[i].defined() && !got.at(i).defined()) continue;
      // An unused input's gradient may be undefined on one side and zeros on the other.
      const Tensor w = want[i].defined() ? want[i] : zeros_like(got[i].cpu());
      const Tensor g = got[i].defined() ? got[i].cpu() : zeros_like(want[i]);
      const std::string diff = opdb::compare(w, g, opdb::tolerance_for(kDouble), false);
      if (!diff.empty()) first = e.name + ": gradient " + std::to_string(i) + ": " + diff.substr(0, 400);
    }
    if (!first.empty()) {
      std::cout << "  " << first << std::endl;  // now: a shard stopped by its timeout keeps what it found
      failures.push_back(first);
    }
    ++checked;
  }
  std::string report, names;
  for (const std::string& f : failures) report += "\n  " + f;
  for (const std::string& r : refused) names += " " + r;
  std::cout << checked << " gradients compared " << opdb::mode_name(m) << "; " << refused.size()
            << " entries refused on cuda:" << names << "\n";
  EXPECT_GT(checked, 250 / static_cast<int>(parts));
  EXPECT_TRUE(failures.empty()) << failures.size() << " gradients disagree " << opdb::mode_name(m) << ":" << report;
}

TEST(OpDbCuda, EagerGradientsAgreeWithTheCpu) {
  KILN_SKIP_WITHOUT_GPU();
  check_gradients_on_cuda(opdb::Mode::CudaEager);
}
TEST(OpDbCuda, CompiledGradientsAgreeWithTheCpu) {
  KILN_SKIP_WITHOUT_GPU();
  check_gradients_on_cuda(opdb::Mode::CudaCompiled);
}

}  // namespace
}  // namespace kiln
