// kiln/test/test_support/opdb_matmul.cpp — op database entries: mm and bmm.
#include "test_support/opdb.h"

namespace kiln::opdb {

void add_matmul(std::vector<OpEntry>& db) {
  db.push_back({"mm", "matmul", one([](const std::vector<Tensor>& in) { return mm(in[0], in[1]); }), "torch.mm(a0, a1)",
                {{seq({2, 3}), seq({3, 4})}, {seq({3, 2}).t(), seq({3, 1}, kDouble)}, {seq({2, 3}, kDouble), seq({3, 2}, kDouble)},
                 {seq({2, 3}, kLong), ints({3, 2})}, {seq({3}), seq({3, 2})}}});  // mixed dtypes and 1-D raise
  db.push_back({"bmm", "matmul", one([](const std::vector<Tensor>& in) { return bmm(in[0], in[1]); }), "torch.bmm(a0, a1)",
                {{seq({2, 2, 3}), seq({2, 3, 4})}, {seq({2, 3, 2}).transpose(1, 2), seq({2, 3, 1})}}});
}

}  // namespace kiln::opdb
