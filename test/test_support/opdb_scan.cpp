// kiln/test/test_support/opdb_scan.cpp — op database entries: scans (cumsum, cumprod, cummax,
// cummin, logcumsumexp, cumulative_trapezoid).
#include "test_support/opdb.h"

#include "test_support/make.h"

namespace kiln::opdb {

void add_scan(std::vector<OpEntry>& db) {
  auto scan = [&](std::string name, std::string torch, Fn f) {
    db.push_back({name, "scan", f, torch, {{seq({2, 3})}, {seq({3, 4}).t()}, {seq({2, 0})}, {seq({2, 3}, kLong)}}});
  };
  scan("cumsum", "a0.cumsum(1)", one([](const std::vector<Tensor>& in) { return in[0].cumsum(1); }));
  scan("cumprod", "a0.cumprod(0)", one([](const std::vector<Tensor>& in) { return in[0].cumprod(0); }));
  // Scans with indices: ties give the latest position, NaN propagates with its position.
  auto scans = [&](std::string name, std::string torch, Fn f) {
    db.push_back({name, "scan", f, torch,
                  {{seq({2, 3})}, {seq({3, 4}).t()}, {seq({2, 0})}, {ints({2, 3})}, {seq({}, kFloat, 2.5)},
                   {test::make<double>({1, 3, 3, 0, 3, 1}, {2, 3})}, {specials().reshape({3, 4})},
                   {test::make<bool>({false, true, false, true, false, false}, {2, 3})}, {seq({2, 5}, kHalf)}}});
  };
  scans("cummax", "tuple(torch.cummax(a0, -1))", [](const std::vector<Tensor>& in) {
    auto [v, i] = cummax(in[0], -1);
    return std::vector<Tensor>{v, i};
  });
  scans("cummin", "tuple(torch.cummin(a0, 0))", [](const std::vector<Tensor>& in) {
    auto [v, i] = cummin(in[0], 0);
    return std::vector<Tensor>{v, i};
  });
  db.push_back({"logcumsumexp", "scan", one([](const std::vector<Tensor>& in) { return logcumsumexp(in[0], -1); }),
                "torch.logcumsumexp(a0, -1)",
                {{seq({2, 3})}, {seq({3, 4}).t()}, {seq({2, 0})}, {specials().reshape({3, 4})}, {seq({2, 5}, kBFloat16)},
                 {seq({2, 3}, kDouble, 300.0, 100.0)}, {seq({2, 3}, kFloat, -200.0, 50.0)}, {ints({2, 3})}}});

  // The running trapezoidal rule (frontend/ops_moments_statistics.cpp).
  db.push_back({"cumulative_trapezoid", "scan", one([](const std::vector<Tensor>& in) { return cumulative_trapezoid(in[0]); }),
                "torch.cumulative_trapezoid(a0)", {{seq({2, 5})}, {seq({4, 3}).t()}, {seq({2, 0})}, {ints({2, 3})}}});
  db.push_back({"cumulative_trapezoid:x", "scan",
                one([](const std::vector<Tensor>& in) { return cumulative_trapezoid(in[0], in[1], 0); }),
                "torch.cumulative_trapezoid(a0, a1, dim=0)",
                {{seq({3, 2}), f32({0, 0.5, 2})}, {seq({3, 2}), seq({3, 2}, kFloat, 1.0, 0.25)}, {seq({3, 2}), seq({2})}}});  // the last raises
}

}  // namespace kiln::opdb
