// kiln/test/test_support/opdb_moments.cpp — op database entries: mean and var; nanmean, var_mean
// and std_mean; cov and corrcoef.
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

  // Covariance and correlation (frontend/ops_moments_statistics.cpp).
  db.push_back({"cov", "moments", one([](const std::vector<Tensor>& in) { return cov(in[0]); }), "torch.cov(a0)",
                {{wave({3, 5})}, {wave({5, 3}).t()}, {seq({5}, kDouble)}, {seq({2, 4}, kLong)}, {seq({2, 1})},
                 {seq({2, 2, 2})}, {seq({2}, kBool)}}});  // one observation: inf and NaN; the last two raise
  db.push_back({"cov:correction0", "moments", one([](const std::vector<Tensor>& in) { return cov(in[0], 0); }),
                "torch.cov(a0, correction=0)", {{wave({2, 4})}, {seq({4}, kHalf)}}});
  const Tensor fw = i64({1, 0, 3, 2});
  db.push_back({"cov:weights", "moments",
                one([fw](const std::vector<Tensor>& in) { return cov(in[0], 1, fw, in[1]); }),
                "torch.cov(a0, fweights=" + py_tensor(fw) + ", aweights=a1)",
                {{wave({2, 4}), seq({4}, kFloat, 0.5, 0.25)},
                 {seq({4}), seq({4}, kDouble, 1.0, 0.5)},           // promoted to f64 by the aweights
                 {wave({2, 4}), f32({1, -1, 1, 1})},                 // raises: a negative weight
                 {wave({2, 4}), f32({0, 0, 0, 0})},                  // raises: the weights sum to zero
                 {wave({2, 3}), seq({3})}},                          // raises: fweights' length
                std::nullopt, false, /*data_dependent=*/true});  // the aweights' values are checked
  db.push_back({"cov:fweights_correction2", "moments",
                one([fw](const std::vector<Tensor>& in) { return cov(in[0], 2, fw); }),
                "torch.cov(a0, correction=2, fweights=" + py_tensor(fw) + ")", {{wave({3, 4})}}, std::nullopt, false,
                /*data_dependent=*/true});  // the weights' values are checked
  db.push_back({"corrcoef", "moments", one([](const std::vector<Tensor>& in) { return corrcoef(in[0]); }), "torch.corrcoef(a0)",
                {{wave({3, 5})}, {seq({2, 4}, kLong)}, {f32({1, 1, 1, 2, 3, 4}, {2, 3})}, {seq({4})}, {seq({2, 2, 2})}}});  // the last raises
}

}  // namespace kiln::opdb
