// kiln/test/test_support/opdb_index.cpp — op database entries: repeat_interleave, the
// data-dependent selections (nonzero, masked_select, unique), and sorting with what is built
// on it (frontend/ops_sort.h). Golden values: test/opdb_golden/index.txt.
//
// PyTorch's CPU sort is stable only when asked (stable=True), and topk, kthvalue and median
// pick among equal values in an unspecified order; so sort and argsort samples compare with
// stable=True, and the samples of the selecting ops hold distinct values wherever an index is
// compared (kiln's choice among ties is the stable order, docs/decisions.md). mode's samples
// hold at most one NaN: PyTorch's mode sorts with `<`, which leaves NaNs wherever they were,
// so its runs of NaN depend on the neighbours (kiln counts each NaN as its own value).
#include "test_support/opdb.h"

#include "test_support/make.h"

#include <cmath>
#include <numeric>

namespace kiln::opdb {

namespace {

// Distinct values start, start + step, ... placed in a scrambled order: element i holds value
// (i * p) mod n for a multiplier p coprime with n.
Tensor scrambled(std::vector<int64_t> shape, ScalarType dtype = kFloat, double start = -2.5, double step = 0.75) {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  int64_t p = 1;
  for (int64_t c : {7, 5, 3, 11, 13})
    if (std::gcd(c, std::max<int64_t>(n, 1)) == 1) {
      p = c;
      break;
    }
  std::vector<double> v;
  for (int64_t i = 0; i < n; ++i) v.push_back(start + step * static_cast<double>((i * p) % n));
  return test::make<double>(v, std::move(shape)).to(dtype);
}

Tensor i64(std::vector<int64_t> values, std::vector<int64_t> shape = {}) {
  if (shape.empty()) shape = {static_cast<int64_t>(values.size())};
  return test::make<int64_t>(values, std::move(shape));
}

Tensor f32(std::vector<double> values, std::vector<int64_t> shape = {}) {
  if (shape.empty()) shape = {static_cast<int64_t>(values.size())};
  return test::make<double>(values, std::move(shape)).to(kFloat);
}

template <typename F> Fn two(F f) {
  return [f](const std::vector<Tensor>& in) {
    auto [a, b] = f(in);
    return std::vector<Tensor>{a, b};
  };
}

template <typename F> Fn three(F f) {
  return [f](const std::vector<Tensor>& in) {
    auto [a, b, c] = f(in);
    return std::vector<Tensor>{a, b, c};
  };
}

}  // namespace

void add_index(std::vector<OpEntry>& db) {
  const double nan = NAN;
  auto entry = [&](std::string name, std::string torch, Fn f, std::vector<Sample> samples, bool data_dependent = false) {
    db.push_back({std::move(name), "index", std::move(f), std::move(torch), std::move(samples), std::nullopt, false,
                  data_dependent});
  };

  // ---- repeat_interleave ----
  entry("repeat_interleave", "a0.repeat_interleave(2, dim=1)",
        one([](const std::vector<Tensor>& in) { return repeat_interleave(in[0], 2, 1); }),
        {{seq({2, 3})}, {seq({3, 2}).t()}, {seq({0, 3})}, {ints({2, 3})}, {seq({2, 3, 2}, kHalf)}, {seq({2, 3}, kBool)}});
  entry("repeat_interleave:flat", "a0.repeat_interleave(3)",
        one([](const std::vector<Tensor>& in) { return repeat_interleave(in[0], 3); }), {{seq({2, 3})}, {seq({}, kFloat, 2.5)}});
  entry("repeat_interleave:output_size", "a0.repeat_interleave(2, dim=0, output_size=4)",
        one([](const std::vector<Tensor>& in) { return repeat_interleave(in[0], 2, 0, 4); }),
        {{seq({2, 3})}, {seq({3, 2})}});  // the second raises
  entry("repeat_interleave:negative", "a0.repeat_interleave(-1)",
        one([](const std::vector<Tensor>& in) { return repeat_interleave(in[0], -1); }), {{seq({2, 3})}});  // raises
  const Tensor reps = i64({1, 0, 2});
  entry("repeat_interleave:tensor", "torch.repeat_interleave(a0, " + py_tensor(reps) + ", dim=1)",
        one([reps](const std::vector<Tensor>& in) { return repeat_interleave(in[0], reps, 1); }),
        {{seq({2, 3})}, {ints({2, 3})}, {seq({2, 4})}}, /*data_dependent=*/true);  // the last raises
  entry("repeat_interleave:tensor_in", "torch.repeat_interleave(a0, a1, dim=0)",
        one([](const std::vector<Tensor>& in) { return repeat_interleave(in[0], in[1], 0); }),
        {{seq({3, 2}), i64({2, 0, 1})},
         {seq({3}), i64({2}, {1})},
         {seq({3}), test::make<int32_t>({1, 1, 3})},
         {seq({3}), i64({1, -1, 1})},  // raises: negative
         {seq({3}), seq({3})}},        // raises: float repeats
        /*data_dependent=*/true);
  entry("repeat_interleave:repeats_only", "torch.repeat_interleave(a0)",
        one([](const std::vector<Tensor>& in) { return repeat_interleave(in[0]); }),
        {{i64({2, 0, 3})}, {i64({1})}, {i64({1, 2}, {1, 2})}}, /*data_dependent=*/true);  // the last raises: 2-D

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

  // ---- sort, argsort, msort ----
  const Tensor ties = test::make<int64_t>({3, 1, 3, 2, 1, 3, 0, 2, 1, 0, 2, 3}, {3, 4});
  const std::vector<Sample> sortable = {
      {scrambled({3, 4})}, {scrambled({4, 3}).t()}, {ties}, {specials().reshape({3, 4})}, {ties.to(kFloat).t()},
      {seq({2, 3}, kBool)}, {scrambled({2, 5}, kHalf)}, {scrambled({2, 5}, kDouble)}, {seq({2, 0})}, {seq({}, kFloat, 1.5)},
      {ints({2, 3}).remainder(2).to(kUInt8)}};
  entry("sort", "tuple(torch.sort(a0, stable=True))", two([](const std::vector<Tensor>& in) { return sort(in[0]); }), sortable);
  entry("sort:descending", "tuple(torch.sort(a0, dim=0, descending=True, stable=True))",
        two([](const std::vector<Tensor>& in) { return sort(in[0], 0, true); }), sortable);
  entry("sort:stable", "tuple(torch.sort(a0, stable=True, dim=-1))",
        two([](const std::vector<Tensor>& in) { return sort(in[0], std::optional<bool>(true), -1); }), {{ties}});
  entry("argsort", "torch.argsort(a0, dim=1, stable=True)",
        one([](const std::vector<Tensor>& in) { return argsort(in[0], 1); }), {{ties}, {specials().reshape({2, 6})}, {seq({3})}});
  entry("argsort:descending", "torch.argsort(a0, descending=True, stable=True)",
        one([](const std::vector<Tensor>& in) { return argsort(in[0], -1, true); }), {{ties}, {specials().reshape({2, 6})}});
  entry("msort", "torch.msort(a0)", one([](const std::vector<Tensor>& in) { return msort(in[0]); }),
        {{ties}, {specials().reshape({4, 3})}});

  // ---- topk, kthvalue (distinct values wherever an index is compared) ----
  entry("topk", "tuple(torch.topk(a0, 2))", two([](const std::vector<Tensor>& in) { return topk(in[0], 2); }),
        {{scrambled({3, 4})}, {scrambled({4, 3}).t()}, {scrambled({5}, kDouble)}, {scrambled({2, 3}, kLong)},
         {f32({1, nan, 3, -1})}, {seq({1})},  // k = 2 of 1: raises
         {seq({2, 3}, kBool)}});               // raises: bool
  entry("topk:smallest", "tuple(torch.topk(a0, 3, dim=0, largest=False))",
        two([](const std::vector<Tensor>& in) { return topk(in[0], 3, 0, false); }),
        {{scrambled({4, 3})}, {scrambled({3, 2}, kHalf)}, {seq({0, 2})}});  // the last raises
  entry("topk:k0", "tuple(torch.topk(a0, 0))", two([](const std::vector<Tensor>& in) { return topk(in[0], 0); }),
        {{scrambled({2, 3})}});
  entry("kthvalue", "tuple(torch.kthvalue(a0, 2, 1))", two([](const std::vector<Tensor>& in) { return kthvalue(in[0], 2, 1); }),
        {{scrambled({3, 4})}, {scrambled({4, 3}).t()}, {scrambled({2, 5}, kLong)}, {f32({nan, 1, 0.5}, {1, 3})},
         {seq({3, 1})}});  // raises: k = 2 of 1
  entry("kthvalue:keepdim", "tuple(torch.kthvalue(a0, 1, 0, True))",
        two([](const std::vector<Tensor>& in) { return kthvalue(in[0], 1, 0, true); }), {{scrambled({3, 4})}, {seq({}, kFloat, 4)}});

  // ---- median, nanmedian, mode ----
  const Tensor with_nan = f32({2, nan, 1, 5, 4, 3, nan, 0, 7, 6, 9, 8}, {3, 4});
  entry("median", "torch.median(a0)", one([](const std::vector<Tensor>& in) { return median(in[0]); }),
        {{scrambled({3, 4})}, {scrambled({5})}, {ties}, {with_nan}, {seq({0})}, {ints({0})}, {seq({}, kFloat, 3)},
         {scrambled({2, 3}, kHalf)}});  // the empty int64 raises
  entry("median:dim", "tuple(torch.median(a0, 1))", two([](const std::vector<Tensor>& in) { return median(in[0], 1); }),
        {{scrambled({3, 4})}, {scrambled({4, 3}).t()}, {scrambled({2, 5}, kLong)}, {with_nan}, {seq({2, 0})}});  // the last raises
  entry("median:keepdim", "tuple(torch.median(a0, 0, keepdim=True))",
        two([](const std::vector<Tensor>& in) { return median(in[0], 0, true); }), {{scrambled({3, 4})}, {seq({}, kFloat, 3)}});
  entry("nanmedian", "torch.nanmedian(a0)", one([](const std::vector<Tensor>& in) { return nanmedian(in[0]); }),
        {{with_nan}, {f32({nan, nan})}, {scrambled({5})}});
  entry("nanmedian:dim", "tuple(torch.nanmedian(a0, 1, keepdim=True))",
        two([](const std::vector<Tensor>& in) { return nanmedian(in[0], 1, true); }),
        {{with_nan}, {f32({nan, nan, 1, nan}, {2, 2})}, {scrambled({2, 5}, kLong)}});
  const Tensor modal = test::make<int64_t>({1, 2, 2, 3, 3, 1, 5, 5, 5, 1, 1, 2}, {2, 6});
  entry("mode", "tuple(torch.mode(a0))", two([](const std::vector<Tensor>& in) { return mode(in[0]); }),
        {{modal}, {modal.to(kFloat)}, {modal.t().contiguous().t()}, {scrambled({2, 3})}, {f32({nan, 1, 1, -1}, {1, 4})},
         {seq({2, 3}, kBool)}, {seq({}, kFloat, 2)}, {seq({2, 0})}});  // the last raises
  entry("mode:dim0", "tuple(torch.mode(a0, 0, keepdim=True))",
        two([](const std::vector<Tensor>& in) { return mode(in[0], 0, true); }), {{modal.t()}, {modal.t().to(kHalf)}});

  // ---- unique, unique_consecutive (data-dependent) ----
  const std::vector<Sample> repeated = {{ties}, {ties.to(kFloat).t()}, {f32({nan, 1, nan, 1, 0, -0.0})}, {seq({2, 3}, kBool)},
                                        {seq({0, 2})}, {seq({}, kFloat, 2)}};
  entry("unique", "torch.unique(a0)", one([](const std::vector<Tensor>& in) { return std::get<0>(unique(in[0])); }), repeated,
        true);
  entry("unique:inverse_counts", "torch.unique(a0, return_inverse=True, return_counts=True)",
        three([](const std::vector<Tensor>& in) { return unique(in[0], true, true, true); }), repeated, true);
  entry("unique_dim", "torch.unique(a0, dim=0, return_inverse=True, return_counts=True)",
        three([](const std::vector<Tensor>& in) { return unique_dim(in[0], 0, true, true, true); }),
        {{i64({1, 2, 0, 5, 1, 2, 0, 1, 0, 5}, {5, 2})}, {i64({3, 1, 3, 2, 1, 2}, {2, 3}).t()}, {seq({0, 2})}}, true);
  entry("unique_dim:1", "torch.unique(a0, dim=1)", one([](const std::vector<Tensor>& in) { return std::get<0>(unique_dim(in[0], 1)); }),
        {{i64({1, 2, 1, 3, 0, 3, 0, 1}, {2, 4})}, {f32({0.5, 0.5, -1, -1, 2, 2}, {3, 2})}}, true);
  entry("unique_consecutive", "torch.unique_consecutive(a0, return_inverse=True, return_counts=True)",
        three([](const std::vector<Tensor>& in) { return unique_consecutive(in[0], true, true); }),
        {{i64({1, 1, 2, 2, 3, 1, 1, 2})}, {ties}, {f32({nan, nan, 1, 1})}, {seq({0})}}, true);
  entry("unique_consecutive:dim", "torch.unique_consecutive(a0, return_inverse=True, return_counts=True, dim=0)",
        three([](const std::vector<Tensor>& in) { return unique_consecutive(in[0], true, true, 0); }),
        {{i64({1, 2, 1, 2, 3, 4, 3, 4, 3, 4, 1, 2}, {6, 2})}, {i64({1, 1, 2}, {3})}}, true);

  // ---- randperm ----
  db.push_back({"randperm", "index", one([](const std::vector<Tensor>& in) { return randperm(in[0].numel()); }),
                "torch.randperm(a0.numel())", {{seq({2, 3})}, {seq({0})}}, std::nullopt, /*random=*/true});
  entry("randperm:is_permutation", "torch.sort(torch.randperm(a0.numel()))[0]",
        one([](const std::vector<Tensor>& in) { return std::get<0>(sort(randperm(in[0].numel()))); }), {{seq({3, 5})}});

  // ---- searchsorted, bucketize ----
  const Tensor bounds = f32({-1, 0.5, 0.5, 2, 7});
  const Tensor probes = f32({-3, 0.5, 1, 2, 9, nan}, {2, 3});
  entry("searchsorted", "torch.searchsorted(a0, a1)",
        one([](const std::vector<Tensor>& in) { return searchsorted(in[0], in[1]); }),
        {{bounds, probes},
         {bounds, probes.t()},
         {i64({1, 3, 5}), f32({2.5, 3, 6})},
         {f32({0, 1, 2, 1, 2, 3}, {2, 3}), f32({0.5, 1, 2, 2.5}, {2, 2})},
         {bounds, seq({}, kFloat, 0.5)},
         {f32({}), probes},
         {f32({0, 1, 2, 1, 2, 3}, {2, 3}), f32({0.5, 1, 2}, {3, 1})},  // raises: leading dims differ
         {seq({}, kFloat, 1), probes}});                                 // raises: 0-dim boundaries
  entry("searchsorted:right", "torch.searchsorted(a0, a1, right=True, out_int32=True)",
        one([](const std::vector<Tensor>& in) { return searchsorted(in[0], in[1], true, true); }), {{bounds, probes}});
  entry("searchsorted:side", "torch.searchsorted(a0, a1, side='right')",
        one([](const std::vector<Tensor>& in) { return searchsorted(in[0], in[1], false, false, "right"); }), {{bounds, probes}});
  entry("searchsorted:bad_side", "torch.searchsorted(a0, a1, right=True, side='left')",
        one([](const std::vector<Tensor>& in) { return searchsorted(in[0], in[1], false, true, "left"); }),
        {{bounds, probes}});  // raises
  const Tensor sorter = i64({1, 2, 0, 3});
  entry("searchsorted:sorter", "torch.searchsorted(a0, a1, sorter=" + py_tensor(sorter) + ")",
        one([sorter](const std::vector<Tensor>& in) { return searchsorted(in[0], in[1], false, false, std::nullopt, sorter); }),
        {{f32({3, 1, 2, 5}), f32({0, 2, 4, 6})}, {f32({3, 1, 2}), f32({0})}});  // the second raises
  entry("searchsorted:scalar", "torch.searchsorted(a0, 2.5)",
        one([](const std::vector<Tensor>& in) { return searchsorted(in[0], Scalar(2.5)); }), {{i64({1, 3, 5})}, {bounds}});
  entry("bucketize", "torch.bucketize(a0, a1)", one([](const std::vector<Tensor>& in) { return bucketize(in[0], in[1]); }),
        {{probes, bounds}, {i64({0, 3, 8}), i64({1, 3, 5})}, {probes, bounds.reshape({1, 5})}});  // the last raises
  entry("bucketize:right", "torch.bucketize(a0, a1, right=True)",
        one([](const std::vector<Tensor>& in) { return bucketize(in[0], in[1], false, true); }), {{probes, bounds}});

  // ---- writing at positions (frontend/ops_scatter.cpp) ----
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
}

}  // namespace kiln::opdb
