// kiln/test/test_support/opdb_rearrange.cpp — op database entries: repeat, roll, flip, diff
// and repeat_interleave (frontend/ops_rearrange.cpp); diag, diag_embed, rot90, meshgrid,
// pixel_shuffle, pixel_unshuffle, block_diag, diagflat and vander (frontend/ops_rearrange_grids.cpp);
// cartesian_prod and combinations (frontend/ops_rearrange_combinations.cpp).
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

  // Grids (frontend/ops_rearrange_grids.cpp).
  db.push_back({"diag", "rearrange", one([](const std::vector<Tensor>& in) { return diag(in[0], 1); }), "torch.diag(a0, 1)",
                {{seq({3})}, {seq({2, 3})}, {seq({3}, kLong)}, {seq({2, 2, 2})}}});  // the last raises
  db.push_back({"diag_embed", "rearrange", one([](const std::vector<Tensor>& in) { return diag_embed(in[0], 1, 0, 2); }),
                "torch.diag_embed(a0, offset=1, dim1=0, dim2=2)", {{seq({2, 3})}, {seq({2, 3}, kBool)}, {seq({})}}});  // 0-D raises
  db.push_back({"diag_embed:below", "rearrange", one([](const std::vector<Tensor>& in) { return diag_embed(in[0], -1, 2, 0); }),
                "torch.diag_embed(a0, offset=-1, dim1=2, dim2=0)", {{seq({2, 3})}, {seq({3, 2}).t()}}});
  db.push_back({"rot90", "rearrange", one([](const std::vector<Tensor>& in) { return rot90(in[0]); }), "torch.rot90(a0)",
                {{seq({2, 3})}, {seq({2, 3, 2})}, {seq({3})}}});  // the last raises
  db.push_back({"rot90:k", "rearrange", one([](const std::vector<Tensor>& in) { return rot90(in[0], -1, {2, 0}); }),
                "torch.rot90(a0, -1, [2, 0])", {{seq({2, 3, 2})}}});
  db.push_back({"rot90:half", "rearrange", one([](const std::vector<Tensor>& in) { return rot90(in[0], 6, {1, -1}); }),
                "torch.rot90(a0, 6, [1, -1])", {{seq({2, 3, 2})}}});
  auto grids = [](std::string_view indexing) {
    return [indexing](const std::vector<Tensor>& in) {
      std::vector<Tensor> out = meshgrid(in, indexing);
      for (Tensor& t : out) t = t * 1;
      return out;
    };
  };
  db.push_back({"meshgrid", "rearrange", grids("ij"), "tuple(g * 1 for g in torch.meshgrid(a0, a1, indexing='ij'))",
                {{seq({2}), seq({3})}, {seq({}), seq({3})}, {seq({2}), seq({3}, kDouble)}}});  // the last raises
  db.push_back({"meshgrid:xy", "rearrange", grids("xy"), "tuple(g * 1 for g in torch.meshgrid(a0, a1, a2, indexing='xy'))",
                {{seq({2}), seq({3}), seq({4})}}});
  db.push_back({"pixel_shuffle", "rearrange", one([](const std::vector<Tensor>& in) { return pixel_shuffle(in[0], 2); }),
                "torch.nn.functional.pixel_shuffle(a0, 2)",
                {{seq({1, 8, 2, 3})}, {seq({2, 1, 4, 1, 2})}, {seq({1, 3, 2, 2})}}});  // the last raises
  db.push_back({"pixel_unshuffle", "rearrange", one([](const std::vector<Tensor>& in) { return pixel_unshuffle(in[0], 2); }),
                "torch.nn.functional.pixel_unshuffle(a0, 2)", {{seq({1, 2, 4, 6})}, {seq({1, 1, 3, 2})}}});  // the last raises

  // Matrices from pieces (frontend/ops_rearrange_grids.cpp).
  db.push_back({"block_diag", "rearrange", one([](const std::vector<Tensor>& in) { return block_diag(in); }),
                "torch.block_diag(a0, a1, a2)",
                {{seq({2, 3}), seq({2}), seq({})},
                 {ints({1, 2}), seq({2, 2}, kHalf), seq({0})},     // promoted to f16; an empty 1-D adds a row
                 {seq({2, 2}), seq({}, kDouble), ints({2, 1})},    // a 0-dim f64 does not widen f32
                 {seq({2, 2}), seq({2, 2, 1}), seq({1})}}});       // raises: 3-D
  db.push_back({"diagflat", "rearrange", one([](const std::vector<Tensor>& in) { return diagflat(in[0], -1); }),
                "torch.diagflat(a0, -1)", {{seq({2, 2})}, {seq({3, 2}).t()}, {seq({}, kBool)}, {seq({0})}}});
  db.push_back({"vander", "rearrange", one([](const std::vector<Tensor>& in) { return vander(in[0]); }), "torch.vander(a0)",
                {{seq({4}, kFloat, -1.5, 0.75)}, {ints({3})}, {seq({3}, kBool)}, {seq({3}, kDouble, 0.5, 1.25)}, {seq({2, 2})}}});  // the last raises
  db.push_back({"vander:increasing", "rearrange", one([](const std::vector<Tensor>& in) { return vander(in[0], 3, true); }),
                "torch.vander(a0, 3, True)", {{seq({4}, kFloat, -1.5, 0.75)}, {seq({0})}}});
  db.push_back({"vander:empty", "rearrange", one([](const std::vector<Tensor>& in) { return vander(in[0], 0); }),
                "torch.vander(a0, 0)", {{seq({3})}}});

  // Index tuples (frontend/ops_rearrange_combinations.cpp).
  db.push_back({"cartesian_prod", "rearrange", one([](const std::vector<Tensor>& in) { return cartesian_prod(in); }),
                "torch.cartesian_prod(a0, a1)",
                {{seq({2}), seq({3}, kFloat, 5, 1)}, {ints({3}), ints({0})}, {seq({2}), seq({2}, kDouble)}, {seq({2, 1}), seq({2})}}});  // the last two raise
  db.push_back({"cartesian_prod:one", "rearrange", one([](const std::vector<Tensor>& in) { return cartesian_prod(in) * 1; }),
                "torch.cartesian_prod(a0) * 1", {{seq({3})}, {seq({})}}});  // the second raises
  for (int64_t r : {0, 1, 2, 3})
    for (bool repeats : {false, true}) {
      const std::string name = "combinations:r" + std::to_string(r) + (repeats ? "_repeats" : "");
      db.push_back({name, "rearrange", one([r, repeats](const std::vector<Tensor>& in) { return combinations(in[0], r, repeats); }),
                    "torch.combinations(a0, " + std::to_string(r) + ", " + (repeats ? "True" : "False") + ")",
                    {{seq({4})}, {ints({2})}, {seq({0})}}});
    }
  db.push_back({"combinations:errors", "rearrange", one([](const std::vector<Tensor>& in) { return combinations(in[0]); }),
                "torch.combinations(a0)", {{seq({2, 2})}, {seq({})}}});  // both raise
}

}  // namespace kiln::opdb
