// kiln/test/test_support/opdb_view.cpp — op database entries: views (reshape, transpose, select
// and narrow, slice, flatten, expand and unsqueeze, diagonal, movedim, squeeze, as_strided),
// alias, and swapaxes, movedim with lists, tensor_split, hsplit, vsplit, dsplit and atleast_1d/2d/3d.
#include "test_support/opdb.h"

namespace kiln::opdb {

void add_view(std::vector<OpEntry>& db) {
  auto views = [&](std::string name, std::string torch, Fn f) {
    db.push_back({name, "view", f, torch, {{seq({2, 3, 4})}, {seq({4, 3, 2}).permute({2, 1, 0})}}});
  };
  views("reshape", "a0.reshape(4, -1) * 2", one([](const std::vector<Tensor>& in) { return in[0].reshape({4, -1}) * 2; }));
  views("transpose", "a0.transpose(0, 2) + 1", one([](const std::vector<Tensor>& in) { return in[0].transpose(0, 2) + 1; }));
  views("select", "a0.select(1, -1).narrow(1, 1, 2) + 0",
        one([](const std::vector<Tensor>& in) { return in[0].select(1, -1).narrow(1, 1, 2) + 0; }));
  views("slice", "a0[:, :, 0:4:3] - 1", one([](const std::vector<Tensor>& in) { return in[0].slice(2, 0, 4, 3) - 1; }));
  views("flatten", "a0.flatten(1) * 1", one([](const std::vector<Tensor>& in) { return in[0].flatten(1) * 1; }));
  views("expand", "a0.unsqueeze(0).expand(2, 2, 3, 4) + 0",
        one([](const std::vector<Tensor>& in) { return in[0].unsqueeze(0).expand({2, 2, 3, 4}) + 0; }));
  views("diagonal", "a0.diagonal(1, 1, 2) + 0", one([](const std::vector<Tensor>& in) { return in[0].diagonal(1, 1, 2) + 0; }));
  views("movedim", "a0.movedim(0, -1).contiguous()",
        one([](const std::vector<Tensor>& in) { return in[0].movedim(0, -1).contiguous(); }));
  views("squeeze", "a0[:, 1:2].squeeze(1) * 3", one([](const std::vector<Tensor>& in) { return in[0].slice(1, 1, 2).squeeze(1) * 3; }));
  views("as_strided", "torch.as_strided(a0.contiguous(), (3, 2), (2, 5), 1) + 0",
        one([](const std::vector<Tensor>& in) { return in[0].contiguous().as_strided({3, 2}, {2, 5}, 1) + 0; }));
  db.push_back({"alias", "view", one([](const std::vector<Tensor>& in) { return alias(in[0]) * 2; }),
                "torch.ops.aten.alias(a0) * 2", {{seq({2, 3})}, {seq({3, 2}).t()}}});

  // Views spelled through other views (frontend/ops_view_aliases.cpp).
  views("swapaxes", "torch.swapaxes(a0, 0, 2) * 2", one([](const std::vector<Tensor>& in) { return swapaxes(in[0], 0, 2) * 2; }));
  views("movedim:lists", "torch.movedim(a0, [0, 1], [2, 0]) * 2",
        one([](const std::vector<Tensor>& in) { return movedim(in[0], {0, 1}, {2, 0}) * 2; }));
  auto pieces = [](std::vector<Tensor> parts) {
    for (Tensor& p : parts) p = p * 2;
    return parts;
  };
  db.push_back({"tensor_split", "view", [pieces](const std::vector<Tensor>& in) { return pieces(tensor_split(in[0], 3, 1)); },
                "tuple(p * 2 for p in torch.tensor_split(a0, 3, dim=1))", {{seq({2, 7})}, {seq({2, 2})}}});
  db.push_back({"tensor_split:indices", "view",
                [pieces](const std::vector<Tensor>& in) { return pieces(tensor_split(in[0], {1, 5, 3, 9, -1})); },
                "tuple(p * 2 for p in torch.tensor_split(a0, [1, 5, 3, 9, -1]))", {{seq({7})}, {seq({3, 2})}}});
  // NumPy's splits: a section count that does not divide the dim, and too few dims, raise.
  db.push_back({"hsplit", "view", [pieces](const std::vector<Tensor>& in) { return pieces(hsplit(in[0], 2)); },
                "tuple(p * 2 for p in torch.hsplit(a0, 2))",
                {{seq({3, 4})}, {seq({6})}, {seq({4, 3}).t()}, {seq({2, 4, 3})}, {seq({3, 3})}, {seq({})}}});
  db.push_back({"hsplit:indices", "view", [pieces](const std::vector<Tensor>& in) { return pieces(hsplit(in[0], {1, 3})); },
                "tuple(p * 2 for p in torch.hsplit(a0, [1, 3]))", {{seq({3, 4})}, {seq({5})}, {seq({})}}});
  db.push_back({"vsplit", "view", [pieces](const std::vector<Tensor>& in) { return pieces(vsplit(in[0], 2)); },
                "tuple(p * 2 for p in torch.vsplit(a0, 2))", {{seq({4, 3})}, {seq({3, 4}).t()}, {seq({3, 2})}, {seq({4})}}});
  db.push_back({"vsplit:indices", "view", [pieces](const std::vector<Tensor>& in) { return pieces(vsplit(in[0], {2})); },
                "tuple(p * 2 for p in torch.vsplit(a0, [2]))", {{seq({4, 3})}, {seq({4})}}});
  db.push_back({"dsplit", "view", [pieces](const std::vector<Tensor>& in) { return pieces(dsplit(in[0], 3)); },
                "tuple(p * 2 for p in torch.dsplit(a0, 3))", {{seq({2, 2, 6})}, {seq({2, 2, 4})}, {seq({2, 6})}, {seq({2, 2, 0})}}});
  db.push_back({"dsplit:indices", "view", [pieces](const std::vector<Tensor>& in) { return pieces(dsplit(in[0], {1, 3})); },
                "tuple(p * 2 for p in torch.dsplit(a0, [1, 3]))", {{seq({2, 1, 4})}, {seq({2, 4})}}});
  for (int n : {1, 2, 3}) {
    const std::string name = "atleast_" + std::to_string(n) + "d";
    db.push_back({name, "view",
                  one([n](const std::vector<Tensor>& in) {
                    return (n == 1 ? atleast_1d(in[0]) : n == 2 ? atleast_2d(in[0]) : atleast_3d(in[0])) * 2;
                  }),
                  "torch." + name + "(a0) * 2", {{seq({})}, {seq({3})}, {seq({2, 3})}, {seq({3, 2}).t()}, {seq({2, 1, 2, 1})}}});
  }
  db.push_back({"atleast_3d:list", "view",
                [pieces](const std::vector<Tensor>& in) { return pieces(atleast_3d(std::vector<Tensor>{in[0], in[1]})); },
                "tuple(p * 2 for p in torch.atleast_3d([a0, a1]))", {{seq({}), seq({4})}, {seq({2, 3}), seq({2, 1, 2, 1})}}});
}

}  // namespace kiln::opdb
