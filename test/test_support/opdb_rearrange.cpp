// kiln/test/test_support/opdb_rearrange.cpp — op database entries: repeat, roll, flip, diff
// and repeat_interleave (frontend/ops_rearrange.cpp).
#include "test_support/opdb.h"

#include "test_support/make.h"

namespace kiln::opdb {

void add_rearrange(std::vector<OpEntry>& db) {
  // ---- repeat, roll, flip, diff ----
  auto rearr = [&](std::string name, std::string torch, Fn f) {
    db.push_back({name, "rearrange", f, torch,
                  {{seq({2, 3})}, {seq({3, 2}).t()}, {seq({0, 3})}, {ints({2, 3})}, {seq({2, 3, 2}, kHalf)}, {seq({2, 3}, kBool)}}});
  };
  rearr("repeat", "a0.repeat(2, 1, 3)", one([](const std::vector<Tensor>& in) { return repeat(in[0], {2, 1, 3}); }));
  rearr("repeat:ones", "a0.repeat(1, 1, 1) + 0", one([](const std::vector<Tensor>& in) { return repeat(in[0], {1, 1, 1}) + 0; }));
  rearr("roll", "torch.roll(a0, 1, 1)", one([](const std::vector<Tensor>& in) { return roll(in[0], {1}, {1}); }));
  rearr("roll:dims", "torch.roll(a0, (-4, 5), (0, -1))", one([](const std::vector<Tensor>& in) { return roll(in[0], {-4, 5}, {0, -1}); }));
  rearr("roll:flat", "torch.roll(a0, 2)", one([](const std::vector<Tensor>& in) { return roll(in[0], {2}); }));
  rearr("flip", "torch.flip(a0, (0, 1))", one([](const std::vector<Tensor>& in) { return flip(in[0], {0, 1}); }));
  rearr("flip:last", "torch.flip(a0, (-1,))", one([](const std::vector<Tensor>& in) { return flip(in[0], {-1}); }));
  rearr("diff", "torch.diff(a0)", one([](const std::vector<Tensor>& in) { return diff(in[0]); }));
  rearr("diff:n2_dim0", "torch.diff(a0, n=2, dim=0)", one([](const std::vector<Tensor>& in) { return diff(in[0], 2, 0); }));
  db.push_back({"diff:prepend", "rearrange",
                one([](const std::vector<Tensor>& in) { return diff(in[0], 1, -1, in[1], in[1]); }),
                "torch.diff(a0, prepend=a1, append=a1)", {{seq({2, 3}), seq({2, 1})}, {seq({4}), seq({2})}}});

  // ---- repeat_interleave ----
  auto entry = [&](std::string name, std::string torch, Fn f, std::vector<Sample> samples, bool data_dependent = false) {
    db.push_back({std::move(name), "rearrange", std::move(f), std::move(torch), std::move(samples), std::nullopt, false,
                  data_dependent});
  };
  entry("repeat_interleave", "a0.repeat_interleave(2, dim=1)",
        one([](const std::vector<Tensor>& in) { return repeat_interleave(in[0], 2, 1); }),
        {{seq({2, 3})}, {seq({3, 2}).t()}, {seq({0, 3})}, {ints({2, 3})}, {seq({2, 3, 2}, kHalf)}, {seq({2, 3}, kBool)}});
  entry("repeat_interleave:flat", "a0.repeat_interleave(3)",
        one([](const std::vector<Tensor>& in) { return repeat_interleave(in[0], 3); }), {{seq({2, 3})}, {seq({}, kFloat, 2.5)}});
  entry("repeat_interleave:output_size", "a0.repeat_interleave(2, dim=0, output_size=4)",
        one([](const std::vector<Tensor>& in) { return repeat_interleave(in[0], 2, 0, 4); }),
        {{seq({2, 3})}, {seq({3, 2})}});  // the second raises
  entry("repeat_interleave:negative", "a0.repeat_interleave(-1)",
        one([](const std::vector<Tensor>& in) { return repeat_interleave(in[0], -1); }), {{seq({2, 3})}});  // raises
  const Tensor reps = i64({1, 0, 2});
  entry("repeat_interleave:tensor", "torch.repeat_interleave(a0, " + py_tensor(reps) + ", dim=1)",
        one([reps](const std::vector<Tensor>& in) { return repeat_interleave(in[0], reps, 1); }),
        {{seq({2, 3})}, {ints({2, 3})}, {seq({2, 4})}}, /*data_dependent=*/true);  // the last raises
  entry("repeat_interleave:tensor_in", "torch.repeat_interleave(a0, a1, dim=0)",
        one([](const std::vector<Tensor>& in) { return repeat_interleave(in[0], in[1], 0); }),
        {{seq({3, 2}), i64({2, 0, 1})},
         {seq({3}), i64({2}, {1})},
         {seq({3}), test::make<int32_t>({1, 1, 3})},
         {seq({3}), i64({1, -1, 1})},  // raises: negative
         {seq({3}), seq({3})}},        // raises: float repeats
        /*data_dependent=*/true);
  entry("repeat_interleave:repeats_only", "torch.repeat_interleave(a0)",
        one([](const std::vector<Tensor>& in) { return repeat_interleave(in[0]); }),
        {{i64({2, 0, 3})}, {i64({1})}, {i64({1, 2}, {1, 2})}}, /*data_dependent=*/true);  // the last raises: 2-D
}

}  // namespace kiln::opdb
