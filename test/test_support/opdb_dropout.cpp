// kiln/test/test_support/opdb_dropout.cpp — op database entries: dropout, native_dropout and
// channel-wise dropout (dropout1d/2d/3d).
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

  // ---- channel-wise: random in training; evaluation and p = 1 exact; ranks each refuses ----
  struct Channel {
    const char* name;
    Tensor (*fn)(const Tensor&, double, bool);
    std::vector<Sample> training;
  };
  const std::vector<Channel> channels = {
      {"dropout1d", dropout1d, {{wave({2, 3, 4})}, {wave({3, 4})}, {wave({3}, kHalf)}, {wave({2, 3, 4, 5})}}},
      {"dropout2d", dropout2d, {{wave({2, 3, 4, 5})}, {wave({2, 3, 4}, kDouble)}, {wave({2, 0, 3, 3})}, {wave({3})}, {ints({2, 3})}}},
      {"dropout3d", dropout3d, {{wave({2, 3, 2, 2, 2})}, {wave({3, 2, 2, 2})}, {wave({3})}, {wave({})}}},
  };
  for (const Channel& c : channels) {
    auto fn = c.fn;
    const std::string name = c.name;
    db.push_back({name, "dropout", one([fn](const std::vector<Tensor>& in) { return fn(in[0], 0.5, true); }),
                  F + name + "(a0, 0.5, True)", c.training, std::nullopt, /*random=*/true});
    entry(name + ":eval", F + name + "(a0, 0.5, False)",
          one([fn](const std::vector<Tensor>& in) { return fn(in[0], 0.5, false); }), {{wave({2, 3, 4})}, {ints({2, 3})}});
    // p = 1: input * 0 before any rank or dtype check (dropout1d checks its rank first).
    entry(name + ":p1", F + name + "(a0, 1.0, True)", one([fn](const std::vector<Tensor>& in) { return fn(in[0], 1.0, true); }),
          {{specials().reshape({2, 6, 1})}, {specials()}, {ints({2, 3, 1})}, {seq({2, 3, 1}, kBool)}});
    entry(name + ":bad_p", F + name + "(a0, -0.5, True)",
          one([fn](const std::vector<Tensor>& in) { return fn(in[0], -0.5, true); }), {{wave({2, 3, 4})}});
  }
}

}  // namespace kiln::opdb
