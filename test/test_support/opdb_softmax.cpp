// kiln/test/test_support/opdb_softmax.cpp — op database entries: softmax, log_softmax,
// softmin and logsumexp.
#include "test_support/opdb.h"

namespace kiln::opdb {

void add_softmax(std::vector<OpEntry>& db) {
  auto rows = [&](std::string name, std::string torch, Fn f) {
    db.push_back({name, "softmax", f, torch,
                  {{seq({2, 3})}, {seq({3, 2}).t()}, {seq({2, 0})}, {seq({2, 3}, kHalf)}, {seq({4}, kDouble)}}});
  };
  rows("softmax", "torch.softmax(a0, -1)", one([](const std::vector<Tensor>& in) { return softmax(in[0], -1); }));
  rows("softmax:dim0_f64", "a0.softmax(0, torch.float64)",
       one([](const std::vector<Tensor>& in) { return in[0].softmax(0, kDouble); }));
  rows("log_softmax", "torch.log_softmax(a0, -1)", one([](const std::vector<Tensor>& in) { return log_softmax(in[0], -1); }));
  rows("softmin", "torch.nn.functional.softmin(a0, -1)", one([](const std::vector<Tensor>& in) { return softmin(in[0], -1); }));
  db.push_back({"softmin:dtype", "softmax", one([](const std::vector<Tensor>& in) { return softmin(in[0], 0, kDouble); }),
                "torch.nn.functional.softmin(a0, 0, dtype=torch.float64)",
                {{seq({2, 3})}, {seq({3, 2}, kHalf).t()}, {specials().reshape({3, 4})}, {ints({2, 3})}, {seq({2, 3}, kBool)}}});
  db.push_back({"logsumexp", "softmax", one([](const std::vector<Tensor>& in) { return logsumexp(in[0], {-1}); }),
                "torch.logsumexp(a0, -1)",
                {{seq({2, 3})}, {seq({3, 4}).t()}, {seq({2, 0})}, {seq({2, 3}, kLong)}, {seq({5}, kHalf)},
                 {specials().reshape({3, 4})}, {seq({2, 3}, kDouble, 300.0, 100.0)}}});
  db.push_back({"logsumexp:dims", "softmax", one([](const std::vector<Tensor>& in) { return logsumexp(in[0], {0, 2}, true); }),
                "torch.logsumexp(a0, [0, 2], keepdim=True)",
                {{seq({2, 3, 4})}, {seq({4, 3, 2}).permute({2, 1, 0})}, {seq({0, 2, 3})}, {seq({2, 3})}}});  // the last raises
}

}  // namespace kiln::opdb
