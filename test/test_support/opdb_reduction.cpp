// kiln/test/test_support/opdb_reduction.cpp — op database entries: reductions (sum, prod, amax,
// amin, any, all, argmax, argmin, and max and min over a dim with their indices), and nansum,
// count_nonzero, aminmax, linalg_vector_norm and norm.
#include "test_support/opdb.h"

#include "test_support/make.h"

namespace kiln::opdb {

void add_reduction(std::vector<OpEntry>& db) {
  auto red = [&](std::string name, std::string torch, Fn f) {
    db.push_back({name, "reduction", f, torch, {{seq({2, 3})}, {seq({3, 4}).t()}, {seq({2, 0})}, {seq({2, 3}, kLong)}}});
  };
  red("sum", "a0.sum()", one([](const std::vector<Tensor>& in) { return in[0].sum(); }));
  red("sum:dim", "a0.sum(-1, keepdim=True)", one([](const std::vector<Tensor>& in) { return in[0].sum({-1}, true); }));
  red("prod:dim", "a0.prod(0)", one([](const std::vector<Tensor>& in) { return in[0].prod(0); }));
  red("any:dim", "a0.any(1)", one([](const std::vector<Tensor>& in) { return in[0].any(1); }));
  red("all", "a0.all()", one([](const std::vector<Tensor>& in) { return in[0].all(); }));
  auto red_nonempty = [&](std::string name, std::string torch, Fn f) {
    db.push_back({name, "reduction", f, torch, {{seq({2, 3})}, {seq({3, 4}).t()}, {seq({2, 3}, kLong)}, {seq({5})}}});
  };
  // Reductions that record other ops (frontend/ops_reduction_counts.cpp).
  const Tensor with_nan = f32({1, NAN, -2.5, NAN, 4, 0.5}, {2, 3});
  db.push_back({"nansum", "reduction", one([](const std::vector<Tensor>& in) { return nansum(in[0]); }), "torch.nansum(a0)",
                {{with_nan}, {seq({3, 4}).t()}, {seq({2, 3}, kLong)}, {seq({2}, kBool, 0.0, 1.0)}}});
  db.push_back({"nansum:dim", "reduction", one([](const std::vector<Tensor>& in) { return nansum(in[0], {1}, true); }),
                "torch.nansum(a0, dim=[1], keepdim=True)", {{with_nan}, {seq({2, 0})}}});
  db.push_back({"count_nonzero", "reduction", one([](const std::vector<Tensor>& in) { return count_nonzero(in[0]); }),
                "torch.count_nonzero(a0)", {{seq({2, 3}, kFloat, -1.0, 0.5)}, {with_nan}, {seq({2, 0})}}});
  db.push_back({"count_nonzero:dim", "reduction", one([](const std::vector<Tensor>& in) { return count_nonzero(in[0], {0}); }),
                "torch.count_nonzero(a0, dim=[0])", {{ints({3, 2}, -2)}}});
  auto pair = [](auto f) {
    return [f](const std::vector<Tensor>& in) {
      auto [lo, hi] = f(in[0]);
      return std::vector<Tensor>{lo, hi};
    };
  };
  db.push_back({"aminmax", "reduction", pair([](const Tensor& a) { return aminmax(a); }), "torch.aminmax(a0)",
                {{seq({2, 3})}, {seq({3, 4}, kLong).t()}, {with_nan}, {seq({0})}}});  // the last raises: empty
  db.push_back({"aminmax:dim", "reduction", pair([](const Tensor& a) { return aminmax(a, 1, true); }),
                "torch.aminmax(a0, dim=1, keepdim=True)", {{seq({2, 3})}, {seq({0, 3})}, {seq({2, 0})}}});  // the last raises
  red_nonempty("amax", "a0.amax(0)", one([](const std::vector<Tensor>& in) { return in[0].amax({0}); }));
  red_nonempty("amin", "a0.amin()", one([](const std::vector<Tensor>& in) { return in[0].amin(); }));
  red_nonempty("argmax", "a0.argmax(-1, keepdim=True)", one([](const std::vector<Tensor>& in) { return in[0].argmax(-1, true); }));
  red_nonempty("argmin", "a0.argmin()", one([](const std::vector<Tensor>& in) { return in[0].argmin(); }));
  auto maxmin = [&](std::string name, std::string torch, Fn f) {
    db.push_back({name, "reduction", f, torch,
                  {{seq({2, 3})}, {seq({3, 4}).t()}, {seq({2, 3}, kLong)}, {seq({5})}, {specials().reshape({3, 4})},
                   {test::make<double>({1, 3, 3, 0, 3, 1}, {2, 3})}, {seq({2, 3}, kBool)}, {seq({2, 0})}}});
  };
  maxmin("max:dim", "tuple(torch.max(a0, -1))", [](const std::vector<Tensor>& in) {
    auto [v, i] = max(in[0], -1);
    return std::vector<Tensor>{v, i};
  });
  maxmin("max:dim_keepdim", "tuple(torch.max(a0, 0, keepdim=True))", [](const std::vector<Tensor>& in) {
    auto [v, i] = max(in[0], 0, true);
    return std::vector<Tensor>{v, i};
  });
  maxmin("min:dim", "tuple(torch.min(a0, -1))", [](const std::vector<Tensor>& in) {
    auto [v, i] = min(in[0], -1);
    return std::vector<Tensor>{v, i};
  });
  red("any:dims", "a0.any((0, 1))", one([](const std::vector<Tensor>& in) { return any(in[0], {0, 1}); }));
  red("all:dims", "torch.all(a0, (1, 0), keepdim=True)", one([](const std::vector<Tensor>& in) { return all(in[0], {1, 0}, true); }));
  db.push_back({"amax:empty", "reduction", one([](const std::vector<Tensor>& in) { return in[0].amax({1}); }),
                "a0.amax(1)", {{seq({0, 3})}, {seq({2, 0})}}});  // the second raises

  // Vector norms (frontend/ops_reduction_norms.cpp); the zero rows check the gradient there (0).
  auto norm_entry = [&](std::string name, std::string torch, Fn f, std::vector<Sample> samples) {
    db.push_back({name, "reduction", std::move(f), std::move(torch), std::move(samples)});
  };
  const Tensor zero_row = f32({0, 0, 0, 1, -2, 0.5}, {2, 3});
  norm_entry("linalg_vector_norm", "torch.linalg.vector_norm(a0)",
             one([](const std::vector<Tensor>& in) { return linalg_vector_norm(in[0]); }),
             {{seq({2, 3})}, {seq({3, 4}).t()}, {seq({2, 0})}, {seq({4}, kHalf)}, {f32({0, 0, 0})}, {seq({2, 3}, kLong)}});
  norm_entry("linalg_vector_norm:ord3", "torch.linalg.vector_norm(a0, ord=3, dim=[1], keepdim=True)",
             one([](const std::vector<Tensor>& in) { return linalg_vector_norm(in[0], 3, {1}, true); }),
             {{seq({2, 3})}, {zero_row}});
  norm_entry("linalg_vector_norm:ord_half", "torch.linalg.vector_norm(a0, ord=0.5, dim=[1])",
             one([](const std::vector<Tensor>& in) { return linalg_vector_norm(in[0], 0.5, {1}); }), {{zero_row}});
  norm_entry("linalg_vector_norm:inf", "torch.linalg.vector_norm(a0, ord=float('inf'))",
             one([](const std::vector<Tensor>& in) { return linalg_vector_norm(in[0], INFINITY); }),
             {{seq({2, 3})}, {f32({1, -3, 3})}, {seq({0})}});  // the last raises: no identity
  norm_entry("linalg_vector_norm:neg_inf", "torch.linalg.vector_norm(a0, ord=float('-inf'), dim=[0])",
             one([](const std::vector<Tensor>& in) { return linalg_vector_norm(in[0], -INFINITY, {0}); }), {{seq({2, 3})}});
  norm_entry("linalg_vector_norm:zero", "torch.linalg.vector_norm(a0, ord=0)",
             one([](const std::vector<Tensor>& in) { return linalg_vector_norm(in[0], 0); }), {{zero_row}, {seq({0})}});
  norm_entry("linalg_vector_norm:neg", "torch.linalg.vector_norm(a0, ord=-1, dim=[1])",
             one([](const std::vector<Tensor>& in) { return linalg_vector_norm(in[0], -1, {1}); }),
             {{seq({2, 3})}, {zero_row}, {seq({2, 0})}});  // a zero makes its row's norm 0; the last raises
  norm_entry("linalg_vector_norm:one_dtype", "torch.linalg.vector_norm(a0, ord=1, dim=[0], dtype=torch.float64)",
             one([](const std::vector<Tensor>& in) { return linalg_vector_norm(in[0], 1, {0}, false, kDouble); }),
             {{seq({2, 3})}, {zero_row}, {seq({2, 3}, kDouble)}});
  norm_entry("norm", "torch.norm(a0, p=2, dim=[0])",
             one([](const std::vector<Tensor>& in) { return norm(in[0], Scalar(2), {0}); }), {{seq({2, 3})}, {zero_row}});

  // Histograms, integrals (frontend/ops_moments_statistics.cpp) and renorm (ops_reduction_norms.cpp).
  db.push_back({"histc", "reduction", one([](const std::vector<Tensor>& in) { return histc(in[0], 4, -1, 1); }),
                "torch.histc(a0, 4, -1, 1)",
                {{f32({-1, -0.5, 0, 0.5, 1, 1.5, -2, NAN, 0.25, -0.75}, {2, 5})}, {wave({3, 4}, kDouble)}, {seq({0})},
                 {ints({3})}}});  // integers raise
  db.push_back({"histc:data_range", "reduction", one([](const std::vector<Tensor>& in) { return histc(in[0], 5); }),
                "torch.histc(a0, 5)", {{wave({3, 7})}, {f32({2, 2, 2})}, {f32({1, INFINITY})}},  // the last raises: not finite
                std::nullopt, false, /*data_dependent=*/true});  // the range is read from the values
  db.push_back({"histc:errors", "reduction", one([](const std::vector<Tensor>& in) { return histc(in[0], 0); }),
                "torch.histc(a0, 0)", {{wave({3})}}});  // raises
  db.push_back({"bincount", "reduction", one([](const std::vector<Tensor>& in) { return bincount(in[0]); }), "torch.bincount(a0)",
                {{i64({1, 4, 1, 0, 4, 4})}, {test::make<int32_t>({2, 2})}, {i64({1, -1})}, {seq({3})}},
                std::nullopt, false, /*data_dependent=*/true});  // the last two raise
  db.push_back({"bincount:empty", "reduction", one([](const std::vector<Tensor>& in) { return bincount(in[0], in[1], 3); }),
                "torch.bincount(a0, a1, 3)", {{i64({}, {0}), seq({2})}}});  // int64 zeros: nothing read, not even the weights
  db.push_back({"bincount:weights", "reduction",
                one([](const std::vector<Tensor>& in) { return bincount(in[0], in[1], 7); }), "torch.bincount(a0, a1, 7)",
                {{i64({1, 4, 1}), seq({3}, kFloat, 0.5, 0.25)}, {i64({1, 8}), seq({2}, kHalf)}, {i64({1, 4}), seq({3})}},
                std::nullopt, false, /*data_dependent=*/true});  // the last raises
  db.push_back({"trapezoid", "reduction", one([](const std::vector<Tensor>& in) { return trapezoid(in[0]); }),
                "torch.trapezoid(a0)", {{wave({2, 5})}, {seq({4, 3}).t()}, {seq({2, 0})}, {ints({2, 3})}, {seq({3}, kBool)}}});  // bool raises
  db.push_back({"trapezoid:dx", "reduction", one([](const std::vector<Tensor>& in) { return trapezoid(in[0], 0.25, 0); }),
                "torch.trapezoid(a0, dx=0.25, dim=0)", {{wave({4, 2})}, {seq({3}, kHalf)}}});
  db.push_back({"trapezoid:x", "reduction", one([](const std::vector<Tensor>& in) { return trapezoid(in[0], in[1]); }),
                "torch.trapezoid(a0, a1)",
                {{wave({2, 4}), f32({0, 0.5, 2, 2.25})}, {wave({2, 3}), wave({2, 3}, kFloat, 0.3)}, {wave({2, 3}), seq({3}, kDouble)},
                 {wave({2, 3}), seq({2})}}});  // the last raises: one x per sample
  db.push_back({"renorm", "reduction", one([](const std::vector<Tensor>& in) { return renorm(in[0], 2, 0, 1.5); }),
                "torch.renorm(a0, 2, 0, 1.5)",
                {{wave({3, 4}, kFloat, 0.0, 0.9)}, {seq({2, 3, 2}, kHalf)}, {seq({4, 3}).t()}, {seq({3})}, {ints({2, 2})}}});  // the last two raise
  db.push_back({"renorm:p1_dim1", "reduction", one([](const std::vector<Tensor>& in) { return renorm(in[0], 1, -1, 0.5); }),
                "torch.renorm(a0, 1, -1, 0.5)", {{wave({2, 3}, kDouble)}}});
}

}  // namespace kiln::opdb
