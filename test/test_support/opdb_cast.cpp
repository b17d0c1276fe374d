// kiln/test/test_support/opdb_cast.cpp — op database entries: dtype conversions (to) and clone.
#include "test_support/opdb.h"

namespace kiln::opdb {

void add_cast(std::vector<OpEntry>& db) {
  db.push_back({"to:f16", "cast", one([](const std::vector<Tensor>& in) { return in[0].to(kHalf); }),
                "a0.to(torch.float16)", unary_samples(kFloat)});
  db.push_back({"to:i8", "cast", one([](const std::vector<Tensor>& in) { return in[0].to(kChar); }),
                "a0.to(torch.int8)", unary_samples(kFloat)});
  db.push_back({"clone", "cast", one([](const std::vector<Tensor>& in) { return in[0].clone(); }), "a0.clone()",
                unary_samples(kFloat)});
}

}  // namespace kiln::opdb
