// kiln/test/test_support/opdb_dropout.cpp — op database entries: dropout and native_dropout.
//
// Training-mode draws are random (compared by dtype and shape only); evaluation and p = 1 are
// compared exactly.
#include "test_support/opdb.h"

#include <string>

namespace kiln::opdb {

void add_dropout(std::vector<OpEntry>& db) {
  const std::string F = "torch.nn.functional.";
  auto entry = [&](std::string name, std::string torch, Fn f, std::vector<Sample> samples) {
    db.push_back({std::move(name), "dropout", std::move(f), std::move(torch), std::move(samples)});
  };

  // ---- dropout: random; evaluation and p = 0 return the input ----
  db.push_back({"dropout", "dropout", one([](const std::vector<Tensor>& in) { return dropout(in[0], 0.5, true); }),
                F + "dropout(a0, 0.5, True)", {{wave({4, 5})}, {wave({3}, kHalf)}, {ints({3})}}, std::nullopt,
                /*random=*/true});
  entry("dropout:eval", F + "dropout(a0, 0.5, False)",
        one([](const std::vector<Tensor>& in) { return dropout(in[0], 0.5, false); }), {{wave({4, 5})}});
  entry("dropout:p1", F + "dropout(a0, 1.0, True)",
        one([](const std::vector<Tensor>& in) { return dropout(in[0], 1.0, true); }),
        {{wave({4, 5})}, {specials()}});
  db.push_back({"native_dropout", "dropout",
                [](const std::vector<Tensor>& in) {
                  auto [out, mask] = native_dropout(in[0], 0.25, true);
                  return std::vector<Tensor>{out, mask};
                },
                "tuple(torch.native_dropout(a0, 0.25, True))", {{wave({4, 5})}}, std::nullopt, /*random=*/true});
  entry("native_dropout:eval", "tuple(torch.native_dropout(a0, 0.5, False))",
        [](const std::vector<Tensor>& in) {
          auto [out, mask] = native_dropout(in[0], 0.5, false);
          return std::vector<Tensor>{out, mask};
        },
        {{wave({4, 5})}, {ints({3})}});
  entry("dropout:bad_p", F + "dropout(a0, 1.5, True)",
        one([](const std::vector<Tensor>& in) { return dropout(in[0], 1.5, true); }), {{wave({2})}});
}

}  // namespace kiln::opdb
