// kiln/test/test_support/opdb_shape.cpp — op database entries: views, joining, padding,
// indexing, matmul and factories.
#include "test_support/opdb.h"

#include "test_support/make.h"

#include <cmath>

namespace kiln::opdb {

void add_shape(std::vector<OpEntry>& db) {
  auto views = [&](std::string name, std::string torch, Fn f) {
    db.push_back({name, "shape", f, torch, {{seq({2, 3, 4})}, {seq({4, 3, 2}).permute({2, 1, 0})}}});
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
  views("cat", "torch.cat(a0.chunk(2, 2), 0)", one([](const std::vector<Tensor>& in) { return cat(in[0].chunk(2, 2), 0); }));
  views("stack", "torch.stack(a0.unbind(1), 2)", one([](const std::vector<Tensor>& in) { return stack(in[0].unbind(1), 2); }));
  views("constant_pad_nd", "torch.constant_pad_nd(a0, [1, -1, 2, 0], 9)",
        one([](const std::vector<Tensor>& in) { return constant_pad_nd(in[0], {1, -1, 2, 0}, 9); }));
  views("squeeze", "a0[:, 1:2].squeeze(1) * 3", one([](const std::vector<Tensor>& in) { return in[0].slice(1, 1, 2).squeeze(1) * 3; }));
  views("as_strided", "torch.as_strided(a0.contiguous(), (3, 2), (2, 5), 1) + 0",
        one([](const std::vector<Tensor>& in) { return in[0].contiguous().as_strided({3, 2}, {2, 5}, 1) + 0; }));

  const Tensor idx = test::make<int64_t>({2, 0, 1, 1}, {2, 2});
  db.push_back({"gather", "shape", one([idx](const std::vector<Tensor>& in) { return in[0].gather(1, idx); }),
                "a0.gather(1, " + py_tensor(idx) + ")", {{seq({2, 3})}, {seq({3, 2}).t()}}});
  db.push_back({"scatter", "shape",
                one([idx](const std::vector<Tensor>& in) { return in[0].scatter(1, idx, seq({2, 2}, kFloat, 10.0, 1.0)); }),
                "a0.scatter(1, " + py_tensor(idx) + ", " + py_tensor(seq({2, 2}, kFloat, 10.0, 1.0)) + ")",
                {{seq({2, 3})}, {seq({3, 2}).t()}}});
  db.push_back({"scatter_add", "shape",
                one([idx](const std::vector<Tensor>& in) { return in[0].scatter_add(1, idx, ones({2, 2})); }),
                "a0.scatter_add(1, " + py_tensor(idx) + ", torch.ones(2, 2))", {{seq({2, 3})}, {seq({3, 2}).t()}}});
  const Tensor rows = test::make<int64_t>({1, 1, 0});
  db.push_back({"index_select", "shape", one([rows](const std::vector<Tensor>& in) { return in[0].index_select(0, rows); }),
                "a0.index_select(0, " + py_tensor(rows) + ")", {{seq({2, 3})}, {seq({3, 2}).t()}}});
  db.push_back({"matmul", "shape", one([](const std::vector<Tensor>& in) { return matmul(in[0], in[1]); }),
                "torch.matmul(a0, a1)",
                {{seq({2, 3}), seq({3, 4})},
                 {seq({3}), seq({3, 2})},
                 {seq({2, 2, 3}), seq({3, 4})},
                 {seq({4, 3}).t(), seq({2, 1, 4, 2})},
                 {seq({2, 0}), seq({0, 3})},
                 {seq({2, 3}, kDouble), seq({3, 2}, kDouble)},
                 {seq({2, 3}), seq({4, 2})}}});  // the last raises
  db.push_back({"mm", "shape", one([](const std::vector<Tensor>& in) { return mm(in[0], in[1]); }), "torch.mm(a0, a1)",
                {{seq({2, 3}), seq({3, 4})}, {seq({3, 2}).t(), seq({3, 1}, kDouble)}, {seq({2, 3}, kDouble), seq({3, 2}, kDouble)},
                 {seq({2, 3}, kLong), ints({3, 2})}, {seq({3}), seq({3, 2})}}});  // mixed dtypes and 1-D raise
  db.push_back({"bmm", "shape", one([](const std::vector<Tensor>& in) { return bmm(in[0], in[1]); }), "torch.bmm(a0, a1)",
                {{seq({2, 2, 3}), seq({2, 3, 4})}, {seq({2, 3, 2}).transpose(1, 2), seq({2, 3, 1})}}});
  auto tri = [](ScalarType dt) {
    return std::vector<Sample>{{seq({3, 4}, dt)}, {seq({4, 3}, dt).t()}, {seq({2, 3, 2}, dt)}, {seq({0, 3}, dt)}, {seq({5}, dt)}};
  };
  db.push_back({"tril", "shape", one([](const std::vector<Tensor>& in) { return tril(in[0]); }), "torch.tril(a0)", tri(kFloat)});
  db.push_back({"tril:diag", "shape", one([](const std::vector<Tensor>& in) { return tril(in[0], -1); }), "torch.tril(a0, -1)",
                tri(kLong)});
  db.push_back({"triu", "shape", one([](const std::vector<Tensor>& in) { return triu(in[0]); }), "torch.triu(a0)", tri(kBool)});
  db.push_back({"triu:diag", "shape", one([](const std::vector<Tensor>& in) { return triu(in[0], 2); }), "torch.triu(a0, 2)",
                tri(kDouble)});
  const double nan = NAN;
  db.push_back({"addmm", "shape", one([](const std::vector<Tensor>& in) { return addmm(in[0], in[1], in[2]); }),
                "torch.addmm(a0, a1, a2)",
                {{seq({2, 4}), seq({2, 3}), seq({3, 4})},
                 {seq({4}), seq({3, 2}).t(), seq({3, 4})},
                 {seq({}), seq({2, 3}, kDouble), seq({3, 4}, kDouble)},  // PyTorch raises: self's dtype
                 {seq({2, 1}, kDouble), seq({2, 3}, kDouble), seq({3, 4}, kDouble)},
                 {seq({3}), seq({2, 3}), seq({3, 4})}}});  // PyTorch raises: self does not broadcast
  db.push_back({"addmm:scaled", "shape",
                one([](const std::vector<Tensor>& in) { return addmm(in[0], in[1], in[2], 0.5, -2.0); }),
                "torch.addmm(a0, a1, a2, beta=0.5, alpha=-2.0)", {{seq({2, 4}), seq({2, 3}), seq({3, 4})}}});
  db.push_back({"addmm:beta0", "shape",
                one([](const std::vector<Tensor>& in) { return addmm(in[0], in[1], in[2], 0, 1); }),
                "torch.addmm(a0, a1, a2, beta=0, alpha=1)",
                {{test::make<double>({nan, 1, nan, 2}, {4}).to(kFloat), seq({2, 3}), seq({3, 4})}}});
  db.push_back({"addmm:int", "shape", one([](const std::vector<Tensor>& in) { return addmm(in[0], in[1], in[2], 2, 3); }),
                "torch.addmm(a0, a1, a2, beta=2, alpha=3)", {{ints({2, 4}), ints({2, 3}), ints({3, 4})}}});
  db.push_back({"baddbmm", "shape",
                one([](const std::vector<Tensor>& in) { return baddbmm(in[0], in[1], in[2], 0.25, 1.5); }),
                "torch.baddbmm(a0, a1, a2, beta=0.25, alpha=1.5)",
                {{seq({2, 2, 4}), seq({2, 2, 3}), seq({2, 3, 4})},
                 {seq({4}), seq({2, 3, 2}).transpose(1, 2), seq({2, 3, 4})},
                 {seq({2, 2, 4}), seq({2, 2, 3}), seq({3, 3, 4})}}});  // PyTorch raises: batch sizes
  // Indexing conveniences (frontend/ops_index.cpp).
  const Tensor mask = test::make<bool>({true, false, false, true, true, false}, {2, 3});
  db.push_back({"masked_fill", "shape", one([mask](const std::vector<Tensor>& in) { return masked_fill(in[0], mask, -1.5); }),
                "torch.masked_fill(a0, " + py_tensor(mask) + ", -1.5)",
                {{seq({2, 3})}, {seq({3, 2}).t()}, {seq({3})}, {seq({2, 3}, kHalf)}, {ints({2, 3})}, {seq({4, 2, 3})}}});
  db.push_back({"masked_fill:tensor", "shape",
                one([](const std::vector<Tensor>& in) { return masked_fill(in[0], in[0] > 0, in[1]); }),
                "torch.masked_fill(a0, a0 > 0, a1)",
                {{seq({2, 3}), seq({}, kDouble, 7.0)}, {ints({2, 3}), seq({}, kFloat, 2.5)}, {seq({2, 3}), seq({1})},
                 {seq({2, 3}), seq({2, 3})}}});  // the last two raise: the value is not 0-dim
  db.push_back({"masked_fill:int_mask", "shape", one([](const std::vector<Tensor>& in) { return masked_fill(in[0], in[1], 0); }),
                "torch.masked_fill(a0, a1, 0)", {{seq({2, 3}), ints({2, 3})}}});  // PyTorch raises
  const Tensor classes = test::make<int64_t>({2, 0, 3, 1, 1, 0}, {2, 3});
  db.push_back({"one_hot", "shape", one([](const std::vector<Tensor>& in) { return one_hot(in[0], 5); }),
                "torch.nn.functional.one_hot(a0, 5)",
                {{classes}, {classes.t()}, {test::make<int64_t>({4})}, {ints({0})}, {test::make<int64_t>({5, 1})},
                 {test::make<int64_t>({-1, 1})}, {seq({3})}}});  // the last three raise
  const Tensor tokens = test::make<int64_t>({3, 0, 3, 1}, {2, 2});
  db.push_back({"embedding", "shape", one([tokens](const std::vector<Tensor>& in) { return embedding(in[0], tokens); }),
                "torch.nn.functional.embedding(" + py_tensor(tokens) + ", a0)",
                {{seq({4, 3})}, {seq({3, 4}).t()}, {seq({4, 2}, kHalf)}, {seq({3, 3})}, {seq({4})}}});  // the last two raise
  db.push_back({"embedding:int32", "shape",
                one([](const std::vector<Tensor>& in) { return embedding(in[0], in[1]); }),
                "torch.nn.functional.embedding(a1, a0)",
                {{seq({5, 2}), test::make<int32_t>({4, 4, 0})}, {seq({5, 2}), ints({0})}, {seq({5, 2}), seq({2})}}});
  const Tensor along = test::make<int64_t>({2, 0, 1, 1}, {2, 2});
  db.push_back({"take_along_dim", "shape",
                one([along](const std::vector<Tensor>& in) { return take_along_dim(in[0], along, 1); }),
                "torch.take_along_dim(a0, " + py_tensor(along) + ", 1)",
                {{seq({2, 3})}, {seq({3, 2}).t()}, {seq({1, 3})}, {seq({3})}}});  // the last raises
  db.push_back({"take_along_dim:flat", "shape",
                one([along](const std::vector<Tensor>& in) { return take_along_dim(in[0], along); }),
                "torch.take_along_dim(a0, " + py_tensor(along) + ")", {{seq({2, 3})}, {seq({3, 2}).t()}}});
  // Rearranging (frontend/ops_rearrange.cpp).
  auto rearr = [&](std::string name, std::string torch, Fn f) {
    db.push_back({name, "shape", f, torch,
                  {{seq({2, 3})}, {seq({3, 2}).t()}, {seq({0, 3})}, {ints({2, 3})}, {seq({2, 3, 2}, kHalf)}, {seq({2, 3}, kBool)}}});
  };
  rearr("repeat", "a0.repeat(2, 1, 3)", one([](const std::vector<Tensor>& in) { return repeat(in[0], {2, 1, 3}); }));
  rearr("repeat:ones", "a0.repeat(1, 1, 1) + 0", one([](const std::vector<Tensor>& in) { return repeat(in[0], {1, 1, 1}) + 0; }));
  rearr("roll", "torch.roll(a0, 1, 1)", one([](const std::vector<Tensor>& in) { return roll(in[0], {1}, {1}); }));
  rearr("roll:dims", "torch.roll(a0, (-4, 5), (0, -1))", one([](const std::vector<Tensor>& in) { return roll(in[0], {-4, 5}, {0, -1}); }));
  rearr("roll:flat", "torch.roll(a0, 2)", one([](const std::vector<Tensor>& in) { return roll(in[0], {2}); }));
  rearr("flip", "torch.flip(a0, (0, 1))", one([](const std::vector<Tensor>& in) { return flip(in[0], {0, 1}); }));
  rearr("flip:last", "torch.flip(a0, (-1,))", one([](const std::vector<Tensor>& in) { return flip(in[0], {-1}); }));
  rearr("diff", "torch.diff(a0)", one([](const std::vector<Tensor>& in) { return diff(in[0]); }));
  rearr("diff:n2_dim0", "torch.diff(a0, n=2, dim=0)", one([](const std::vector<Tensor>& in) { return diff(in[0], 2, 0); }));
  db.push_back({"diff:prepend", "shape",
                one([](const std::vector<Tensor>& in) { return diff(in[0], 1, -1, in[1], in[1]); }),
                "torch.diff(a0, prepend=a1, append=a1)", {{seq({2, 3}), seq({2, 1})}, {seq({4}), seq({2})}}});
  db.push_back({"alias", "shape", one([](const std::vector<Tensor>& in) { return alias(in[0]) * 2; }),
                "torch.ops.aten.alias(a0) * 2", {{seq({2, 3})}, {seq({3, 2}).t()}}});
  db.push_back({"fill", "shape", one([](const std::vector<Tensor>& in) { return fill(in[0], 2.5) + in[0]; }),
                "torch.ops.aten.fill(a0, 2.5) + a0", {{seq({2, 3})}, {ints({3})}}});
  db.push_back({"fill:tensor", "shape", one([](const std::vector<Tensor>& in) { return fill(in[0], in[1]); }),
                "torch.ops.aten.fill(a0, a1)", {{seq({2, 3}), seq({}, kDouble, 7.5)}, {seq({2}), seq({1})}}});  // the second raises
  db.push_back({"factories", "shape",
                one([](const std::vector<Tensor>& in) { return in[0] + arange(3) + zeros({3}) + full({3}, 2.0); }),
                "a0 + torch.arange(3) + torch.zeros(3) + torch.full((3,), 2.0)", {{seq({2, 3})}}});
  db.push_back({"rand_like", "shape", one([](const std::vector<Tensor>& in) { return rand_like(in[0]); }),
                "torch.rand_like(a0)", {{seq({2, 3})}, {seq({4}, kDouble)}}, std::nullopt, /*random=*/true});
  db.push_back({"randn_like", "shape", one([](const std::vector<Tensor>& in) { return randn_like(in[0]); }),
                "torch.randn_like(a0)", {{seq({2, 3})}}, std::nullopt, /*random=*/true});
}

}  // namespace kiln::opdb
