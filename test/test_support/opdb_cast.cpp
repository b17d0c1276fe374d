// kiln/test/test_support/opdb_cast.cpp — op database entries: dtype conversions (to), clone,
// detach and no_grad_copy (a write under NoGradGuard inside grad).
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
  // no_grad_copy: a write under NoGradGuard inside a differentiated function keeps the written
  // tensor's place for the gradient: d/da sum(u * a) with u = a, halved without grad, is
  // u + a = 1.5 a (and its derivative 2, through the write, as PyTorch's).
  db.push_back({"no_grad_copy", "cast",
                one([](const std::vector<Tensor>& in) {
                  const TensorFn h = [](const std::vector<Tensor>& a) {
                    Tensor u = a[0] * 1.0;
                    {
                      NoGradGuard no_grad;
                      u.mul_(0.5);
                    }
                    return std::vector<Tensor>{(u * a[0]).sum()};
                  };
                  return grad(h)({in[0]}).at(0);
                }),
                "torch.func.grad(lambda a: (lambda u: (torch.no_grad()(lambda: u.mul_(0.5))(), (u * a).sum())[1])(a * 1.0))(a0)",
                {{wave({2, 3})}, {wave({4}, kDouble)}}});
}

}  // namespace kiln::opdb
