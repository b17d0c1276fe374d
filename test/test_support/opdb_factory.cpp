// kiln/test/test_support/opdb_factory.cpp — op database entries: factories (arange, zeros,
// full, logspace, tril_indices, triu_indices) and fill.
#include "test_support/opdb.h"

namespace kiln::opdb {

void add_factory(std::vector<OpEntry>& db) {
  db.push_back({"fill", "factory", one([](const std::vector<Tensor>& in) { return fill(in[0], 2.5) + in[0]; }),
                "torch.ops.aten.fill(a0, 2.5) + a0", {{seq({2, 3})}, {ints({3})}}});
  db.push_back({"fill:tensor", "factory", one([](const std::vector<Tensor>& in) { return fill(in[0], in[1]); }),
                "torch.ops.aten.fill(a0, a1)", {{seq({2, 3}), seq({}, kDouble, 7.5)}, {seq({2}), seq({1})}}});  // the second raises
  db.push_back({"factories", "factory",
                one([](const std::vector<Tensor>& in) { return in[0] + arange(3) + zeros({3}) + full({3}, 2.0); }),
                "a0 + torch.arange(3) + torch.zeros(3) + torch.full((3,), 2.0)", {{seq({2, 3})}}});

  // Triangle coordinates (frontend/ops_rearrange_combinations.cpp) and logspace, added to an input
  // so that each sample has one.
  for (int64_t offset : {-2, 0, 1, 5}) {
    const std::string os = std::to_string(offset);
    db.push_back({"tril_indices:" + os, "factory",
                  one([offset](const std::vector<Tensor>& in) { return in[0] + tril_indices(3, 4, offset); }),
                  "a0 + torch.tril_indices(3, 4, " + os + ")", {{ints({1})}}});
    db.push_back({"triu_indices:" + os, "factory",
                  one([offset](const std::vector<Tensor>& in) { return in[0] + triu_indices(4, 3, offset); }),
                  "a0 + torch.triu_indices(4, 3, " + os + ")", {{ints({1})}}});
  }
  db.push_back({"tril_indices:int32", "factory",
                one([](const std::vector<Tensor>& in) { return in[0] + tril_indices(2, 2, 0, kInt); }),
                "a0 + torch.tril_indices(2, 2, 0, dtype=torch.int32)", {{ints({1}).to(kInt)}}});
  db.push_back({"tril_indices:errors", "factory",
                one([](const std::vector<Tensor>& in) { return in[0] + triu_indices(2, -1); }),
                "a0 + torch.triu_indices(2, -1)", {{ints({1})}}});  // raises
  db.push_back({"logspace", "factory",
                one([](const std::vector<Tensor>& in) { return in[0] + logspace(-2, 3, 7); }),
                "a0 + torch.logspace(-2, 3, 7)", {{seq({1})}}});
  db.push_back({"logspace:base", "factory",
                one([](const std::vector<Tensor>& in) { return in[0] + logspace(0.5, -1.5, 5, 2.0, kDouble); }),
                "a0 + torch.logspace(0.5, -1.5, 5, 2.0, dtype=torch.float64)", {{seq({1}, kDouble)}}});
  db.push_back({"logspace:int", "factory",
                one([](const std::vector<Tensor>& in) { return in[0] + logspace(0, 4, 5, 3.0, kLong); }),
                "a0 + torch.logspace(0, 4, 5, 3.0, dtype=torch.int64)", {{ints({1})}}});
  db.push_back({"logspace:one", "factory",
                one([](const std::vector<Tensor>& in) { return in[0] + logspace(2, 9, 1) + logspace(1, 2, 0).sum(); }),
                "a0 + torch.logspace(2, 9, 1) + torch.logspace(1, 2, 0).sum()", {{seq({1})}}});
}

}  // namespace kiln::opdb
