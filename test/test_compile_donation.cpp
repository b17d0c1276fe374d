// kiln/test/test_compile_donation.cpp — buffer donation (passes/donate.h): an argument updated in
// place is computed straight into its own memory when nothing reads it afterwards (the plan
// says "in place of argN"), with the caller's results unchanged: over repeated calls, when
// another argument shares its memory (then it is computed in a copy), and when the kernel that
// writes it is not pointwise (then it is refused). The write still counts in the storage's
// version.
//
// The memory planner writes over a temporary the same way (passes/plan.cpp): a pointwise kernel
// that reads a product's result only where it writes its own (bias and activation) takes the
// product's memory, and a kernel that reads it elsewhere (a transpose) or a temporary read later
// does not.
#include "kiln/kiln.h"
#include "runtime/eager/eager.h"
#include "test_support/check.h"
#include "test_support/make.h"

#include <gtest/gtest.h>

#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace kiln {
namespace {

using test::mk;

TEST(CompileDonation, InPlaceUpdateIsComputedInTheArgumentsMemory) {
  auto f = compile([](Tensor a, const Tensor& b) {
    a.mul_(2).add_(b);
    return a.sum();
  });
  Tensor a = mk<float>({1, 2, 3}), b = mk<float>({10, 20, 30});
  const void* where = a.data_ptr();
  const uint64_t version = a.impl()->storage()->version();
  test::expect_exact(f(a, b), kFloat32, {72});
  test::expect_exact(a, kFloat32, {12, 24, 36});
  test::expect_exact(f(a, b), kFloat32, {204});  // a cache hit updates in place too
  test::expect_exact(a, kFloat32, {34, 68, 102});
  EXPECT_EQ(a.data_ptr(), where);
  EXPECT_GT(a.impl()->storage()->version(), version);  // autograd sees the writes
  const std::string plan = f.explain(a, b);
  EXPECT_NE(plan.find("in place of arg0"), std::string::npos) << plan;
  EXPECT_EQ(f.stats().compiles, 1);
}

// An updated argument that shares memory with another: the guards trace such a call apart, and
// its plan still computes the argument in place, so the runtime must find the shared memory and
// compute it in a copy for the overlapping read to see the old values. (Seventeen arguments, a
// list as kiln::optim passes them.)
TEST(CompileDonation, ArgumentSharingMemoryIsComputedInACopy) {
  // compile() of a function of a list of tensors, as kiln::optim's step is made.
  auto state = detail::make_compiled_state({});
  const detail::TraceFn fn = [](const std::vector<detail::ArgValue>& xs) {
    Tensor a = std::get<Tensor>(xs[0]);
    Tensor r = std::get<Tensor>(xs[16]);
    for (size_t i = 1; i < 16; ++i) r = r + std::get<Tensor>(xs[i]);
    a.add_(r);
    return std::vector<Tensor>{a.sum()};
  };
  auto f = [&](const std::vector<detail::ArgValue>& xs) { return detail::call_compiled(*state, xs, fn); };
  auto args = [](const Tensor& a, const Tensor& last) {
    std::vector<detail::ArgValue> xs{a};
    for (int i = 1; i < 16; ++i) xs.push_back(zeros({4}));
    xs.push_back(last);
    return xs;
  };
  // Distinct memory first: compiled with the donation.
  Tensor a = mk<float>({1, 2, 3, 4}), c = mk<float>({1, 1, 1, 1});
  f(args(a, c));
  test::expect_exact(a, kFloat32, {2, 3, 4, 5});
  // a = base[1:5] and the last argument base[0:4]: a[i] += base[i] must read base[i] before a's
  // write to base[i] (= a[i-1]) lands.
  Tensor base = mk<float>({1, 2, 3, 4, 5});
  Tensor head = base.slice(0, 1, 5), tail = base.slice(0, 0, 4);
  f(args(head, tail));
  test::expect_exact(base, kFloat32, {1, 3, 5, 7, 9});
  EXPECT_EQ(detail::compiled_stats(*state).compiles, 2);  // the guards' aliasing check
}

TEST(CompileDonation, RowKernelUpdateIsNotDonated) {
  auto f = compile([](Tensor a) {
    a.copy_(softmax(a, -1));
    return a.sum(-1);
  });
  Tensor a = mk<float>({0, 0, 0, 0}, {2, 2});
  test::expect_exact(f(a), kFloat32, {1, 1});
  test::expect_exact(a, kFloat32, {0.5, 0.5, 0.5, 0.5});
  const std::string plan = f.explain(a);
  EXPECT_EQ(plan.find("in place of"), std::string::npos) << plan;
}

// An argument that is a strided view (a column of a matrix, a transpose) updated in place: its
// kernel stores with the view's strides straight into the matrix (passes/lower.h,
// LowerOptions::donations), and the matrix's other elements keep their values.
TEST(CompileDonation, AStridedViewIsUpdatedInItsOwnMemory) {
  auto f = compile([](Tensor a, const Tensor& b) {
    a.mul_(2).add_(b);
    return a.sum();
  });
  Tensor m = mk<float>({0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, {4, 3});
  Tensor col = m.select(1, 1);
  const Tensor b = mk<float>({10, 20, 30, 40});
  const void* where = col.data_ptr();
  test::expect_exact(f(col, b), kFloat32, {144});
  test::expect_exact(m, kFloat32, {0, 12, 2, 3, 28, 5, 6, 44, 8, 9, 60, 11});
  test::expect_exact(f(col, b), kFloat32, {388});  // a cache hit, in place again
  test::expect_exact(m, kFloat32, {0, 34, 2, 3, 76, 5, 6, 118, 8, 9, 160, 11});
  EXPECT_EQ(col.data_ptr(), where);
  const std::string plan = f.explain(col, b);
  EXPECT_NE(plan.find("in place of arg0"), std::string::npos) << plan;
  // A transposed matrix, dense in another order.
  Tensor t = mk<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  auto g = compile([](Tensor a) {
    a.add_(1);
    return a.sum();
  });
  test::expect_exact(g(t.t()), kFloat32, {27});
  test::expect_exact(t, kFloat32, {2, 3, 4, 5, 6, 7});
  EXPECT_NE(g.explain(t.t()).find("in place of arg0"), std::string::npos) << g.explain(t.t());
  // The view and another argument share memory: computed in a copy laid out as the view, then
  // written back, with the values of the shared reads from before the write.
  auto h = compile([](Tensor a, const Tensor& b) {
    a.copy_(a * 2 + b);
    return a.sum();
  });
  Tensor n = mk<float>({1, 2, 3, 4, 5, 6}, {3, 2});
  test::expect_exact(h(n.select(1, 0), n.select(1, 0)), kFloat32, {27});
  test::expect_exact(n, kFloat32, {3, 2, 9, 4, 15, 6});
}

// An updated view that a library call then reads (a matrix product of its reshape) keeps the
// contiguous layout the call expects: only values that generated kernels read take a view's
// strides. An argument that overlaps itself (an expanded tensor) is never written in place.
TEST(CompileDonation, AStridedUpdateReadByALibraryCallOrOverlappingIsNotDonated) {
  auto f = compile([](Tensor a, const Tensor& w) {
    a.add_(1);
    return mm(a.reshape({3, 2}), w);
  });
  Tensor t = mk<float>({1, 2, 3, 4, 5, 6}, {3, 2});
  const Tensor w = mk<float>({1, 0, 2, 1}, {2, 2});
  Tensor e = t.clone();
  Tensor ea = e.t();
  ea.add_(1);
  const Tensor want = mm(ea.reshape({3, 2}), w);
  test::expect_exact(f(t.t(), w), kFloat32, test::doubles(want));
  test::expect_exact(t, kFloat32, test::doubles(e));
  const Tensor x = mk<float>({1, 2, 3});
  auto g = compile([](Tensor a) {
    a.add_(1);
    return a.sum();
  });
  const std::string eager = test::error_of([&] { x.clone().expand({4, 3}).add_(1); });
  const std::string compiled = test::error_of([&] { (void)g(x.clone().expand({4, 3})); });
  EXPECT_NE(compiled, "<no error>");
  EXPECT_EQ(compiled.find("internal error"), std::string::npos) << compiled;
  (void)eager;
}

// The eager copy into a strided view that a device's runtime uses (rt::eager_copy_into, what
// copy_ into a cuda view runs), here on the cpu: src's values, converted, broadcast, land in
// the view's elements of dst's memory and nowhere else, without a copy.
TEST(CompileDonation, EagerCopyIntoAStridedViewWritesInItsMemory) {
  Tensor m = zeros({4, 5});
  Tensor col = m.select(1, 3);
  const Tensor out = rt::eager_copy_into(col, mk<double>({1.5, 2.5, 3.5, 4.5}));
  EXPECT_EQ(out.impl(), col.impl());
  test::expect_exact(m, kFloat32, {0, 0, 0, 1.5, 0, 0, 0, 0, 2.5, 0, 0, 0, 0, 3.5, 0, 0, 0, 0, 4.5, 0});
  Tensor t = zeros({3, 2}, kInt64);
  (void)rt::eager_copy_into(t.t(), mk<int64_t>({7, 8, 9}).expand({2, 3}));  // a broadcast source
  test::expect_exact(t, kInt64, {7, 7, 8, 8, 9, 9});
  Tensor wide = zeros({2, 6});
  (void)rt::eager_copy_into(wide.slice(1, 1, 6, 2), mk<float>({1, 2, 3, 4, 5, 6}, {2, 3}));  // every other column
  test::expect_exact(wide, kFloat32, {0, 1, 0, 2, 0, 3, 0, 4, 0, 5, 0, 6});
}

// The slot of each temp in a compiled function's plan ("b6: temp f32[64, 32] in slot0"), by buffer.
std::vector<std::pair<std::string, int>> temp_slots(const std::string& explain) {
  std::vector<std::pair<std::string, int>> out;
  std::istringstream in(explain);
  std::string line;
  while (std::getline(in, line)) {
    const size_t temp = line.find(": temp "), slot = line.find(" in slot");
    if (temp != std::string::npos && slot != std::string::npos)
      out.emplace_back(line.substr(line.find_first_not_of(' '), temp - line.find_first_not_of(' ')),
                       std::stoi(line.substr(slot + 8)));
  }
  return out;
}

// Small integers: every product and sum is exact in f32, so compiled and eager results agree
// bit for bit whatever the order of the additions.
Tensor small_ints(std::vector<int64_t> sizes, unsigned seed) {
  std::mt19937 rng(seed);
  Tensor t = zeros(sizes);
  float* p = t.data_ptr<float>();
  for (int64_t i = 0; i < t.numel(); ++i) p[i] = static_cast<float>(static_cast<int>(rng() % 5) - 2);
  return t;
}

// An activation the product's call does not compute (the cpu folds a linear's bias and relu
// into it, passes/matmul_epilogues.h; not abs) is a kernel that writes over the product's
// result: the two share one slot, and the second product, its bias folded, writes the output.
TEST(CompileInPlace, AnActivationKernelWritesOverTheProduct) {
  const Tensor x = small_ints({16, 24}, 1), w1 = small_ints({40, 24}, 2), b1 = small_ints({40}, 3),
               w2 = small_ints({8, 40}, 4), b2 = small_ints({8}, 5);
  auto mlp = [&](const Tensor& a) { return linear(abs(linear(a, w1, b1)) - 3, w2, b2); };
  auto f = compile(mlp);
  test::expect_exact(f(x), kFloat32, test::doubles(mlp(x)));
  test::expect_exact(f(x), kFloat32, test::doubles(mlp(x)));  // a cache hit
  const std::string plan = f.explain(x);
  const auto slots = temp_slots(plan);
  ASSERT_EQ(slots.size(), 2u) << plan;
  EXPECT_EQ(slots[0].second, slots[1].second) << plan;
  EXPECT_NE(plan.find("extern addmm_activation"), std::string::npos) << plan;
}

TEST(CompileInPlace, AKernelReadingTheProductElsewhereGetsItsOwnMemory) {
  const Tensor a = small_ints({12, 12}, 6), b = small_ints({12, 12}, 7), c = small_ints({12, 12}, 8);
  // relu(p) + p.t() also reads p[j, i] where it writes [i, j]: writing over p would read
  // values already overwritten.
  auto transposed = [&](const Tensor& x) {
    const Tensor p = mm(x, b);
    return mm(relu(p) + p.t(), c);
  };
  auto f = compile(transposed);
  test::expect_exact(f(a), kFloat32, test::doubles(transposed(a)));
  const auto slots = temp_slots(f.explain(a));
  ASSERT_EQ(slots.size(), 2u) << f.explain(a);
  EXPECT_NE(slots[0].second, slots[1].second) << f.explain(a);
  // p is read again after relu(p): it stays.
  auto reread = [&](const Tensor& x) {
    const Tensor p = mm(x, b);
    return mm(relu(p), c) + p;
  };
  auto g = compile(reread);
  test::expect_exact(g(a), kFloat32, test::doubles(reread(a)));
  std::set<int> distinct;
  for (const auto& [name, slot] : temp_slots(g.explain(a))) distinct.insert(slot);
  EXPECT_EQ(distinct.size(), temp_slots(g.explain(a)).size()) << g.explain(a);
}

}  // namespace
}  // namespace kiln
