// kiln/test/test_support/opdb_moments.cpp — op database entries: mean and var.
#include "test_support/opdb.h"

namespace kiln::opdb {

void add_moments(std::vector<OpEntry>& db) {
  auto red_nonempty = [&](std::string name, std::string torch, Fn f) {
    db.push_back({name, "moments", f, torch, {{seq({2, 3})}, {seq({3, 4}).t()}, {seq({2, 3}, kLong)}, {seq({5})}}});
  };
  red_nonempty("mean", "a0.to(torch.float32).mean(-1)",
               one([](const std::vector<Tensor>& in) { return in[0].to(kFloat).mean({-1}); }));
  red_nonempty("mean:all", "a0.mean()", one([](const std::vector<Tensor>& in) { return in[0].mean(); }));  // PyTorch raises for the int64 sample
  auto rows = [&](std::string name, std::string torch, Fn f) {
    db.push_back({name, "moments", f, torch,
                  {{seq({2, 3})}, {seq({3, 2}).t()}, {seq({2, 0})}, {seq({2, 3}, kHalf)}, {seq({4}, kDouble)}}});
  };
  rows("var", "a0.var(-1, keepdim=True)", one([](const std::vector<Tensor>& in) { return in[0].var({-1}, std::nullopt, true); }));
  rows("var:all_c0", "torch.var(a0, unbiased=False)", one([](const std::vector<Tensor>& in) { return var(in[0], false); }));
}

}  // namespace kiln::opdb
