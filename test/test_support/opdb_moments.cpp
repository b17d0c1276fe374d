// kiln/test/test_support/opdb_moments.cpp — op database entries: mean and var; nanmean, var_mean
// and std_mean.
#include "test_support/opdb.h"

namespace kiln::opdb {

void add_moments(std::vector<OpEntry>& db) {
  auto red_nonempty = [&](std::string name, std::string torch, Fn f) {
    db.push_back({name, "moments", f, torch, {{seq({2, 3})}, {seq({3, 4}).t()}, {seq({2, 3}, kLong)}, {seq({5})}}});
  };
  red_nonempty("mean", "a0.to(torch.float32).mean(-1)",
               one([](const std::vector<Tensor>& in) { return in[0].to(kFloat).mean({-1}); }));
  red_nonempty("mean:all", "a0.mean()", one([](const std::vector<Tensor>& in) { return in[0].mean(); }));  // PyTorch raises for the int64 sample
  // Moments that record other ops (frontend/ops_moments_pairs.cpp).
  db.push_back({"nanmean", "moments", one([](const std::vector<Tensor>& in) { return nanmean(in[0], {1}); }),
                "torch.nanmean(a0, dim=[1])",
                {{f32({1, NAN, -2.5, NAN, NAN, NAN}, {2, 3})}, {seq({3, 4}).t()}, {seq({2, 3}, kLong)}}});  // int64 raises
  auto with_mean = [](auto f) {
    return [f](const std::vector<Tensor>& in) {
      auto [m2, m1] = f(in[0]);
      return std::vector<Tensor>{m2, m1};
    };
  };
  db.push_back({"var_mean", "moments", with_mean([](const Tensor& a) { return var_mean(a, {1}); }),
                "torch.var_mean(a0, dim=[1])", {{seq({2, 3})}, {seq({3, 2}, kDouble).t()}, {seq({2, 3}, kLong)}}});
  db.push_back({"std_mean", "moments", with_mean([](const Tensor& a) { return std_mean(a, {}, 0, true); }),
                "torch.std_mean(a0, dim=None, correction=0, keepdim=True)", {{seq({2, 3})}, {seq({4}, kHalf)}}});
  auto rows = [&](std::string name, std::string torch, Fn f) {
    db.push_back({name, "moments", f, torch,
                  {{seq({2, 3})}, {seq({3, 2}).t()}, {seq({2, 0})}, {seq({2, 3}, kHalf)}, {seq({4}, kDouble)}}});
  };
  rows("var", "a0.var(-1, keepdim=True)", one([](const std::vector<Tensor>& in) { return in[0].var({-1}, std::nullopt, true); }));
  rows("var:all_c0", "torch.var(a0, unbiased=False)", one([](const std::vector<Tensor>& in) { return var(in[0], false); }));
}

}  // namespace kiln::opdb
