// kiln/test/test_support/opdb_reduce.cpp — op database entries: reductions and scans.
#include "test_support/opdb.h"

#include "test_support/make.h"

namespace kiln::opdb {

void add_reduce(std::vector<OpEntry>& db) {
  auto red = [&](std::string name, std::string torch, Fn f) {
    db.push_back({name, "reduce", f, torch, {{seq({2, 3})}, {seq({3, 4}).t()}, {seq({2, 0})}, {seq({2, 3}, kLong)}}});
  };
  red("sum", "a0.sum()", one([](const std::vector<Tensor>& in) { return in[0].sum(); }));
  red("sum:dim", "a0.sum(-1, keepdim=True)", one([](const std::vector<Tensor>& in) { return in[0].sum({-1}, true); }));
  red("prod:dim", "a0.prod(0)", one([](const std::vector<Tensor>& in) { return in[0].prod(0); }));
  red("any:dim", "a0.any(1)", one([](const std::vector<Tensor>& in) { return in[0].any(1); }));
  red("all", "a0.all()", one([](const std::vector<Tensor>& in) { return in[0].all(); }));
  red("cumsum", "a0.cumsum(1)", one([](const std::vector<Tensor>& in) { return in[0].cumsum(1); }));
  red("cumprod", "a0.cumprod(0)", one([](const std::vector<Tensor>& in) { return in[0].cumprod(0); }));
  auto red_nonempty = [&](std::string name, std::string torch, Fn f) {
    db.push_back({name, "reduce", f, torch, {{seq({2, 3})}, {seq({3, 4}).t()}, {seq({2, 3}, kLong)}, {seq({5})}}});
  };
  red_nonempty("amax", "a0.amax(0)", one([](const std::vector<Tensor>& in) { return in[0].amax({0}); }));
  red_nonempty("amin", "a0.amin()", one([](const std::vector<Tensor>& in) { return in[0].amin(); }));
  red_nonempty("argmax", "a0.argmax(-1, keepdim=True)", one([](const std::vector<Tensor>& in) { return in[0].argmax(-1, true); }));
  red_nonempty("argmin", "a0.argmin()", one([](const std::vector<Tensor>& in) { return in[0].argmin(); }));
  red_nonempty("mean", "a0.to(torch.float32).mean(-1)",
               one([](const std::vector<Tensor>& in) { return in[0].to(kFloat).mean({-1}); }));
  red_nonempty("mean:all", "a0.mean()", one([](const std::vector<Tensor>& in) { return in[0].mean(); }));  // PyTorch raises for the int64 sample
  db.push_back({"logsumexp", "reduce", one([](const std::vector<Tensor>& in) { return logsumexp(in[0], {-1}); }),
                "torch.logsumexp(a0, -1)",
                {{seq({2, 3})}, {seq({3, 4}).t()}, {seq({2, 0})}, {seq({2, 3}, kLong)}, {seq({5}, kHalf)},
                 {specials().reshape({3, 4})}, {seq({2, 3}, kDouble, 300.0, 100.0)}}});
  db.push_back({"logsumexp:dims", "reduce", one([](const std::vector<Tensor>& in) { return logsumexp(in[0], {0, 2}, true); }),
                "torch.logsumexp(a0, [0, 2], keepdim=True)",
                {{seq({2, 3, 4})}, {seq({4, 3, 2}).permute({2, 1, 0})}, {seq({0, 2, 3})}, {seq({2, 3})}}});  // the last raises
  auto maxmin = [&](std::string name, std::string torch, Fn f) {
    db.push_back({name, "reduce", f, torch,
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
  // Scans with indices: ties give the latest position, NaN propagates with its position.
  auto scans = [&](std::string name, std::string torch, Fn f) {
    db.push_back({name, "reduce", f, torch,
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
  db.push_back({"logcumsumexp", "reduce", one([](const std::vector<Tensor>& in) { return logcumsumexp(in[0], -1); }),
                "torch.logcumsumexp(a0, -1)",
                {{seq({2, 3})}, {seq({3, 4}).t()}, {seq({2, 0})}, {specials().reshape({3, 4})}, {seq({2, 5}, kBFloat16)},
                 {seq({2, 3}, kDouble, 300.0, 100.0)}, {seq({2, 3}, kFloat, -200.0, 50.0)}, {ints({2, 3})}}});
  db.push_back({"amax:empty", "reduce", one([](const std::vector<Tensor>& in) { return in[0].amax({1}); }),
                "a0.amax(1)", {{seq({0, 3})}, {seq({2, 0})}}});  // the second raises
}

}  // namespace kiln::opdb
