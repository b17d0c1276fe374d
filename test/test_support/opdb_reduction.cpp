// kiln/test/test_support/opdb_reduction.cpp — op database entries: reductions (sum, prod, amax,
// amin, any, all, argmax, argmin, and max and min over a dim with their indices).
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
}

}  // namespace kiln::opdb
