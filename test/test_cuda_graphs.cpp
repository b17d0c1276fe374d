// kiln/test/test_cuda_graphs.cpp — compiled cuda programs replayed as CUDA graphs (runtime/cuda/cuda_graphs.h).
//
// Everywhere: which plans a graph may replay. On a device (a real one, or the emulated device of
// test/emulated_cuda, whose capture records launches, copies and fills and refuses what a
// driver refuses): warm calls replay one graph per input signature and give what the program
// gives without one; results stay valid across later calls; a weight changed in place is read
// at its address; new sizes capture again; random draws replay with fresh numbers, those of the
// function without graphs; outputs that view inputs are views of each call's inputs, so a training
// step's forward and backward both replay; programs whose capture the driver refuses run without a graph and
// stay correct.
#include "ir/exec_plan.h"
#include "kiln/kiln.h"
#include "codegen_cuda/driver.h"
#include "runtime/backend.h"
#include "runtime/cuda/cuda_device.h"
#include "runtime/cuda/cuda_graphs.h"
#include "runtime/extend.h"
#include "runtime/pipeline.h"

#include "test_support/make.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace kiln {
namespace {

ir::ExecPlan cuda_plan(const std::function<std::vector<Tensor>(const std::vector<Tensor>&)>& fn,
                       const std::vector<Tensor>& in) {
  TracedProgram p = trace(fn, in);
  rt::DriverOptions o;
  o.name = "graph_plan";
  o.stop_before_compile = true;
  return rt::compile_graph(p.graph, *rt::find_backend("cuda"), o).plan;
}

TEST(CudaGraphs, WhichPlansAGraphReplays) {
  const Tensor x = randn({8, 16}), w = randn({32, 16});
  std::string why;
  EXPECT_TRUE(rt::plan_graphable(
      cuda_plan([&](const std::vector<Tensor>& in) { return std::vector<Tensor>{softmax(linear(in[0], w), -1)}; }, {x}), &why))
      << why;
  // Draws computed in kernels read (seed, base) from the device: replayed with fresh numbers.
  EXPECT_TRUE(rt::plan_graphable(
      cuda_plan([](const std::vector<Tensor>& in) { return std::vector<Tensor>{in[0] + rand_like(in[0])}; }, {x}), &why))
      << why;
  // A draw in a step other than a kernel would be frozen into the graph.
  ir::ExecPlan frozen = cuda_plan([](const std::vector<Tensor>& in) { return std::vector<Tensor>{in[0] + 1}; }, {x});
  ir::PlanStep draw;
  draw.kind = ir::StepKind::Extern;
  draw.op = ir::OpKind::uniform;
  frozen.steps.push_back(draw);
  EXPECT_FALSE(rt::plan_graphable(frozen, &why));
  EXPECT_NE(why.find("draws random numbers (uniform)"), std::string::npos) << why;
  // An output that is or views an input is made from each call's input.
  EXPECT_TRUE(rt::plan_graphable(
      cuda_plan([](const std::vector<Tensor>& in) { return std::vector<Tensor>{in[0], in[0] * 2, in[0].t()}; }, {x}), &why))
      << why;
}

#define KILN_SKIP_WITHOUT_GPU() \
  if (!cuda::is_available()) GTEST_SKIP() << "no CUDA device: " << cuda::unavailable_reason()

using test::kGpu;

// Warm calls replay; each result is what the program computes, and stays so after later calls.
TEST(CudaGpu, CudaGraphsReplayWarmCalls) {
  KILN_SKIP_WITHOUT_GPU();
  manual_seed(31);
  Tensor w = randn({128, 96}).to(kGpu), b = randn({128}).to(kGpu);
  auto fn = [&](const Tensor& x) {
    const Tensor y = relu(linear(x, w, b));
    return std::make_tuple(softmax(y, -1), layer_norm(y, {128}).sum(1));
  };
  auto graphed = compile(fn, {.cuda_graphs = true});
  const int64_t captures = rt::cuda_graph_captures(), replays = rt::cuda_graph_replays();
  std::vector<Tensor> xs;
  for (int i = 0; i < 4; ++i) xs.push_back(randn({64, 96}).to(kGpu));
  std::vector<std::tuple<Tensor, Tensor>> got;
  for (const Tensor& x : xs) got.push_back(graphed(x));
  EXPECT_EQ(rt::cuda_graph_captures(), captures + 1);
  EXPECT_EQ(rt::cuda_graph_replays(), replays + 3) << "the first call runs as usual, the next three replay";
  for (size_t i = 0; i < xs.size(); ++i) {  // after every call: each result is still its own
    const auto [p, s] = fn(xs[i]);
    EXPECT_TRUE(allclose(std::get<0>(got[i]).cpu(), p.cpu(), 1e-5, 1e-6)) << "call " << i;
    EXPECT_TRUE(allclose(std::get<1>(got[i]).cpu(), s.cpu(), 1e-4, 1e-4)) << "call " << i;
  }
  // The weight, read where it is: changed in place, the next replay sees it.
  w.mul_(0.5);
  const auto [p2, s2] = graphed(xs[0]);
  const auto [pw, sw] = fn(xs[0]);
  EXPECT_TRUE(allclose(p2.cpu(), pw.cpu(), 1e-5, 1e-6));
  EXPECT_EQ(rt::cuda_graph_replays(), replays + 4);
  // Other sizes: a second graph after one plain call.
  const Tensor small = randn({5, 96}).to(kGpu);
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(allclose(std::get<0>(graphed(small)).cpu(), std::get<0>(fn(small)).cpu(), 1e-5, 1e-6));
  EXPECT_EQ(rt::cuda_graph_captures(), captures + 2);
  EXPECT_EQ(rt::cuda_graph_replays(), replays + 6);
}

// The graphs of one function (here one dynamic program, four row counts) share one pool: a
// smaller signature's temporaries and the cuBLASLt workspace come from what the larger one's
// capture kept, so the memory grows with the largest graph, not with their sum. Calls that
// alternate between the graphs, which share that memory, still give each its own results; and
// the function's memory is all returned when it is destroyed.
TEST(CudaGpu, CudaGraphsOfOneFunctionShareTheirMemory) {
  KILN_SKIP_WITHOUT_GPU();
  manual_seed(5);
  const Tensor w = randn({256, 256}).to(kGpu), b = randn({256}).to(kGpu);
  auto fn = [&](const Tensor& x) { return softmax(relu(linear(x, w, b)) * 2, -1) + x.exp().sum(1, true); };
  const int64_t before = cuda::memory_stats(0).allocated_bytes;
  {
    auto graphed = compile(fn, {.dynamic = Dynamic::True, .cuda_graphs = true});
    const int64_t captures = rt::cuda_graph_captures();
    std::vector<Tensor> xs;
    std::vector<int64_t> grown;  // allocated bytes after each signature's capture
    for (int64_t rows : {512, 384, 256, 128}) {
      xs.push_back(randn({rows, 256}).to(kGpu));
      for (int i = 0; i < 2; ++i) (void)graphed(xs.back());  // a plain call, then the capture
      grown.push_back(cuda::memory_stats(0).allocated_bytes - before);
    }
    EXPECT_EQ(rt::cuda_graph_captures(), captures + 4);
    // Past the first graph, each adds its input and output copies, not another set of temporaries.
    const int64_t io = 4 * (384 + 256 + 128) * 256 * 2 + (1 << 20);
    EXPECT_LT(grown[3] - grown[0], io) << "first graph " << grown[0] << " bytes, all four " << grown[3];
    for (int round = 0; round < 3; ++round)
      for (const Tensor& x : xs) {
        const Tensor got = graphed(x), want = fn(x);
        EXPECT_TRUE(allclose(got.cpu(), want.cpu(), 1e-5, 1e-5)) << x.size(0) << " rows, round " << round;
      }
    xs.clear();
  }
  EXPECT_EQ(cuda::memory_stats(0).allocated_bytes, before) << "the graphs' memory outlived the function";
  {  // 320 rows, then 384, then 200, whose output lands in a block the 384-row graph uses between
     // its kernels. Dropped for a recapture (its input, read in place, moved), the 200-row graph
     // keeps that output alive: the 384-row graph's replays then read no freed memory
     // (KILN_ALLOCATOR=system unmaps it).
    auto graphed = compile(fn, {.dynamic = Dynamic::True, .cuda_graphs = true});
    const int64_t captures = rt::cuda_graph_captures();
    std::vector<Tensor> xs;
    for (int64_t rows : {320, 384, 200}) {
      xs.push_back(randn({rows, 256}).to(kGpu));
      for (int i = 0; i < 2; ++i) (void)graphed(xs.back());
    }
    for (int i = 0; i < 3; ++i) {
      xs[2] = randn({200, 256}).to(kGpu);
      for (const Tensor& x : xs) EXPECT_TRUE(allclose(graphed(x).cpu(), fn(x).cpu(), 1e-5, 1e-5)) << x.size(0) << " rows";
    }
    EXPECT_GT(rt::cuda_graph_captures(), captures + 3) << "the 200-row graph was not captured again";
  }
  EXPECT_EQ(cuda::memory_stats(0).allocated_bytes, before) << "the graphs' memory outlived the function";
}

// An output that is or views an input is that view of each call's own input, as without a
// graph: the input itself where the plan returns it, else a bare view of its memory (no autograd
// history), also when the graph reads the input from a copy of its own and when the input starts
// at a storage offset.
TEST(CudaGpu, CudaGraphsReturnViewsOfEachCallsInputs) {
  KILN_SKIP_WITHOUT_GPU();
  auto fn = [](const Tensor& x) { return std::make_tuple(x, x.t(), x.reshape({15}), x.narrow(0, 1, 2), x * 2); };
  auto graphed = compile(fn, {.cuda_graphs = true});
  auto plain = compile(fn);
  const int64_t replays = rt::cuda_graph_replays();
  for (int i = 0; i < 4; ++i) {
    const Tensor x = randn({4, 5}).to(kGpu).narrow(0, 1, 3);  // a new address each call, at offset 5
    const auto [same, t, flat, rows, twice] = graphed(x);
    const auto [p_same, p_t, p_flat, p_rows, p_twice] = plain(x);
    EXPECT_EQ(same.impl(), x.impl()) << "call " << i;
    EXPECT_EQ(p_same.impl(), x.impl()) << "call " << i;
    for (const auto& [got, want] : {std::pair{t, p_t}, std::pair{flat, p_flat}, std::pair{rows, p_rows}}) {
      EXPECT_EQ(got.impl()->storage().get() == x.impl()->storage().get(),
                want.impl()->storage().get() == x.impl()->storage().get()) << "call " << i;
      EXPECT_EQ(got.sizes(), want.sizes()) << "call " << i;
      EXPECT_EQ(got.strides(), want.strides()) << "call " << i;
      EXPECT_EQ(got.storage_offset(), want.storage_offset()) << "call " << i;
      EXPECT_TRUE(equal(got.cpu(), want.cpu())) << "call " << i;
    }
    EXPECT_TRUE(equal(twice.cpu(), x.cpu() * 2)) << "call " << i;
  }
  EXPECT_EQ(rt::cuda_graph_replays(), replays + 3);
}

// A leaf that requires grad, passed transposed (not contiguous) and kept for the backward: its
// graphed steps give the plain steps' gradients.
TEST(CudaGpu, CudaGraphsKeepANonContiguousInputThatRequiresGrad) {
  KILN_SKIP_WITHOUT_GPU();
  auto fn = [](const Tensor& a, const Tensor& b) { return (a * b).sum(); };
  auto graphed = compile(fn, {.cuda_graphs = true});
  auto plain = compile(fn);
  Tensor p = randn({6, 4}).to(kGpu).requires_grad_();
  const Tensor b = randn({4, 6}).to(kGpu);
  const int64_t replays = rt::cuda_graph_replays();
  for (int i = 0; i < 4; ++i) {
    p.mutable_grad() = Tensor();
    graphed(p.t(), b).backward();
    const Tensor got = p.grad().cpu();
    p.mutable_grad() = Tensor();
    plain(p.t(), b).backward();
    EXPECT_TRUE(equal(got, p.grad().cpu())) << "call " << i;
    EXPECT_TRUE(equal(got, b.cpu().t())) << "call " << i;
  }
  EXPECT_GE(rt::cuda_graph_replays(), replays + 2);
}

// A training step: the forward (whose outputs include the inputs its backward keeps) and the
// backward are each replayed as a graph, and the weights follow the same path as without graphs.
TEST(CudaGpu, CudaGraphsReplayATrainingStep) {
  KILN_SKIP_WITHOUT_GPU();
  auto run = [](bool graphs) {
    manual_seed(12);
    Tensor w1 = (randn({64, 32}) * 0.2).to(kGpu).requires_grad_(), w2 = (randn({8, 64}) * 0.2).to(kGpu).requires_grad_();
    const Tensor x = randn({16, 32}).to(kGpu);
    auto loss = compile([&](const Tensor& in) { return gelu(linear(dropout(in, 0.1, true), w1)).matmul(w2.t()).square().mean(); },
                        {.cuda_graphs = graphs});
    optim::AdamW opt({w1, w2}, optim::AdamWOptions(1e-2));
    std::vector<double> losses;
    for (int step = 0; step < 6; ++step) {
      w1.mutable_grad() = Tensor();
      w2.mutable_grad() = Tensor();
      Tensor l = loss(x);
      l.backward();
      opt.step();
      losses.push_back(l.cpu().item<double>());
    }
    return std::make_tuple(losses, w1.detach().cpu(), w2.detach().cpu());
  };
  const auto [plain_losses, plain_w1, plain_w2] = run(false);
  const int64_t captures = rt::cuda_graph_captures(), replays = rt::cuda_graph_replays();
  const auto [losses, w1, w2] = run(true);
  EXPECT_EQ(rt::cuda_graph_captures(), captures + 2) << "the forward and the backward";
  EXPECT_EQ(rt::cuda_graph_replays(), replays + 10) << "steps 2-6 of each";
  EXPECT_EQ(losses, plain_losses);
  EXPECT_TRUE(equal(w1, plain_w1));
  EXPECT_TRUE(equal(w2, plain_w2));
  EXPECT_LT(losses.back(), losses.front());
}

// Inputs a graph copies whatever their layout: an expanded (stride-0) input made anew each call,
// and a 0-dim cpu tensor, which joins the cuda ops as a scalar (as in eager ops) and is moved to
// the device on each call (always copied: one element).
TEST(CudaGpu, CudaGraphsCopyExpandedAndScalarInputs) {
  KILN_SKIP_WITHOUT_GPU();
  auto fn = [](const Tensor& x, const Tensor& row, const Tensor& s) { return softmax(x * row, -1) * s; };
  auto graphed = compile(fn, {.cuda_graphs = true});
  auto plain = compile(fn);
  const int64_t replays = rt::cuda_graph_replays();
  for (int i = 0; i < 4; ++i) {
    const Tensor x = randn({16, 32}).to(kGpu), row = randn({1, 32}).to(kGpu).expand({16, 32});
    const Tensor s = full({}, 1.5 + i);  // on the cpu
    const Tensor want = fn(x.cpu(), row.cpu(), s);
    EXPECT_TRUE(allclose(graphed(x, row, s).cpu(), want, 1e-5, 1e-6)) << "call " << i;
    EXPECT_TRUE(allclose(plain(x, row, s).cpu(), want, 1e-5, 1e-6)) << "call " << i;
  }
  EXPECT_EQ(rt::cuda_graph_replays(), replays + 3);
  EXPECT_EQ(plain.stats().compiles, 1) << "the scalar's value is an input, not a constant";
}

// Random draws replay with fresh numbers: each replay reserves the generator's offsets as a
// plain call does, so from one seed the graphed function draws exactly what eager ops and the
// function compiled without graphs draw, call after call (a dropout mask and a normal draw,
// and a second input size with a graph of its own). Each function is traced before the seed is
// set, since a trace takes draws of its own (CompileRandom.DrawsEqualEagerBitForBit).
TEST(CudaGpu, CudaGraphsReplayRandomDraws) {
  KILN_SKIP_WITHOUT_GPU();
  auto fn = [](const Tensor& x) { return std::make_tuple(dropout(x, 0.25, true), x * 2 + randn_like(x)); };
  auto graphed = compile(fn, {.dynamic = Dynamic::False, .cuda_graphs = true});
  auto plain = compile(fn, {.dynamic = Dynamic::False});
  const Tensor x = (randn({64, 48}) + 3).to(kGpu), small = (randn({7, 5}) + 3).to(kGpu);
  for (const Tensor& in : {x, small}) {  // traced; the graphs' first, plain calls
    (void)graphed(in);
    (void)plain(in);
  }
  const int64_t captures = rt::cuda_graph_captures(), replays = rt::cuda_graph_replays();
  const std::vector<Tensor> inputs = {x, x, x, x, x, small, small, small, x};
  auto draw_all = [&](const auto& f) {
    manual_seed(77);
    std::vector<std::tuple<Tensor, Tensor>> out;
    for (const Tensor& in : inputs) out.push_back(f(in));
    return out;
  };
  const auto got = draw_all(graphed);
  EXPECT_EQ(rt::cuda_graph_captures(), captures + 2) << "recorded at the first x and the first small call";
  EXPECT_EQ(rt::cuda_graph_replays(), replays + 9);
  const auto eager = draw_all(fn), compiled = draw_all(plain);
  for (size_t i = 0; i < inputs.size(); ++i) {
    EXPECT_TRUE(allclose(std::get<0>(got[i]).cpu(), std::get<0>(eager[i]).cpu(), 1e-6, 1e-6)) << "dropout, call " << i;
    EXPECT_TRUE(equal(std::get<0>(got[i]).cpu(), std::get<0>(compiled[i]).cpu())) << "dropout, call " << i;
    EXPECT_TRUE(allclose(std::get<1>(got[i]).cpu(), std::get<1>(eager[i]).cpu(), 1e-6, 1e-6)) << "randn, call " << i;
    EXPECT_TRUE(equal(std::get<1>(got[i]).cpu(), std::get<1>(compiled[i]).cpu())) << "randn, call " << i;
  }
  for (size_t i = 1; i < 5; ++i)  // each replay drew anew
    EXPECT_FALSE(equal(std::get<0>(got[i]).cpu(), std::get<0>(got[i - 1]).cpu())) << "call " << i << " redrew call " << i - 1;
  const Tensor kept = std::get<0>(got[1]).cpu();  // about a quarter dropped, the rest scaled by 4/3
  const double dropped = (kept == 0).to(kFloat64).mean().item<double>();
  EXPECT_GT(dropped, 0.15);
  EXPECT_LT(dropped, 0.35);
}

// A draw that another program makes inside the capture (here an eager rand_like in a user's
// lowering) would repeat on every replay: the capture fails on it, and the function runs
// without a graph, drawing anew each call.
TEST(CudaGpu, CudaGraphsRefuseDrawsOfAnotherProgramInTheirCapture) {
  KILN_SKIP_WITHOUT_GPU();
  static const CustomOp noisy = [] {
    CustomOp op = register_op("testgraphs::noisy(Tensor x) -> Tensor",
                              {.eager = [](const std::vector<Tensor>& in, const ir::AttrList&) {
                                 return std::vector<Tensor>{in.at(0) + rand_like(in.at(0))};
                               }});
    register_lowering("cuda", "testgraphs::noisy",
                      Lowering::extern_call("noisy_on_the_device", [](const std::vector<Tensor>& in, const ir::AttrList&,
                                                                      const std::vector<Tensor>& out) {
                        Tensor(out.at(0)).copy_(in.at(0) + rand_like(in.at(0)));
                      }));
    return op;
  }();
  auto fn = [](const Tensor& x) { return noisy(x) * 2; };
  auto f = compile(fn, {.cuda_graphs = true});
  auto plain = compile(fn);
  const Tensor x = zeros({300}).to(kGpu);
  (void)plain(x);  // both traced before the seed is set; f's first call runs as usual
  (void)f(x);
  const int64_t captures = rt::cuda_graph_captures(), replays = rt::cuda_graph_replays();
  manual_seed(9);
  std::vector<Tensor> got;
  for (int i = 0; i < 4; ++i) got.push_back(f(x).cpu());
  EXPECT_EQ(rt::cuda_graph_captures(), captures);
  EXPECT_EQ(rt::cuda_graph_replays(), replays);
  for (int i = 1; i < 4; ++i) EXPECT_FALSE(equal(got[i], got[i - 1])) << "call " << i << " repeated call " << i - 1;
  EXPECT_TRUE(((got[3] >= 0) & (got[3] < 2)).all().item<bool>());
  // The failed capture gave back the draws it took: the same numbers as without graphs.
  manual_seed(9);
  for (int i = 0; i < 4; ++i) EXPECT_TRUE(equal(got[i], plain(x).cpu())) << "call " << i;
}

// What a graph cannot replay runs as usual, and stays correct: a step the driver will not
// capture (an integer convolution, staged through the host).
TEST(CudaGpu, CudaGraphsLeaveWhatTheyCannotReplay) {
  KILN_SKIP_WITHOUT_GPU();
  const int64_t captures = rt::cuda_graph_captures(), replays = rt::cuda_graph_replays();
  const Tensor img = randint(-3, 4, {1, 2, 6, 6}, kInt32), k = randint(-2, 3, {3, 2, 3, 3}, kInt32);
  auto conv = compile([](const Tensor& i, const Tensor& w) { return conv2d(i, w) + 1; }, {.cuda_graphs = true});
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(equal(conv(img.to(kGpu), k.to(kGpu)).cpu(), conv2d(img, k) + 1)) << "call " << i;
  EXPECT_EQ(rt::cuda_graph_captures(), captures);
  EXPECT_EQ(rt::cuda_graph_replays(), replays);
}

}  // namespace
}  // namespace kiln
