// kiln/test/test_support/opdb_sort.cpp — op database entries: sorting and what is built on it
// (frontend/ops_sort.h): sort, argsort, msort, topk, kthvalue, median, nanmedian, mode, unique,
// unique_consecutive, randperm, searchsorted and bucketize.
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

void add_sort(std::vector<OpEntry>& db) {
  const double nan = NAN;
  auto entry = [&](std::string name, std::string torch, Fn f, std::vector<Sample> samples, bool data_dependent = false) {
    db.push_back({std::move(name), "sort", std::move(f), std::move(torch), std::move(samples), std::nullopt, false,
                  data_dependent});
  };

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
  db.push_back({"randperm", "sort", one([](const std::vector<Tensor>& in) { return randperm(in[0].numel()); }),
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

  // ---- quantile, nanquantile (frontend/ops_moments_statistics.cpp) ----
  const Tensor qs = f32({0.0, 0.1, 0.5, 0.75, 1.0});
  for (const char* mode : {"linear", "lower", "higher", "midpoint", "nearest"}) {
    entry(std::string("quantile:") + mode, "torch.quantile(a0, " + py_tensor(qs) + ", dim=1, interpolation='" + mode + "')",
          one([qs, mode](const std::vector<Tensor>& in) { return quantile(in[0], qs, 1, false, mode); }),
          {{wave({2, 11})}, {wave({6, 2}).t()}, {f32({1, NAN, 3, 4, 5, 6}, {2, 3})}});
    entry(std::string("nanquantile:") + mode, "torch.nanquantile(a0, 0.3, dim=0, keepdim=True, interpolation='" + std::string(mode) + "')",
          one([mode](const std::vector<Tensor>& in) { return nanquantile(in[0], 0.3, 0, true, mode); }),
          {{wave({7, 2})}, {f32({1, NAN, NAN, NAN, 5, 2, NAN, NAN}, {4, 2})}});
  }
  entry("quantile:all", "torch.quantile(a0, a1)", one([](const std::vector<Tensor>& in) { return quantile(in[0], in[1]); }),
        {{wave({3, 4}, kDouble), seq({2}, kDouble, 0.25, 0.5)},
         {wave({5}), seq({}, kFloat, 0.9)},
         {wave({5}), f32({0.5, 1.5})},                 // raises: q past 1
         {wave({5}), seq({2}, kDouble, 0.25, 0.5)},    // raises: q's dtype
         {seq({0}), f32({0.5})},                       // raises: empty
         {seq({3}, kHalf), seq({1}, kHalf, 0.3)}});    // raises: f16 (gradcheck, in f64, differentiates q off an integer rank)
  entry("quantile:keepdim_all", "torch.quantile(a0, " + py_tensor(f32({0.2, 0.8})) + ", keepdim=True)",
        one([](const std::vector<Tensor>& in) { return quantile(in[0], f32({0.2, 0.8}), std::nullopt, true); }),
        {{wave({2, 3, 2})}, {seq({})}});
  entry("quantile:scalar_range", "torch.quantile(a0, 1.5)", one([](const std::vector<Tensor>& in) { return quantile(in[0], 1.5); }),
        {{wave({4})}});  // raises
}

}  // namespace kiln::opdb
