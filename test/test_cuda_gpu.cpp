// kiln/test/test_cuda_gpu.cpp — cuda tensors on a real device: copies, eager ops, compiled
// functions, the caching allocator, streams, threads and cuBLASLt.
//
// Every test compares with the same computation on the cpu (kiln's cpu backend, itself tested
// against the interpreter) or with known values. Without a GPU each test skips with the
// reason (the machine CI runs on); tests/test_cuda_device.cpp checks the errors there.
#include "runtime/cuda/cuda_device.h"
#include "runtime/program.h"
#include "kiln/kiln.h"
#include <cmath>

#include "test_support/make.h"
#include "test_support/check.h"

#include <gtest/gtest.h>

#include <atomic>
#include <functional>
#include <limits>
#include <string>
#include <thread>
#include <vector>

namespace kiln {
namespace {

#define KILN_SKIP_WITHOUT_GPU() \
  if (!cuda::is_available()) GTEST_SKIP() << "no CUDA device: " << cuda::unavailable_reason()

using test::kGpu;

using test::error_of;

// "" when `got` has want's dtype and sizes and every element is within atol + rtol * |want|
// (NaN matching NaN); else the first difference.
std::string diff(const Tensor& want, const Tensor& got, double rtol, double atol) {
  if (want.dtype() != got.dtype()) return "dtype " + std::string(dtype_name(got.dtype()));
  if (want.sizes().vec() != got.sizes().vec()) return "sizes " + shape_str(got.sizes());
  const std::vector<double> w = want.to(kDouble).to_vector<double>(), g = got.to(kDouble).to_vector<double>();
  for (size_t i = 0; i < w.size(); ++i) {
    const bool ok = (std::isnan(w[i]) && std::isnan(g[i])) || w[i] == g[i] || std::abs(w[i] - g[i]) <= atol + rtol * std::abs(w[i]);
    if (!ok) return "element " + std::to_string(i) + " is " + std::to_string(g[i]) + ", expected " + std::to_string(w[i]);
  }
  return "";
}

void expect_close(const Tensor& want, const Tensor& got, double rtol = 1e-5, double atol = 1e-6) {
  ASSERT_TRUE(got.defined());
  EXPECT_EQ(got.device(), Device()) << "compare host copies";
  const std::string d = diff(want, got, rtol, atol);
  EXPECT_TRUE(d.empty()) << d;
}

Tensor seq(std::vector<int64_t> shape, ScalarType dt) {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  return (arange(n, kDouble) * 0.75 - 2.5).reshape(shape).to(dt);
}

TEST(CudaGpu, CopiesRoundTripEveryDtype) {
  KILN_SKIP_WITHOUT_GPU();
  for (ScalarType dt : {kBool, kUInt8, kInt8, kInt16, kInt32, kInt64, kHalf, kBFloat16, kFloat, kDouble}) {
    SCOPED_TRACE(dtype_name(dt));
    const Tensor x = seq({5, 7}, dt);
    const Tensor d = x.cuda();
    EXPECT_TRUE(d.is_cuda());
    EXPECT_EQ(d.device(), kGpu);
    EXPECT_EQ(d.dtype(), dt);
    expect_close(x, d.cpu(), 0, 0);
    // A non-contiguous source, both ways.
    const Tensor xt = x.t();
    expect_close(xt.contiguous(), xt.cuda().cpu(), 0, 0);
    expect_close(xt.contiguous(), d.t().cpu(), 0, 0);
  }
  // Between dtypes on the device, and to(options).
  const Tensor x = seq({3, 4}, kFloat);
  expect_close(x.to(kHalf), x.cuda().to(kHalf).cpu(), 0, 0);
  expect_close(x.to(kInt32), x.to(TensorOptions().device(kGpu).dtype(kInt32)).cpu(), 0, 0);
}

TEST(CudaGpu, PrintingMatchesPyTorch) {
  KILN_SKIP_WITHOUT_GPU();
  EXPECT_EQ(arange(3).cuda().str(), "tensor([0, 1, 2], device='cuda:0')");
  EXPECT_EQ(ones({2}, kHalf).cuda().str(), "tensor([1., 1.], device='cuda:0', dtype=torch.float16)");
  EXPECT_EQ(tensor({2.5}).cuda().sum().item<double>(), 2.5);
}

TEST(CudaGpu, FactoriesOnTheDevice) {
  KILN_SKIP_WITHOUT_GPU();
  const Tensor z = zeros({4, 3}, TensorOptions().device(kGpu));
  EXPECT_EQ(z.device(), kGpu);
  expect_close(zeros({4, 3}), z.cpu(), 0, 0);
  expect_close(full({2, 2}, 7, kInt64), full({2, 2}, 7, TensorOptions(kInt64).device(kGpu)).cpu(), 0, 0);
  // Fills are memsets of the value's bit pattern (1, 2 or 4 bytes), or a generated kernel for
  // an 8-byte value whose halves differ; aranges a generated kernel, at any start and step.
  for (ScalarType dt : {kFloat, kDouble, kHalf, kBFloat16, kInt8, kInt32, kInt64, kBool}) {
    SCOPED_TRACE(dtype_name(dt));
    for (double v : {0.0, 1.0, -2.5, 3.0e5}) {
      // A value the dtype cannot hold (3e5 as f16 or i8) is refused on the device as on the cpu.
      const std::string refused = test::error_of([&] { (void)full({3, 1000}, v, dt); });
      if (refused != "<no error>") {
        EXPECT_EQ(test::error_of([&] { (void)full({3, 1000}, v, TensorOptions(dt).device(kGpu)); }), refused) << v;
        continue;
      }
      const Tensor want = full({3, 1000}, v, dt);
      const Tensor got = full({3, 1000}, v, TensorOptions(dt).device(kGpu));
      EXPECT_EQ(got.device(), kGpu);
      expect_close(want, got.cpu(), 0, 0);
    }
    if (dt == kBool) continue;
    expect_close(arange(0, 5000, 1, TensorOptions(dt)), arange(0, 5000, 1, TensorOptions(dt).device(kGpu)).cpu(), 0, 0);
    for (int64_t start : {3, 4, 100})
      expect_close(arange(start, start + 70, 2, TensorOptions(dt)),
                   arange(start, start + 70, 2, TensorOptions(dt).device(kGpu)).cpu(), 0, 0);
  }
  expect_close(arange(0.5, 9.0, 0.25), arange(0.5, 9.0, 0.25, TensorOptions().device(kGpu)).cpu(), 0, 0);
  // Random draws: the same Philox stream as the cpu.
  manual_seed(123);
  const Tensor a = randn({64});
  manual_seed(123);
  const Tensor b = randn({64}, TensorOptions().device(kGpu));
  expect_close(a, b.cpu(), 0, 0);
}

// copy_ into a strided device view is a kernel storing with the view's strides (a column, a
// transpose, every other column; converted and broadcast sources; a source sharing the view's
// memory), and only the view's elements change.
TEST(CudaGpu, CopiesIntoStridedViewsStayOnTheDevice) {
  KILN_SKIP_WITHOUT_GPU();
  manual_seed(8);
  const Tensor m = randn({64, 48});
  const Tensor col = randn({64}).to(kDouble), rows = randn({48});
  Tensor h = m.clone(), d = m.cuda();
  h.select(1, 5).copy_(col);
  d.select(1, 5).copy_(col.cuda());
  h.t().slice(0, 0, 48, 2).copy_(rows.expand({64, 48}).t().slice(0, 0, 48, 2));
  d.t().slice(0, 0, 48, 2).copy_(rows.cuda().expand({64, 48}).t().slice(0, 0, 48, 2));
  h.select(1, 7).copy_(h.select(1, 6));  // the source shares the view's memory
  d.select(1, 7).copy_(d.select(1, 6));
  h.select(1, 9).copy_(col);  // a host source
  d.select(1, 9).copy_(col);
  expect_close(h, d.cpu(), 0, 0);
}

TEST(CudaGpu, EagerOpsMatchTheCpu) {
  KILN_SKIP_WITHOUT_GPU();
  manual_seed(1);
  const Tensor a = randn({33, 257}), b = randn({257});
  const Tensor da = a.cuda(), db = b.cuda();
  expect_close(a + b, (da + db).cpu());
  expect_close(a * 2 - b, (da * 2 - db).cpu());
  expect_close(exp(a), exp(da).cpu(), 2e-6, 1e-6);
  expect_close(softmax(a, -1), softmax(da, -1).cpu(), 1e-5, 1e-7);
  expect_close(a.sum({1}), da.sum({1}).cpu(), 1e-5, 1e-4);
  expect_close(a.sum({0}), da.sum({0}).cpu(), 1e-5, 1e-4);
  expect_close(a.sum(), da.sum().cpu(), 1e-5, 1e-3);
  expect_close(a.argmax(1), da.argmax(1).cpu(), 0, 0);
  expect_close(layer_norm(a, {257}), layer_norm(da, {257}).cpu(), 1e-4, 1e-5);
  expect_close(a.t().contiguous(), da.t().contiguous().cpu(), 0, 0);
  expect_close(cat({a, a}, 0), cat({da, da}, 0).cpu(), 0, 0);
  // In place, through views.
  Tensor h = a.clone();
  Tensor d = da.clone();
  h.slice(1, 0, 10).mul_(3);
  d.slice(1, 0, 10).mul_(3);
  expect_close(h, d.cpu(), 0, 0);
  // Broadcasts of symbolic sizes take 4-lane vectors when the row length, the strides and the
  // offsets are multiples of 4 at run time, one point a thread otherwise: every case agrees.
  for (int64_t width : {256, 257, 260}) {
    const Tensor m = randn({9, width}), v = randn({width});
    const Tensor dm = m.cuda(), dv = v.cuda();
    expect_close(m + v, (dm + dv).cpu(), 0, 0);
    expect_close(m.slice(1, 4, width) * v.slice(0, 4, width), (dm.slice(1, 4, width) * dv.slice(0, 4, width)).cpu(), 0, 0);
    expect_close(m.slice(1, 1, width) - v.slice(0, 0, width - 1), (dm.slice(1, 1, width) - dv.slice(0, 0, width - 1)).cpu(), 0, 0);
    expect_close(m.slice(0, 1, 9) + v, (dm.slice(0, 1, 9) + dv).cpu(), 0, 0);
  }
  // A cpu 0-dim tensor joins as a scalar; a cpu tensor with dims is refused.
  expect_close(a + scalar_tensor(2.0), (da + scalar_tensor(2.0)).cpu());
  EXPECT_NE(error_of([&] { (void)(da + b); }).find("Expected all tensors to be on the same device"), std::string::npos);
}

// Indexing ops with every operand on the device (the op database's entries capture their index
// tensors on the cpu, which a cuda run refuses as PyTorch does).
// ctc_loss on the device, its targets and lengths on the host (as PyTorch allows) or the device.
TEST(CudaGpu, CtcLossTakesHostTargets) {
  KILN_SKIP_WITHOUT_GPU();
  manual_seed(8);
  const Tensor lp = log_softmax(randn({6, 2, 4}), 2);
  const Tensor targets = tensor({1, 2, 2, 3, 1, 0}, kInt64).reshape({2, 3});
  const Tensor il = tensor({6, 5}, kInt64), tl = tensor({3, 2}, kInt64);
  const Tensor want = ctc_loss(lp, targets, il, tl, 0, "none");
  expect_close(want, ctc_loss(lp.cuda(), targets, il, tl, 0, "none").cpu(), 1e-5, 1e-6);
  expect_close(want, ctc_loss(lp.cuda(), targets.cuda(), il.cuda(), tl.cuda(), 0, "none").cpu(), 1e-5, 1e-6);
}

TEST(CudaGpu, IndexingOpsOnTheDevice) {
  KILN_SKIP_WITHOUT_GPU();
  manual_seed(6);
  const Tensor x = randn({6, 5});
  const Tensor idx = tensor({0, 4, 2, 2, 1, 3, 0, 0, 4, 1, 2, 3}, kInt64).reshape({6, 2});
  const Tensor rows = tensor({5, 0, 3}, kInt64);
  const Tensor dx = x.cuda(), didx = idx.cuda(), drows = rows.cuda();
  expect_close(x.gather(1, idx), dx.gather(1, didx).cpu(), 0, 0);
  expect_close(x.scatter(1, idx, 7.0), dx.scatter(1, didx, 7.0).cpu(), 0, 0);
  expect_close(x.scatter_add(1, idx, ones({6, 2})), dx.scatter_add(1, didx, ones({6, 2}).cuda()).cpu(), 1e-6, 1e-6);
  expect_close(x.index_select(0, rows), dx.index_select(0, drows).cpu(), 0, 0);
  expect_close(masked_fill(x, x > 0, -1.0), masked_fill(dx, dx > 0, -1.0).cpu(), 0, 0);
  expect_close(embedding(x, rows), embedding(dx, drows).cpu(), 0, 0);
  expect_close(index(x, {rows}), index(dx, {drows}).cpu(), 0, 0);
  expect_close(index(x, {std::nullopt, rows.remainder(5)}), index(dx, {std::nullopt, drows.remainder(5)}).cpu(), 0, 0);
  const Tensor target = tensor({4, 0, 1, 3, 2, 2}, kInt64);
  expect_close(cross_entropy(x, target), cross_entropy(dx, target.cuda()).cpu(), 1e-5, 1e-6);
  auto ce = compile([](const Tensor& l, const Tensor& t) { return cross_entropy(l, t); });
  expect_close(ce(x, target), ce(dx, target.cuda()).cpu(), 1e-5, 1e-6);
  // gather and index_select read in a kernel: an index out of bounds faults there, and the
  // op's error (the interpreter's words) is raised once the launch is over.
  const Tensor bad = tensor({0, 1, 7, 2, 3, 4}, kInt64).reshape({6, 1}).cuda();
  const std::string oob =
      "[gather] index 7 is out of bounds for dimension 1 with size 5 (reported by a cuda kernel at the next synchronization)";
  EXPECT_EQ(error_of([&] { (void)dx.gather(1, bad).cpu(); }), oob);
  auto cg = compile([](const Tensor& a, const Tensor& i) { return a.gather(1, i) * 2; });
  EXPECT_EQ(error_of([&] { (void)cg(dx, bad).cpu(); }), oob);
  expect_close(x.gather(1, idx) * 2, cg(dx, didx).cpu(), 0, 0);  // and it keeps working
  // An index smaller than self outside `dim` (and than src): kernels that check those
  // coordinates, not the host (their sizes differ, so the eager program cannot prove them).
  const int64_t staged = rt::staged_steps();
  const Tensor short_idx = idx.slice(0, 0, 4).contiguous(), dshort = short_idx.cuda(), wide_src = randn({6, 3});
  expect_close(x.gather(1, short_idx), dx.gather(1, dshort).cpu(), 0, 0);
  expect_close(x.scatter_add(1, short_idx, wide_src), dx.scatter_add(1, dshort, wide_src.cuda()).cpu(), 1e-6, 1e-6);
  expect_close(x.scatter(0, short_idx.remainder(6), wide_src), dx.scatter(0, dshort.remainder(6), wide_src.cuda()).cpu(), 0, 0);
  EXPECT_EQ(rt::staged_steps(), staged) << "an index op with a smaller index was staged through the host";
  // PyTorch's 0-dim operands (1-element views, frontend/ops_index_scatter.cpp): kernels too.
  const Tensor s0 = scalar_tensor(5.0), i0 = scalar_tensor(0, kInt64), ds0 = s0.cuda(), di0 = i0.cuda();
  expect_close(s0.gather(0, i0), ds0.gather(0, di0).cpu(), 0, 0);
  expect_close(s0.scatter(0, i0, 7.0), ds0.scatter(0, di0, 7.0).cpu(), 0, 0);
  expect_close(x.flatten().gather(0, i0), dx.flatten().gather(0, di0).cpu(), 0, 0);
  expect_close(s0.index_select(0, i0), ds0.index_select(0, di0).cpu(), 0, 0);
  EXPECT_EQ(rt::staged_steps(), staged) << "an index op with a 0-dim operand was staged through the host";
  // Along an empty dim a failed check has no position to fall back on: the op's error, with
  // the access skipped (CudaEmit.AccessesAtAPositionCheckedAgainstABoundOfZeroAreGuarded shows
  // the guard; here a 0-byte allocation still has room, so nothing would fault without it).
  const Tensor dempty = zeros({6, 0}).cuda(), dzero = zeros({6, 1}, kInt64).cuda();
  EXPECT_EQ(error_of([&] { (void)dempty.gather(1, dzero).cpu(); }),
            "[gather] index 0 is out of bounds for dimension 1 with size 0 (reported by a cuda kernel at the next synchronization)");
  const auto [u, inv, counts] = unique(idx, true, true, true);
  const auto [du, dinv, dcounts] = unique(didx, true, true, true);
  expect_close(u, du.cpu(), 0, 0);
  expect_close(inv, dinv.cpu(), 0, 0);
  expect_close(counts, dcounts.cpu(), 0, 0);
}

// A row's max and sum of exponentials in one pass (passes/online_softmax.h): cross_entropy and
// log_softmax and softmax agree with the cpu's two passes on rows of every kind the pairs must combine
// right: a NaN, a +inf, rows of -inf (whole, leading, all but one), rising values (a new max
// at every element, each rescaling the sum), falling ones, large magnitudes; at widths that
// leave several items per thread, and 32000 (32 per thread, no row kept in registers).
TEST(CudaGpu, OnePassRowsAgreeWithTwoPasses) {
  KILN_SKIP_WITHOUT_GPU();
  manual_seed(3);
  const double inf = std::numeric_limits<double>::infinity(), nan = std::nan("");
  for (int64_t width : {3000, 32000}) {
    SCOPED_TRACE(width);
    std::vector<Tensor> rows;
    const Tensor r = randn({width}, kDouble);
    const Tensor pos = arange(width, kDouble);
    rows.push_back(r);
    rows.push_back(r.index_fill(0, tensor({100}, kInt64), nan));
    rows.push_back(r.index_fill(0, tensor({5}, kInt64), inf));
    rows.push_back(full({width}, -inf, kDouble));
    rows.push_back(where(pos < 700, full({width}, -inf, kDouble), r));
    rows.push_back(where(pos < width - 1, full({width}, -inf, kDouble), r));
    rows.push_back(pos * 0.01);
    rows.push_back(pos * -0.01);
    rows.push_back(r * 80);
    rows.push_back(r.index_fill(0, tensor({1, 9}, kInt64), -inf).index_fill(0, tensor({2}, kInt64), inf));
    const Tensor x = stack(rows).to(kFloat);
    const int64_t n = x.size(0);
    const Tensor target = randint(0, width, {n});
    const Tensor dx = x.cuda(), dt = target.cuda();

    auto ce = compile([](const Tensor& l, const Tensor& t) { return cross_entropy(l, t, std::nullopt, "none"); });
    expect_close(cross_entropy(x, target, std::nullopt, "none"), ce(dx, dt).cpu(), 1e-5, 1e-5);
    EXPECT_NE(ce.explain(dx, dt).find("sum_exp"), std::string::npos) << "one pass over each row";
    auto ls = compile([](const Tensor& l) { return log_softmax(l, -1); });
    expect_close(log_softmax(x, -1), ls(dx).cpu(), 1e-5, 1e-5);
    // f16 results: the max stage stores the rounded inputs, which both stages then read.
    auto lh = compile([](const Tensor& l) { return log_softmax(l.to(kHalf), -1); });
    expect_close(log_softmax(x.to(kHalf), -1), lh(dx).cpu(), 1e-3, 1e-3);
    EXPECT_NE(lh.explain(dx).find("sum_exp"), std::string::npos);
    // softmax computes its exponentials again in the normalizing stage, in f32 and f16.
    auto sm = compile([](const Tensor& l) { return softmax(l, -1); });
    expect_close(softmax(x, -1), sm(dx).cpu(), 1e-5, 1e-7);
    EXPECT_NE(sm.explain(dx).find("sum_exp"), std::string::npos);
    auto sh = compile([](const Tensor& l) { return softmax(l.to(kHalf), -1); });
    expect_close(softmax(x.to(kHalf), -1), sh(dx).cpu(), 1e-3, 1e-4);
    EXPECT_NE(sh.explain(dx).find("sum_exp"), std::string::npos);
    // bf16 logits, and the loss's gradient, whose softmax keeps its two passes.
    const Tensor xb = x.narrow(0, 0, 1).to(kBFloat16), tb = target.narrow(0, 0, 1);
    expect_close(cross_entropy(xb, tb), ce(xb.cuda(), tb.cuda()).cpu().reshape({}), 1e-2, 1e-2);
    const Tensor xg = x.narrow(0, 0, 1).clone().requires_grad_(true);
    const Tensor dxg = xg.detach().cuda().requires_grad_(true);
    auto loss = compile([](const Tensor& l, const Tensor& t) { return cross_entropy(l, t); });
    cross_entropy(xg, tb).backward();
    loss(dxg, tb.cuda()).backward();
    expect_close(xg.grad(), dxg.grad().cpu(), 1e-5, 1e-7);
  }
}

TEST(CudaGpu, CatTakesALegacyEmptyTensorFromAnotherDevice) {
  // PyTorch does not check a skipped legacy empty tensor's device: a cpu one that requires grad
  // joins a cuda cat, the result requires grad, and its gradient is empty, on the cpu.
  KILN_SKIP_WITHOUT_GPU();
  Tensor e = empty({0}, TensorOptions(kDouble)).requires_grad_(true);
  const Tensor flags = ones({2}, TensorOptions(kDouble).device(kGpu));
  const Tensor y = cat({flags, e}, 0);
  ASSERT_TRUE(y.requires_grad());
  EXPECT_EQ(y.device(), kGpu);
  EXPECT_EQ(y.cpu().to_vector<double>(), (std::vector<double>{1, 1}));
  y.sum().backward();
  ASSERT_TRUE(e.grad().defined());
  EXPECT_EQ(e.grad().sizes().vec(), std::vector<int64_t>{0});
  EXPECT_TRUE(e.grad().device().is_cpu());
  // Only legacy empties: the result is on the first one's device.
  Tensor f = empty({0}, TensorOptions(kFloat).device(kGpu)).requires_grad_(true);
  const Tensor z = cat({f, e}, 0);
  EXPECT_EQ(z.device(), kGpu);
  EXPECT_EQ(z.dtype(), kDouble);
  EXPECT_TRUE(z.requires_grad());
}

TEST(CudaGpu, CompiledFunctionsRunOnTheInputsDevice) {
  KILN_SKIP_WITHOUT_GPU();
  auto f = compile([](const Tensor& x, const Tensor& w) { return softmax(gelu(x * w, "tanh") + 1, -1); });
  manual_seed(2);
  const Tensor x = randn({128, 1000}), w = randn({1000});
  const Tensor want = f(x, w);
  const Tensor got = f(x.cuda(), w.cuda());
  EXPECT_EQ(got.device(), kGpu);
  expect_close(want, got.cpu(), 1e-5, 1e-7);
  EXPECT_EQ(f.stats().compiles, 2);  // one per device: the guards pin it
  // Dynamic::True: one compile serves every batch size.
  auto g = compile([](const Tensor& x) { return (x - x.mean({1}, true)).pow(2).sum({1}); },
                   CompileOptions{.dynamic = Dynamic::True});
  for (int64_t n : {3, 17, 300}) {
    const Tensor y = randn({n, 129});
    expect_close(g(y), g(y.cuda()).cpu(), 1e-5, 1e-4);
  }
}

TEST(CudaGpu, MatmulThroughCublasLt) {
  KILN_SKIP_WITHOUT_GPU();
  manual_seed(3);
  const Tensor a = randn({65, 130}), b = randn({130, 47});
  expect_close(a.matmul(b), a.cuda().matmul(b.cuda()).cpu(), 1e-4, 1e-4);
  expect_close(a.matmul(b), a.t().contiguous().t().cuda().matmul(b.cuda()).cpu(), 1e-4, 1e-4);  // a transposed view
  expect_close(a.t().matmul(a), a.cuda().t().matmul(a.cuda()).cpu(), 1e-4, 1e-3);
  const Tensor x = randn({4, 33, 20}), y = randn({4, 20, 9});
  expect_close(x.matmul(y), x.cuda().matmul(y.cuda()).cpu(), 1e-4, 1e-4);
  // Operands cuBLASLt cannot read in place (an expanded row, a batch walked backwards) are
  // copied on the device first.
  const Tensor row = randn({1, 130});
  expect_close(row.expand({65, 130}).matmul(b), row.cuda().expand({65, 130}).matmul(b.cuda()).cpu(), 1e-4, 1e-4);
  expect_close(x.flip({0}).matmul(y), x.cuda().flip({0}).matmul(y.cuda()).cpu(), 1e-4, 1e-4);
  // f16 and bf16 with f32 accumulation; f64 on cuBLASLt's f64 path, eager and compiled, batched
  // and with an expanded operand.
  expect_close(a.to(kHalf).matmul(b.to(kHalf)), a.to(kHalf).cuda().matmul(b.to(kHalf).cuda()).cpu(), 2e-3, 2e-2);
  expect_close(a.to(kBFloat16).matmul(b.to(kBFloat16)), a.to(kBFloat16).cuda().matmul(b.to(kBFloat16).cuda()).cpu(),
               1.6e-2, 1e-1);
  const Tensor a64 = a.to(kDouble), b64 = b.to(kDouble), x64 = x.to(kDouble), y64 = y.to(kDouble);
  expect_close(a64.matmul(b64), a64.cuda().matmul(b64.cuda()).cpu(), 1e-12, 1e-12);
  expect_close(x64.matmul(y64), x64.cuda().matmul(y64.cuda()).cpu(), 1e-12, 1e-12);
  expect_close(row.to(kDouble).expand({65, 130}).matmul(b64),
               row.to(kDouble).cuda().expand({65, 130}).matmul(b64.cuda()).cpu(), 1e-12, 1e-12);
  auto mm64 = compile([](const Tensor& p, const Tensor& q) { return p.matmul(q) * 2; });
  expect_close(a64.matmul(b64) * 2, mm64(a64.cuda(), b64.cuda()).cpu(), 1e-12, 1e-12);
  EXPECT_NE(mm64.explain(a64.cuda(), b64.cuda()).find("[cublaslt]"), std::string::npos);
  // linear with bias and gelu, compiled.
  const Tensor w = randn({64, 130}), bias = randn({64});
  auto mlp = compile([](const Tensor& x, const Tensor& w, const Tensor& b) { return gelu(linear(x, w, b)); });
  expect_close(mlp(a, w, bias), mlp(a.cuda(), w.cuda(), bias.cuda()).cpu(), 1e-4, 1e-4);
}

// linear's bias and activation in cuBLASLt's epilogue (passes/matmul_epilogues.h) against the
// cpu, in f32, f16 and bf16: the bias alone, gelu's tanh form, and relu (a kernel after the
// bias epilogue, which keeps a NaN as torch.relu does; cuBLASLt's RELU epilogue would not). The op itself, eagerly: operands cuBLASLt cannot read in place (an expanded
// row) and an empty sum (k = 0) are computed by parts.
TEST(CudaGpu, LinearEpiloguesOnCublasLt) {
  KILN_SKIP_WITHOUT_GPU();
  manual_seed(4);
  const Tensor x = randn({70, 96}), w = randn({40, 96}) * 0.1, b = randn({40});
  auto lin = compile([](const Tensor& x, const Tensor& w, const Tensor& b) { return linear(x, w, b); });
  auto relu_lin = compile([](const Tensor& x, const Tensor& w, const Tensor& b) { return relu(linear(x, w, b)); });
  auto gelu_lin = compile([](const Tensor& x, const Tensor& w, const Tensor& b) { return gelu(linear(x, w, b), "tanh"); });
  for (ScalarType dt : {kFloat, kHalf, kBFloat16}) {
    SCOPED_TRACE(dtype_name(dt));
    const double tol = dt == kFloat ? 1e-4 : dt == kHalf ? 4e-3 : 3e-2;
    const Tensor xd = x.to(dt), wd = w.to(dt), bd = b.to(dt), xg = xd.cuda(), wg = wd.cuda(), bg = bd.cuda();
    expect_close(lin(xd, wd, bd), lin(xg, wg, bg).cpu(), tol, tol);
    expect_close(relu_lin(xd, wd, bd), relu_lin(xg, wg, bg).cpu(), tol, tol);
    expect_close(gelu_lin(xd, wd, bd), gelu_lin(xg, wg, bg).cpu(), tol, tol);
    // A 3-D input: the product's rows are reshaped back after the epilogue.
    const Tensor x3 = xd.reshape({7, 10, 96});
    expect_close(gelu_lin(x3, wd, bd), gelu_lin(x3.cuda(), wg, bg).cpu(), tol, tol);
  }
  const Tensor xn = cat({full({1, 96}, std::nan("")), x.narrow(0, 1, 69)}, 0);
  const Tensor rn = relu_lin(xn.cuda(), w.cuda(), b.cuda()).cpu();
  EXPECT_TRUE(std::isnan(rn[0][0].item<float>())) << "relu of NaN is NaN";
  expect_close(relu_lin(xn, w, b), rn, 1e-4, 1e-4);
  const Tensor row = randn({1, 96});
  expect_close(addmm_activation(b, row.expand({70, 96}), w.t(), "gelu_tanh"),
               addmm_activation(b.cuda(), row.cuda().expand({70, 96}), w.cuda().t(), "gelu_tanh").cpu(), 1e-4, 1e-4);
  const Tensor e = randn({70, 0}), f = randn({0, 40});
  expect_close(addmm_activation(b, e, f, "relu"), addmm_activation(b.cuda(), e.cuda(), f.cuda(), "relu").cpu());
}

// Convolutions on cuDNN (runtime/cuda/cuda_conv.h), eager and compiled, against the cpu: 1-3
// spatial dims, groups, strides, padding, dilation and a bias; a transposed one with an output
// padding; f16, bf16 and f64; a channels-last input; and a training step's gradients.
TEST(CudaGpu, ConvolutionsOnCudnn) {
  KILN_SKIP_WITHOUT_GPU();
  manual_seed(6);
  const Tensor x = randn({2, 4, 13, 11}), w = randn({6, 2, 3, 3}) * 0.2, b = randn({6});
  auto conv = [](const Tensor& x, const Tensor& w, const Tensor& b) { return conv2d(x, w, b, {2, 1}, {1, 2}, {1, 2}, 2); };
  expect_close(conv(x, w, b), conv(x.cuda(), w.cuda(), b.cuda()).cpu(), 1e-4, 1e-4);
  auto compiled = compile(conv);
  expect_close(conv(x, w, b), compiled(x.cuda(), w.cuda(), b.cuda()).cpu(), 1e-4, 1e-4);
  expect_close(conv(x, w, b), conv(x.cuda().permute({0, 2, 3, 1}).contiguous().permute({0, 3, 1, 2}), w.cuda(), b.cuda()).cpu(), 1e-4, 1e-4);
  for (ScalarType dt : {kHalf, kBFloat16, kDouble}) {
    SCOPED_TRACE(dtype_name(dt));
    const double tol = dt == kDouble ? 1e-12 : dt == kHalf ? 5e-3 : 4e-2;
    expect_close(conv(x.to(dt), w.to(dt), b.to(dt)), conv(x.to(dt).cuda(), w.to(dt).cuda(), b.to(dt).cuda()).cpu(), tol, tol);
  }
  const Tensor x1 = randn({3, 5, 20}), w1 = randn({7, 5, 4}) * 0.2;
  expect_close(conv1d(x1, w1, std::nullopt, {3}, {2}), conv1d(x1.cuda(), w1.cuda(), std::nullopt, {3}, {2}).cpu(), 1e-4, 1e-4);
  const Tensor x3 = randn({1, 3, 6, 7, 5}), w3 = randn({4, 3, 2, 3, 2}) * 0.2;
  expect_close(conv3d(x3, w3, std::nullopt, {1, 2, 1}, {1, 0, 1}), conv3d(x3.cuda(), w3.cuda(), std::nullopt, {1, 2, 1}, {1, 0, 1}).cpu(),
               1e-4, 1e-4);
  const Tensor xt = randn({2, 6, 5, 4}), wt = randn({6, 3, 3, 3}) * 0.2, bt = randn({6});
  auto tconv = [](const Tensor& x, const Tensor& w, const Tensor& b) {
    return conv_transpose2d(x, w, b, {2, 2}, {1, 0}, {1, 1}, 2);
  };
  expect_close(tconv(xt, wt, bt), tconv(xt.cuda(), wt.cuda(), bt.cuda()).cpu(), 1e-4, 1e-4);
  // Gradients: the backward convolutions are convolutions too.
  auto grads = [&](const Device& d) {
    Tensor xg = x.to(d).detach().requires_grad_(true), wg = w.to(d).detach().requires_grad_(true);
    conv(xg, wg, b.to(d)).pow(2).sum().backward();
    return std::pair{xg.grad().cpu(), wg.grad().cpu()};
  };
  const auto [gx, gw] = grads(Device());
  const auto [cx, cw] = grads(kGpu);
  expect_close(gx, cx, 1e-3, 1e-3);
  expect_close(gw, cw, 1e-3, 1e-3);
}

// Sorts on kiln's sort kernels (runtime/cuda/cuda_sort.h), eager and compiled, index for index
// the cpu's: NaNs, infinities, ties and -0.0 among the keys, both directions, every dtype class,
// a vocabulary-sized line (many tiles and merges), many short lines, a sort along dim 0 of a
// non-contiguous tensor, and topk / median / kthvalue on top; nothing is staged through the host.
TEST(CudaGpu, SortsOnTheDevice) {
  KILN_SKIP_WITHOUT_GPU();
  manual_seed(8);
  const int64_t staged = rt::staged_steps();
  auto hostile = [](std::vector<int64_t> sizes) {
    Tensor x = (randn(sizes) * 3).round() / 2;
    x = where(rand(sizes) < 0.05, full({}, std::nan("")), x);
    x = where(rand(sizes) < 0.03, full({}, -0.0), x);
    return where(rand(sizes) < 0.02, full({}, INFINITY), x);
  };
  const Tensor vocab = hostile({3, 50257}), shortl = hostile({4099, 7}), square = hostile({300, 257});
  for (const Tensor& x : {vocab, shortl, square})
    for (bool desc : {false, true}) {
      SCOPED_TRACE(::testing::Message() << x.size(0) << "x" << x.size(1) << (desc ? " descending" : ""));
      EXPECT_TRUE(equal(argsort(x, -1, desc), argsort(x.cuda(), -1, desc).cpu()));
      for (ScalarType dt : {kHalf, kBFloat16, kDouble, kInt32, kInt8, kUInt8}) {
        SCOPED_TRACE(dtype_name(dt));
        const Tensor y = dt == kInt32 || dt == kInt8 || dt == kUInt8 ? nan_to_num(x, 0.0).clamp(-100, 100).to(dt) : x.to(dt);
        EXPECT_TRUE(equal(argsort(y, -1, desc), argsort(y.cuda(), -1, desc).cpu()));
      }
    }
  const Tensor b = rand({33, 900}) < 0.5;
  EXPECT_TRUE(equal(argsort(b, 1), argsort(b.cuda(), 1).cpu()));
  const Tensor t = square.t();  // dim 0 of a transposed tensor
  EXPECT_TRUE(equal(argsort(t, 0, true), argsort(t.cuda(), 0, true).cpu()));
  auto fn = [](const Tensor& x) {
    auto [v, i] = sort(x, -1, true);
    auto [tv, ti] = topk(x, 5, -1);
    return std::vector<Tensor>{v, i, tv, ti, std::get<0>(median(x, -1)), std::get<0>(kthvalue(x, 3, -1))};
  };
  const Tensor finite = nan_to_num(vocab, 0.0);
  const std::vector<Tensor> want = fn(finite), eager = fn(finite.cuda());
  const std::vector<Tensor> compiled = compile(fn)(finite.cuda());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_TRUE(equal(want[i], eager[i].cpu())) << "eager output " << i;
    EXPECT_TRUE(equal(want[i], compiled[i].cpu())) << "compiled output " << i;
  }
  EXPECT_EQ(rt::staged_steps(), staged) << "a sort was staged through the host";
}

TEST(CudaGpu, AllocatorReusesBlocksAndReportsOutOfMemory) {
  KILN_SKIP_WITHOUT_GPU();
  cuda::synchronize();
  cuda::empty_cache();
  const cuda::MemoryStats s0 = cuda::memory_stats();
  { const Tensor t = empty({1 << 20}, TensorOptions().device(kGpu)); }
  const cuda::MemoryStats s1 = cuda::memory_stats();
  EXPECT_EQ(s1.allocated_bytes, s0.allocated_bytes);
  EXPECT_GE(s1.reserved_bytes, s0.reserved_bytes + (4 << 20));  // cached, not returned
  { const Tensor t = empty({1 << 20}, TensorOptions().device(kGpu)); }
  const cuda::MemoryStats s2 = cuda::memory_stats();
  EXPECT_EQ(s2.driver_allocations, s1.driver_allocations);  // the same block again
  EXPECT_EQ(s2.cache_hits, s1.cache_hits + 1);
  EXPECT_GE(s2.peak_allocated_bytes, 4 << 20);
  cuda::empty_cache();
  // What stays held beyond live blocks is the free part of segments that hold live blocks.
  const cuda::MemoryStats s3 = cuda::memory_stats();
  EXPECT_EQ(s3.reserved_bytes - s3.allocated_bytes, s3.inactive_split_bytes);
  // Out of memory: the cache is emptied, the request retried once, then a clear error.
  const std::string e = error_of([] { (void)empty({int64_t{1} << 42}, TensorOptions().device(kGpu)); });
  EXPECT_NE(e.find("out of memory on cuda:0: tried to allocate"), std::string::npos) << e;
  EXPECT_GE(cuda::memory_stats().oom_retries, 1);
  // And the device still works.
  expect_close(ones({3}) * 2, (ones({3}, TensorOptions().device(kGpu)) * 2).cpu(), 0, 0);
}

TEST(CudaGpu, AllocatorDefersAFreeRecordedOnAnotherStreamAndHonoursItsCap) {
  KILN_SKIP_WITHOUT_GPU();
  cuda::synchronize();
  const int64_t pending0 = cuda::memory_stats().pending_free_bytes;
  const cuda::Stream side = cuda::Stream::create();
  Tensor t = ones({1 << 20}, TensorOptions().device(kGpu));
  side.wait_stream(cuda::current_stream());
  Tensor u;
  {
    cuda::StreamGuard g(side);
    u = t * 2;  // queued on the side stream, reading t
    cuda::record_stream(t, side);
  }
  t = Tensor();  // t's block waits for the side stream's work before it is reused
  // Its block: 4 MiB, or up to 1 MiB more when best fit gave a free block too small to split.
  EXPECT_GE(cuda::memory_stats().pending_free_bytes, pending0 + (4 << 20));
  EXPECT_LE(cuda::memory_stats().pending_free_bytes, pending0 + (5 << 20));
  side.synchronize();
  (void)empty({1}, TensorOptions().device(kGpu));  // the next allocation finds the event done
  EXPECT_EQ(cuda::memory_stats().pending_free_bytes, pending0);
  {
    cuda::StreamGuard g(side);
    expect_close(full({1 << 20}, 2.0), u.cpu(), 0, 0);
  }
  EXPECT_NE(error_of([&] { cuda::record_stream(ones({2}), side); }).find("[record_stream] expected a cuda tensor"),
            std::string::npos);
  // A cap of 1% of the device: a 4 GiB request passes it and the error says so.
  cuda::set_per_process_memory_fraction(0.01);
  const std::string e = error_of([] { (void)empty({int64_t{1} << 30}, TensorOptions().device(kGpu)); });
  cuda::set_per_process_memory_fraction(1.0);
  EXPECT_NE(e.find("set_per_process_memory_fraction"), std::string::npos) << e;
  const std::string summary = cuda::memory_summary();
  EXPECT_NE(summary.find("kiln's cuda:0 memory"), std::string::npos) << summary;
  EXPECT_NE(summary.find("limit"), std::string::npos) << summary;
}

TEST(CudaGpu, TwoStreams) {
  KILN_SKIP_WITHOUT_GPU();
  manual_seed(4);
  const Tensor a = randn({1024, 512}), b = randn({1024, 512});
  const Tensor da = a.cuda(), db = b.cuda();
  cuda::synchronize();
  const cuda::Stream s1 = cuda::Stream::create(), s2 = cuda::Stream::create();
  EXPECT_FALSE(s1 == s2);
  Tensor r1, r2;
  {
    cuda::StreamGuard g(s1);
    EXPECT_EQ(cuda::current_stream(), s1);
    r1 = softmax(da * 3, -1);
  }
  {
    cuda::StreamGuard g(s2);
    r2 = (db + 1).sum({1});
  }
  EXPECT_EQ(cuda::current_stream(), cuda::Stream::default_stream());
  s1.synchronize();
  s2.synchronize();
  // A tensor made on one stream, read on another after wait_stream, without a host wait.
  Tensor made, read;
  {
    cuda::StreamGuard g(s1);
    made = da * 5;
  }
  {
    cuda::StreamGuard g(s2);
    s2.wait_stream(s1);
    read = made + 1;
  }
  s2.synchronize();
  expect_close(a * 5 + 1, read.cpu(), 1e-6, 1e-6);
  expect_close(softmax(a * 3, -1), r1.cpu(), 1e-5, 1e-7);
  expect_close((b + 1).sum({1}), r2.cpu(), 1e-5, 1e-4);
}

TEST(CudaGpu, ThreadsCallOneCompiledFunction) {
  KILN_SKIP_WITHOUT_GPU();
  auto f = compile([](const Tensor& x) { return relu(x) * 2 + x.amax({1}, true); });
  manual_seed(5);
  const Tensor x = randn({256, 300});
  const Tensor want = f(x);
  const Tensor dx = x.cuda();
  std::atomic<int> bad{0};
  std::vector<std::thread> ts;
  for (int t = 0; t < 4; ++t)
    ts.emplace_back([&] {
      for (int i = 0; i < 20; ++i) {
        const Tensor got = f(dx).cpu();
        if (!diff(want, got, 1e-6, 1e-6).empty()) ++bad;
      }
    });
  for (auto& t : ts) t.join();
  EXPECT_EQ(bad.load(), 0);
}

TEST(CudaGpu, DeviceErrorsAreClear) {
  KILN_SKIP_WITHOUT_GPU();
  auto on_cpu = compile([](const Tensor& x) { return x + 1; }, CompileOptions{.backend = "cpu"});
  const std::string wrong = error_of([&] { (void)on_cpu(ones({2}).cuda()); });
  EXPECT_NE(wrong.find("backend 'cpu' runs on the cpu, but an input is on cuda:0"), std::string::npos) << wrong;
  const std::string far = error_of([] { (void)ones({2}).to(Device("cuda:63")); });
  EXPECT_NE(far.find("device index 63 is out of range"), std::string::npos) << far;
  EXPECT_FALSE(cuda::get_device_name(0).empty());
}

}  // namespace
}  // namespace kiln
