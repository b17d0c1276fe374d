// kiln/test/test_support/opdb_ternary.cpp — op database entries: where, clamp (scalar and
// tensor bounds) and clip.
#include "test_support/opdb.h"

namespace kiln::opdb {

void add_ternary(std::vector<OpEntry>& db) {
  db.push_back({"where", "ternary", one([](const std::vector<Tensor>& in) { return where(in[0] > 0, in[0], in[1]); }),
                "torch.where(a0 > 0, a0, a1)", binary_samples(kFloat, kLong)});
  db.push_back({"clip", "ternary", one([](const std::vector<Tensor>& in) { return clip(in[0], -1.0, 1.5); }),
                "torch.clip(a0, -1.0, 1.5)", {{seq({2, 3})}, {seq({3, 2}).t()}, {ints({2, 3})}}});
  db.push_back({"clamp:scalar", "ternary", one([](const std::vector<Tensor>& in) { return clamp(in[0], -1.0, 1.5); }),
                "torch.clamp(a0, -1.0, 1.5)", unary_samples(kFloat)});
  db.push_back({"clamp:tensor", "ternary",
                one([](const std::vector<Tensor>& in) { return clamp(in[0], std::optional<Tensor>(in[1]), std::nullopt); }),
                "torch.clamp(a0, a1, None)", binary_samples(kFloat, kFloat)});
}

}  // namespace kiln::opdb
