// kiln/test/test_support/opdb_cast.cpp — op database entries: dtype conversions (to), clone and detach.
#include "test_support/opdb.h"

namespace kiln::opdb {

void add_cast(std::vector<OpEntry>& db) {
  db.push_back({"to:f16", "cast", one([](const std::vector<Tensor>& in) { return in[0].to(kHalf); }),
                "a0.to(torch.float16)", unary_samples(kFloat)});
  db.push_back({"to:i8", "cast", one([](const std::vector<Tensor>& in) { return in[0].to(kChar); }),
                "a0.to(torch.int8)", unary_samples(kFloat)});
  db.push_back({"clone", "cast", one([](const std::vector<Tensor>& in) { return in[0].clone(); }), "a0.clone()",
                unary_samples(kFloat)});
  // detach's value is its input's; times the input, its gradient is the input (not twice it).
  db.push_back({"detach", "cast", one([](const std::vector<Tensor>& in) { return in[0].detach() * in[0]; }),
                "a0.detach() * a0", unary_samples(kFloat)});
}

}  // namespace kiln::opdb
