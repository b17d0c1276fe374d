// kiln/test/test_support/opdb_shape.cpp — op database entries: cat, stack and constant padding
// (constant_pad_nd).
#include "test_support/opdb.h"

namespace kiln::opdb {

void add_shape(std::vector<OpEntry>& db) {
  auto entry = [&](std::string name, std::string torch, Fn f) {
    db.push_back({name, "shape", f, torch, {{seq({2, 3, 4})}, {seq({4, 3, 2}).permute({2, 1, 0})}}});
  };
  entry("cat", "torch.cat(a0.chunk(2, 2), 0)", one([](const std::vector<Tensor>& in) { return cat(in[0].chunk(2, 2), 0); }));
  entry("stack", "torch.stack(a0.unbind(1), 2)", one([](const std::vector<Tensor>& in) { return stack(in[0].unbind(1), 2); }));
  entry("constant_pad_nd", "torch.constant_pad_nd(a0, [1, -1, 2, 0], 9)",
        one([](const std::vector<Tensor>& in) { return constant_pad_nd(in[0], {1, -1, 2, 0}, 9); }));
}

}  // namespace kiln::opdb
