// kiln/test/test_support/opdb_index.cpp — op database entries: reading and writing at
// positions (gather, scatter, index_select, scatter_reduce, index_add, slice_scatter,
// select_scatter, masked_scatter, index, index_put, index_copy, index_reduce), the masked ops,
// index_fill, take, put, one_hot, take_along_dim,
// embedding and embedding_bag, and the data-dependent selections (nonzero, argwhere,
// masked_select).
#include "test_support/opdb.h"

#include "test_support/make.h"

#include <cmath>

namespace kiln::opdb {

void add_index(std::vector<OpEntry>& db) {
  const double nan = NAN;
  auto entry = [&](std::string name, std::string torch, Fn f, std::vector<Sample> samples, bool data_dependent = false) {
    db.push_back({std::move(name), "index", std::move(f), std::move(torch), std::move(samples), std::nullopt, false,
                  data_dependent});
  };

  // ---- gather, scatter, scatter_add, index_select ----
  const Tensor idx = test::make<int64_t>({2, 0, 1, 1}, {2, 2});
  db.push_back({"gather", "index", one([idx](const std::vector<Tensor>& in) { return in[0].gather(1, idx); }),
                "a0.gather(1, " + py_tensor(idx) + ")", {{seq({2, 3})}, {seq({3, 2}).t()}}});
  db.push_back({"scatter", "index",
                one([idx](const std::vector<Tensor>& in) { return in[0].scatter(1, idx, seq({2, 2}, kFloat, 10.0, 1.0)); }),
                "a0.scatter(1, " + py_tensor(idx) + ", " + py_tensor(seq({2, 2}, kFloat, 10.0, 1.0)) + ")",
                {{seq({2, 3})}, {seq({3, 2}).t()}}});
  db.push_back({"scatter_add", "index",
                one([idx](const std::vector<Tensor>& in) { return in[0].scatter_add(1, idx, ones({2, 2})); }),
                "a0.scatter_add(1, " + py_tensor(idx) + ", torch.ones(2, 2))", {{seq({2, 3})}, {seq({3, 2}).t()}}});
  const Tensor selected = test::make<int64_t>({1, 1, 0});
  db.push_back({"index_select", "index",
                one([selected](const std::vector<Tensor>& in) { return in[0].index_select(0, selected); }),
                "a0.index_select(0, " + py_tensor(selected) + ")", {{seq({2, 3})}, {seq({3, 2}).t()}}});

  // ---- masked_fill, one_hot, embedding, take_along_dim (frontend/ops_index.cpp) ----
  const Tensor fill_mask = test::make<bool>({true, false, false, true, true, false}, {2, 3});
  db.push_back({"masked_fill", "index",
                one([fill_mask](const std::vector<Tensor>& in) { return masked_fill(in[0], fill_mask, -1.5); }),
                "torch.masked_fill(a0, " + py_tensor(fill_mask) + ", -1.5)",
                {{seq({2, 3})}, {seq({3, 2}).t()}, {seq({3})}, {seq({2, 3}, kHalf)}, {ints({2, 3})}, {seq({4, 2, 3})}}});
  db.push_back({"masked_fill:tensor", "index",
                one([](const std::vector<Tensor>& in) { return masked_fill(in[0], in[0] > 0, in[1]); }),
                "torch.masked_fill(a0, a0 > 0, a1)",
                {{seq({2, 3}), seq({}, kDouble, 7.0)}, {ints({2, 3}), seq({}, kFloat, 2.5)}, {seq({2, 3}), seq({1})},
                 {seq({2, 3}), seq({2, 3})}}});  // the last two raise: the value is not 0-dim
  db.push_back({"masked_fill:int_mask", "index", one([](const std::vector<Tensor>& in) { return masked_fill(in[0], in[1], 0); }),
                "torch.masked_fill(a0, a1, 0)", {{seq({2, 3}), ints({2, 3})}}});  // PyTorch raises
  const Tensor classes = test::make<int64_t>({2, 0, 3, 1, 1, 0}, {2, 3});
  db.push_back({"one_hot", "index", one([](const std::vector<Tensor>& in) { return one_hot(in[0], 5); }),
                "torch.nn.functional.one_hot(a0, 5)",
                {{classes}, {classes.t()}, {test::make<int64_t>({4})}, {ints({0})}, {test::make<int64_t>({5, 1})},
                 {test::make<int64_t>({-1, 1})}, {seq({3})}}});  // the last three raise
  const Tensor tokens = test::make<int64_t>({3, 0, 3, 1}, {2, 2});
  db.push_back({"embedding", "index", one([tokens](const std::vector<Tensor>& in) { return embedding(in[0], tokens); }),
                "torch.nn.functional.embedding(" + py_tensor(tokens) + ", a0)",
                {{seq({4, 3})}, {seq({3, 4}).t()}, {seq({4, 2}, kHalf)}, {seq({3, 3})}, {seq({4})}}});  // the last two raise
  // padding_idx and scale_grad_by_freq change the weight's gradient only (the golden gradients
  // check it); a padding_idx past the weight's rows raises (the last sample).
  db.push_back({"embedding:padding_freq", "index",
                one([tokens](const std::vector<Tensor>& in) { return embedding(in[0], tokens, 3, true); }),
                "torch.nn.functional.embedding(" + py_tensor(tokens) + ", a0, padding_idx=3, scale_grad_by_freq=True)",
                {{seq({4, 3})}, {seq({4, 2}, kDouble)}, {seq({3, 3})}}});
  // embedding_dense_backward: the node embedding's derivative rule records.
  const Tensor weight_rows = i64({3, 0, 3, 1, 4, 3}, {2, 3});
  db.push_back({"embedding_dense_backward", "index",
                one([weight_rows](const std::vector<Tensor>& in) { return embedding_dense_backward(in[0], weight_rows, 5); }),
                "torch.ops.aten.embedding_dense_backward(a0, " + py_tensor(weight_rows) + ", 5, -1, False)",
                {{seq({2, 3, 2})}, {seq({2, 3, 4}, kDouble)}, {seq({3, 2})}}});  // the last raises
  db.push_back({"embedding_dense_backward:padding_freq", "index",
                one([weight_rows](const std::vector<Tensor>& in) { return embedding_dense_backward(in[0], weight_rows, 6, 3, true); }),
                "torch.ops.aten.embedding_dense_backward(a0, " + py_tensor(weight_rows) + ", 6, 3, True)",
                {{seq({2, 3, 2})}, {seq({2, 3, 4}, kDouble)}}});
  db.push_back({"embedding:int32", "index",
                one([](const std::vector<Tensor>& in) { return embedding(in[0], in[1]); }),
                "torch.nn.functional.embedding(a1, a0)",
                {{seq({5, 2}), test::make<int32_t>({4, 4, 0})}, {seq({5, 2}), ints({0})}, {seq({5, 2}), seq({2})}}});
  const Tensor along = test::make<int64_t>({2, 0, 1, 1}, {2, 2});
  db.push_back({"take_along_dim", "index",
                one([along](const std::vector<Tensor>& in) { return take_along_dim(in[0], along, 1); }),
                "torch.take_along_dim(a0, " + py_tensor(along) + ", 1)",
                {{seq({2, 3})}, {seq({3, 2}).t()}, {seq({1, 3})}, {seq({3})}}});  // the last raises
  db.push_back({"take_along_dim:flat", "index",
                one([along](const std::vector<Tensor>& in) { return take_along_dim(in[0], along); }),
                "torch.take_along_dim(a0, " + py_tensor(along) + ")", {{seq({2, 3})}, {seq({3, 2}).t()}}});

  // ---- data-dependent selections ----
  const Tensor some_zeros = f32({0, 1.5, 0, -2, nan, 0}, {2, 3});
  entry("nonzero", "torch.nonzero(a0)", one([](const std::vector<Tensor>& in) { return nonzero(in[0]); }),
        {{some_zeros}, {some_zeros.t()}, {ints({2, 3})}, {seq({2, 3}, kBool)}, {seq({}, kFloat, 2.5)}, {seq({}, kFloat, 0)},
         {seq({0, 3})}, {ints({2, 2, 3}).remainder(3)}, {seq({2, 3}, kHalf)}},
        /*data_dependent=*/true);
  entry("argwhere", "torch.argwhere(a0)", one([](const std::vector<Tensor>& in) { return argwhere(in[0]); }),
        {{some_zeros}}, /*data_dependent=*/true);
  const Tensor mask = test::make<bool>({true, false, true, true, false, false}, {2, 3});
  entry("masked_select", "torch.masked_select(a0, a1)",
        one([](const std::vector<Tensor>& in) { return masked_select(in[0], in[1]); }),
        {{seq({2, 3}), mask},
         {seq({3, 2}).t(), mask},
         {seq({2, 3}), test::make<bool>({false, true, true})},
         {seq({3}, kHalf), mask},
         {seq({0, 3}), test::make<bool>({false, true, true})},
         {seq({2, 3}), ints({2, 3})},   // raises: integer mask
         {seq({2, 3}), mask.t()}},      // raises: shapes do not broadcast
        /*data_dependent=*/true);

  // ---- writing at positions (frontend/ops_index_scatter.cpp) ----
  const Tensor idx23 = i64({0, 2, 0, 1, 1, 1}, {2, 3});
  const std::vector<Sample> reducible = {{seq({2, 3}), seq({2, 3}, kFloat, 1.0, 0.5)},
                                         {seq({3, 2}).t(), seq({2, 3}, kFloat, -1.0, 1.5)},
                                         {ints({2, 3}), ints({2, 3}, 1)},
                                         {seq({2, 3}, kHalf), seq({2, 3}, kHalf, 1.0, 0.5)},
                                         {f32({1, nan, 3, 4, 5, 6}, {2, 3}), f32({nan, 2, 3, 4, 5, 6}, {2, 3})}};
  for (const char* reduce : {"sum", "prod", "mean", "amax", "amin"}) {
    for (bool self_in : {true, false}) {
      const std::string r = reduce;
      entry("scatter_reduce:" + r + (self_in ? "" : "_exclude"),
            "a0.scatter_reduce(1, " + py_tensor(idx23) + ", a1, '" + r + "', include_self=" + (self_in ? "True" : "False") +
                ")",
            one([idx23, r, self_in](const std::vector<Tensor>& in) { return scatter_reduce(in[0], 1, idx23, in[1], r, self_in); }),
            reducible);
    }
  }
  entry("scatter_reduce:max_alias", "a0.scatter_reduce(1, " + py_tensor(idx23) + ", a1, 'max')",
        one([idx23](const std::vector<Tensor>& in) { return scatter_reduce(in[0], 1, idx23, in[1], "max"); }),
        {{seq({2, 3}), seq({2, 3})}, {seq({2, 3}), seq({2, 3}, kDouble)}});  // the second raises: dtypes
  entry("scatter_reduce:bad", "a0.scatter_reduce(1, " + py_tensor(idx23) + ", a1, 'add')",
        one([idx23](const std::vector<Tensor>& in) { return scatter_reduce(in[0], 1, idx23, in[1], "add"); }),
        {{seq({2, 3}), seq({2, 3})}});  // raises
  const Tensor rows = i64({2, 0, 2});
  entry("index_add", "a0.index_add(0, " + py_tensor(rows) + ", a1)",
        one([rows](const std::vector<Tensor>& in) { return index_add(in[0], 0, rows, in[1]); }),
        {{seq({3, 2}), seq({3, 2}, kFloat, 1.0, 0.5)}, {seq({2, 3}).t(), seq({3, 2})}, {ints({3, 2}), ints({3, 2})},
         {seq({3, 2}), seq({2, 2})}, {seq({3, 2}), seq({3, 2}, kDouble)}});  // the last two raise
  entry("index_add:alpha", "a0.index_add(1, " + py_tensor(i64({1, 1})) + ", a1, alpha=2.5)",
        one([](const std::vector<Tensor>& in) { return index_add(in[0], 1, i64({1, 1}), in[1], 2.5); }),
        {{seq({2, 3}), seq({2, 2})}, {ints({2, 3}), ints({2, 2})}});  // integers: alpha truncates to 2
  entry("slice_scatter", "torch.slice_scatter(a0, a1, 1, 1, 5, 2)",
        one([](const std::vector<Tensor>& in) { return slice_scatter(in[0], in[1], 1, 1, 5, 2); }),
        {{seq({2, 5}), seq({2, 2}, kFloat, 10, 1)}, {seq({5, 2}).t(), seq({2, 2})}, {ints({2, 5}), ints({2, 2})},
         {seq({2, 5}), seq({2, 3})}});  // raises
  entry("slice_scatter:defaults", "torch.slice_scatter(a0, a1, -1, -2)",
        one([](const std::vector<Tensor>& in) { return slice_scatter(in[0], in[1], -1, -2); }),
        {{seq({3, 4}), seq({3, 2}, kFloat, 10, 1)}});
  entry("select_scatter", "torch.select_scatter(a0, a1, 0, -1)",
        one([](const std::vector<Tensor>& in) { return select_scatter(in[0], in[1], 0, -1); }),
        {{seq({3, 4}), seq({4}, kFloat, 10, 1)}, {ints({2, 2}), ints({2})}, {seq({3, 4}), seq({3})}});  // the last raises
  const Tensor pick = test::make<bool>({true, false, true, true, false, true}, {2, 3});
  entry("masked_scatter", "a0.masked_scatter(a1, a2)",
        one([](const std::vector<Tensor>& in) { return masked_scatter(in[0], in[1], in[2]); }),
        {{seq({2, 3}), pick, seq({5}, kFloat, 10, 1)},
         {seq({3, 2}).t(), pick, seq({2, 3}, kFloat, 10, 1)},
         {seq({2, 3}), test::make<bool>({false, true, true}), seq({4}, kFloat, 10, 1)},
         {ints({2, 3}), pick, ints({4})},
         {seq({2, 3}), pick, seq({3}, kFloat, 10, 1)},   // raises: too few source elements
         {seq({2, 3}), ints({2, 3}), seq({6})}});        // raises: int mask
  // Advanced indexing: Tensor(), for a ":" slot.
  const Tensor r01 = i64({1, 0, -1});
  const Tensor c2 = i64({2, 0}, {2, 1});
  entry("index:rows", "a0[" + py_tensor(r01) + "]", one([r01](const std::vector<Tensor>& in) { return index(in[0], {r01}); }),
        {{seq({3, 4})}, {seq({4, 3}).t()}, {ints({3})}, {seq({2, 4})}, {seq({1, 4})}});  // the last raises: row 1 of 1
  entry("index:cols", "a0[:, " + py_tensor(c2) + "]",
        one([c2](const std::vector<Tensor>& in) { return index(in[0], {std::nullopt, c2}); }), {{seq({3, 4})}, {seq({2, 3, 4})}});
  entry("index:pair", "a0[" + py_tensor(r01) + ", " + py_tensor(c2) + "]",
        one([r01, c2](const std::vector<Tensor>& in) { return index(in[0], {r01, c2}); }), {{seq({3, 4})}, {seq({3, 4, 2})}});
  entry("index:split", "a0[" + py_tensor(i64({0, 1})) + ", :, " + py_tensor(i64({1, 0})) + "]",
        one([](const std::vector<Tensor>& in) { return index(in[0], {i64({0, 1}), std::nullopt, i64({1, 0})}); }),
        {{seq({2, 3, 2})}});
  entry("index:middle", "a0[:, " + py_tensor(i64({2, 0})) + ", " + py_tensor(i64({1})) + "]",
        one([](const std::vector<Tensor>& in) { return index(in[0], {std::nullopt, i64({2, 0}), i64({1})}); }),
        {{seq({2, 3, 2, 2})}});
  entry("index:out_of_range", "a0[" + py_tensor(i64({3})) + "]",
        one([](const std::vector<Tensor>& in) { return index(in[0], {i64({3})}); }), {{seq({3, 2})}});  // raises
  const Tensor keep = test::make<bool>({true, false, true});
  entry("index:mask", "a0[" + py_tensor(keep) + "]", one([keep](const std::vector<Tensor>& in) { return index(in[0], {keep}); }),
        {{seq({3, 2})}, {seq({2, 2})}}, /*data_dependent=*/true);  // the second raises
  entry("index_put", "a0.index_put((" + py_tensor(r01) + ",), a1)",
        one([r01](const std::vector<Tensor>& in) { return index_put(in[0], {r01}, in[1]); }),
        {{seq({3, 2}), seq({3, 2}, kFloat, 10, 1)}, {seq({3, 2}), seq({2}, kFloat, 10, 1)}, {seq({3, 2}), seq({3}, kFloat, 10)},
         {ints({3, 2}), seq({2})}});  // the last two raise
  entry("index_put:accumulate", "a0.index_put((" + py_tensor(i64({1, 1, 0})) + ", " + py_tensor(i64({0, 0, 1})) + "), a1, accumulate=True)",
        one([](const std::vector<Tensor>& in) { return index_put(in[0], {i64({1, 1, 0}), i64({0, 0, 1})}, in[1], true); }),
        {{seq({2, 3}), seq({3}, kFloat, 10, 1)}, {ints({2, 3}), ints({}, 5)}});
  entry("index_put:middle", "(lambda t: (t.__setitem__((slice(None), " + py_tensor(i64({2, 0})) + "), a1), t)[1])(a0.clone())",
        one([](const std::vector<Tensor>& in) { return index_put(in[0], {std::nullopt, i64({2, 0})}, in[1]); }),
        {{seq({2, 3, 2}), seq({2, 2, 2}, kFloat, 10, 1)}, {seq({2, 3, 2}), seq({2}, kFloat, 10, 1)}});

  // ---- embedding_bag ----
  const Tensor bag_ids = i64({1, 2, 4, 4, 3, 0, 2});
  const Tensor bag_offsets = i64({0, 3, 3, 5});
  for (const char* mode : {"sum", "mean", "max"}) {
    const std::string m = mode;
    entry("embedding_bag:" + m, "torch.nn.functional.embedding_bag(" + py_tensor(bag_ids) + ", a0, " + py_tensor(bag_offsets) +
                                    ", mode='" + m + "')",
          one([bag_ids, bag_offsets, m](const std::vector<Tensor>& in) { return embedding_bag(in[0], bag_ids, bag_offsets, m); }),
          {{seq({5, 3})}, {seq({3, 5}).t()}, {seq({5, 2}, kDouble)}, {seq({4, 3})}});  // the last raises: id 4 of 4 rows
    entry("embedding_bag:" + m + "_2d", "torch.nn.functional.embedding_bag(a1, a0, mode='" + m + "')",
          one([m](const std::vector<Tensor>& in) { return embedding_bag(in[0], in[1], std::nullopt, m); }),
          {{seq({5, 3}), i64({1, 2, 4, 0, 0, 3}, {2, 3})}, {seq({5, 3}), i64({}, {0, 2})}});
  }
  entry("embedding_bag:last_offset_padding",
        "torch.nn.functional.embedding_bag(" + py_tensor(bag_ids) + ", a0, " + py_tensor(i64({0, 2, 6})) +
            ", mode='mean', include_last_offset=True, padding_idx=4)",
        one([bag_ids](const std::vector<Tensor>& in) {
          return embedding_bag(in[0], bag_ids, i64({0, 2, 6}), "mean", std::nullopt, true, 4);
        }),
        {{seq({5, 3})}});
  entry("embedding_bag:per_sample_weights",
        "torch.nn.functional.embedding_bag(" + py_tensor(bag_ids) + ", a0, " + py_tensor(bag_offsets) +
            ", mode='sum', per_sample_weights=a1)",
        one([bag_ids, bag_offsets](const std::vector<Tensor>& in) {
          return embedding_bag(in[0], bag_ids, bag_offsets, "sum", in[1]);
        }),
        {{seq({5, 3}), seq({7}, kFloat, 0.5, 0.25)}, {seq({5, 3}), seq({6})}});  // the second raises
  entry("embedding_bag:errors", "torch.nn.functional.embedding_bag(a1, a0, mode='max', per_sample_weights=a2)",
        one([](const std::vector<Tensor>& in) { return embedding_bag(in[0], in[1], std::nullopt, "max", in[2]); }),
        {{seq({5, 3}), i64({1, 2}, {1, 2}), seq({1, 2})}});  // raises: weights with max

  // index_fill, take, put (frontend/ops_index.cpp); index_copy, index_reduce (ops_index_scatter.cpp).
  const Tensor fill_at = i64({2, -3, 2});
  entry("index_fill", "a0.index_fill(1, " + py_tensor(fill_at) + ", -1.5)",
        one([fill_at](const std::vector<Tensor>& in) { return index_fill(in[0], 1, fill_at, -1.5); }),
        {{seq({2, 3})}, {seq({3, 2}).t()}, {seq({2, 3}, kHalf)}, {seq({2, 2})}});  // the last raises: 2 is out of range
  entry("index_fill:ints", "a0.index_fill(0, a1, 7)",
        one([](const std::vector<Tensor>& in) { return index_fill(in[0], 0, in[1], 7); }),
        {{ints({3, 2}), i64({0, 2})}, {seq({3}, kBool), i64({1})}, {ints({3, 2}), i64({}, {0})}, {ints({3, 2}), i64({-4})},
         {ints({3, 2}), test::make<int32_t>({1})}});  // the last two raise: -4 of 3, an int32 index
  entry("index_fill:tensor", "a0.index_fill(-1, " + py_tensor(i64({0})) + ", a1)",
        one([](const std::vector<Tensor>& in) { return index_fill(in[0], -1, i64({0}), in[1]); }),
        {{seq({2, 3}), seq({}, kDouble, 4.25)}, {seq({}), seq({}, kFloat, 2)}, {seq({2, 3}), seq({1})}});  // the last raises
  const Tensor copy_at = i64({2, 0});
  entry("index_copy", "a0.index_copy(0, " + py_tensor(copy_at) + ", a1)",
        one([copy_at](const std::vector<Tensor>& in) { return index_copy(in[0], 0, copy_at, in[1]); }),
        {{seq({3, 2}), seq({2, 2}, kFloat, 10, 1)},
         {seq({2, 3}).t(), seq({2, 2}, kFloat, 10, 1)},
         {seq({3}, kBool), seq({2}, kBool, 0.0, 1.0)},
         {seq({3, 2}), seq({2, 3})},                // raises: slice shapes
         {seq({3, 2}), seq({2, 2}, kDouble)},       // raises: dtypes
         {seq({1, 2}), seq({2, 2})}});              // raises: index 2 of 1
  entry("index_copy:negative", "a0.index_copy(1, " + py_tensor(i64({-1})) + ", a1)",
        one([](const std::vector<Tensor>& in) { return index_copy(in[0], 1, i64({-1}), in[1]); }),
        {{seq({2, 3}), seq({2, 1})}});  // raises: index_copy takes no negative index
  const Tensor reduce_at = i64({0, 2, 0, 2});
  for (const char* r : {"prod", "mean", "amax", "amin"})
    for (bool self_in : {true, false}) {
      const std::string name = std::string("index_reduce:") + r + (self_in ? "" : "_noself");
      entry(name,
            "a0.index_reduce(0, " + py_tensor(reduce_at) + ", a1, '" + r + "', include_self=" + (self_in ? "True" : "False") + ")",
            one([reduce_at, r, self_in](const std::vector<Tensor>& in) { return index_reduce(in[0], 0, reduce_at, in[1], r, self_in); }),
            {{seq({3, 2}), seq({4, 2}, kFloat, 1.0, -0.5)}, {ints({3, 2}), ints({4, 2}, -2)}});
    }
  entry("index_reduce:errors", "a0.index_reduce(0, a1, a2, 'prod')",
        one([](const std::vector<Tensor>& in) { return index_reduce(in[0], 0, in[1], in[2], "prod"); }),
        {{seq({3, 2}), i64({0, 3}), seq({2, 2})},         // raises: index 3 of 3
         {seq({3, 2}), i64({0, -1}), seq({2, 2})},        // raises: no negative index
         {seq({3, 2}), i64({0, 1}), seq({2, 3})},         // raises: shapes
         {seq({3}, kBool), i64({0}), seq({1}, kBool)}});  // raises: bool
  const Tensor taken = i64({5, -1, 0, 2}, {2, 2});
  entry("take", "torch.take(a0, " + py_tensor(taken) + ")",
        one([taken](const std::vector<Tensor>& in) { return take(in[0], taken); }),
        {{seq({2, 3})}, {seq({3, 2}).t()}, {ints({6})}, {seq({2, 2})}, {seq({0, 3})}});  // the last two raise
  entry("take:input", "torch.take(a0, a1)", one([](const std::vector<Tensor>& in) { return take(in[0], in[1]); }),
        {{seq({2, 3}), seq({}, kLong, 3)}, {seq({}), i64({0, -1, 0})}, {seq({2, 3}), test::make<int32_t>({1})}});  // the last raises
  const Tensor put_at = i64({1, -1, 1});
  entry("put", "a0.put(" + py_tensor(put_at) + ", a1, accumulate=True)",
        one([put_at](const std::vector<Tensor>& in) { return put(in[0], put_at, in[1], true); }),
        {{seq({2, 3}), seq({3}, kFloat, 10, 1)}, {seq({3, 2}).t(), seq({1, 3})}, {ints({2, 2}), ints({3})},
         {seq({2, 3}), seq({2})}, {seq({2, 3}), seq({3}, kDouble)}});  // the last two raise
  entry("put:write", "a0.put(" + py_tensor(i64({4, 0}, {1, 2})) + ", a1)",
        one([](const std::vector<Tensor>& in) { return put(in[0], i64({4, 0}, {1, 2}), in[1]); }),
        {{seq({5}), seq({2}, kFloat, 10, 1)}, {seq({2, 2}), seq({2})}});  // the second raises: 4 of 4
}

}  // namespace kiln::opdb
