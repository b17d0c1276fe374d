// kiln/test/test_support/opdb_factory.cpp — op database entries: factories (arange, zeros,
// full) and fill.
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
}

}  // namespace kiln::opdb
