// kiln/test/test_support/opdb_shape.cpp — op database entries: cat, stack, NumPy's hstack,
// vstack, row_stack, dstack and column_stack, and constant padding (constant_pad_nd).
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
  // NumPy's stacks of two tensors: 0-dim, 1-D, 2-D and 3-D operands, promoted dtypes, and shapes
  // cat refuses.
  auto stacks = [&](std::string name, std::string torch, Fn f) {
    db.push_back({name, "shape", f, torch,
                  {{seq({}), seq({}, kFloat, 1.0)},
                   {seq({3}), seq({2})},
                   {seq({2}), seq({2}, kDouble)},
                   {seq({2, 3}), seq({3, 2}).t()},
                   {seq({2, 3}), seq({2, 1}, kInt)},
                   {seq({2, 3, 2}), seq({2, 3, 1})},
                   {seq({2, 3}), seq({3, 3})},
                   {seq({3}), seq({2, 3})}}});
  };
  stacks("hstack", "torch.hstack([a0, a1])", one([](const std::vector<Tensor>& in) { return hstack({in[0], in[1]}); }));
  stacks("vstack", "torch.vstack([a0, a1])", one([](const std::vector<Tensor>& in) { return vstack({in[0], in[1]}); }));
  stacks("row_stack", "torch.vstack([a0, a1])", one([](const std::vector<Tensor>& in) { return row_stack({in[0], in[1]}); }));
  stacks("dstack", "torch.dstack([a0, a1])", one([](const std::vector<Tensor>& in) { return dstack({in[0], in[1]}); }));
  stacks("column_stack", "torch.column_stack([a0, a1])",
         one([](const std::vector<Tensor>& in) { return column_stack({in[0], in[1]}); }));
}

}  // namespace kiln::opdb
