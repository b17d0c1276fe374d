// kiln/test/test_support/opdb_random.cpp — op database entries: random draws (rand_like,
// randn_like), compared by dtype and shape only.
#include "test_support/opdb.h"

namespace kiln::opdb {

void add_random(std::vector<OpEntry>& db) {
  db.push_back({"rand_like", "random", one([](const std::vector<Tensor>& in) { return rand_like(in[0]); }),
                "torch.rand_like(a0)", {{seq({2, 3})}, {seq({4}, kDouble)}}, std::nullopt, /*random=*/true});
  db.push_back({"randn_like", "random", one([](const std::vector<Tensor>& in) { return randn_like(in[0]); }),
                "torch.randn_like(a0)", {{seq({2, 3})}}, std::nullopt, /*random=*/true});
}

}  // namespace kiln::opdb
