// kiln/test/test_compile_donation.cpp — buffer donation (passes/donate.h): an argument updated in
// place is computed straight into its own memory when nothing reads it afterwards (the plan
// says "in place of argN"), with the caller's results unchanged: over repeated calls, when
// another argument shares its memory (then it is computed in a copy), and when the kernel that
// writes it is not pointwise (then it is refused). The write still counts in the storage's
// version.
#include "kiln/kiln.h"
#include "test_support/check.h"
#include "test_support/make.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace kiln
