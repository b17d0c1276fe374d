// kiln/test/test_support/opdb_resample.cpp — op database entries: resampling: grid_sample,
// interpolate, upsample_*2d and pad by mode (reflect, replicate, circular).
//
// Inputs are sine waves; the error rows are arguments PyTorch rejects.
#include "test_support/opdb.h"

#include <limits>
#include <string>

namespace kiln::opdb {

void add_resample(std::vector<OpEntry>& db) {
  const std::string F = "torch.nn.functional.";
  auto entry = [&](std::string name, std::string torch, Fn f, std::vector<Sample> samples) {
    db.push_back({std::move(name), "resample", std::move(f), F + torch, std::move(samples)});
  };

  // ---- grid_sample ----
  const Tensor grid = seq({2, 3, 4, 2}, kFloat, -1.3, 0.11);
  const Tensor grid3 = seq({2, 2, 3, 4, 3}, kFloat, -1.3, 0.02);  // [N, D_out, H_out, W_out, (x, y, z)]
  for (const char* mode : {"bilinear", "nearest", "bicubic"}) {
    for (const char* pad : {"zeros", "border", "reflection"}) {
      for (bool align : {false, true}) {
        const std::string m = mode, p = pad;
        const std::string args = "mode='" + m + "', padding_mode='" + p + "', align_corners=" + (align ? "True" : "False") + ")";
        const Fn f = one([m, p, align](const std::vector<Tensor>& in) { return grid_sample(in[0], in[1], m, p, align); });
        entry(std::string("grid_sample:") + m + "_" + p + (align ? "_align" : ""), "grid_sample(a0, a1, " + args, f,
              {{wave({2, 3, 4, 5}), grid}, {wave({2, 3, 5, 4}, kDouble).transpose(2, 3), grid.to(kDouble)}});
        // Volumetric: trilinear, nearest and tricubic.
        entry(std::string("grid_sample3d:") + m + "_" + p + (align ? "_align" : ""), "grid_sample(a0, a1, " + args, f,
              {{wave({2, 3, 3, 4, 5}), grid3}, {wave({2, 3, 5, 4, 3}, kDouble).permute({0, 1, 4, 3, 2}), grid3.to(kDouble)}});
      }
    }
  }
  entry("grid_sample:errors", "grid_sample(a0, a1, align_corners=False)",
        one([](const std::vector<Tensor>& in) { return grid_sample(in[0], in[1], "bilinear", "zeros", false); }),
        {{wave({2, 3, 4, 5}), seq({1, 3, 4, 2})},          // batch sizes differ
         {wave({2, 3, 4, 5}), seq({2, 3, 4, 3})},          // grid's last dim is not 2
         {wave({2, 3, 4, 5}), seq({2, 3, 4, 2}, kDouble)},  // dtypes differ
         {wave({3, 4, 5}), seq({3, 4, 2})}});               // 3-D input

  // ---- interpolate, upsample_*2d; pad by mode ----
  auto interp = [&](std::string name, std::string torch, Fn f, std::vector<Sample> samples) {
    entry(std::move(name), std::move(torch), std::move(f), std::move(samples));
  };
  Tensor with_specials = wave({1, 1, 3, 4});
  with_specials = where(eq(seq({1, 1, 3, 4}, kFloat, 0, 1), 5.0), std::numeric_limits<double>::infinity(), with_specials);
  with_specials = where(eq(seq({1, 1, 3, 4}, kFloat, 0, 1), 10.0), std::numeric_limits<double>::quiet_NaN(), with_specials);
  interp("interpolate:nearest_scale2", "interpolate(a0, scale_factor=2.0)",
         one([](const std::vector<Tensor>& in) { return interpolate(in[0], std::nullopt, std::vector<double>{2.0}); }),
         {{wave({2, 3, 3, 4})}, {wave({2, 3, 5})}, {wave({1, 2, 2, 3, 2}, kDouble)}, {ints({1, 2, 3, 2})},
          {wave({3, 4})}});  // 2-D input: raises
  interp("interpolate:nearest_size", "interpolate(a0, size=(5, 3))",
         one([](const std::vector<Tensor>& in) { return interpolate(in[0], std::vector<int64_t>{5, 3}); }),
         {{wave({2, 3, 3, 4})}, {wave({2, 3, 7, 7}, kHalf)}, {wave({2, 3, 4})}});  // 1 spatial dim, 2 sizes: raises
  interp("interpolate:nearest_fraction", "interpolate(a0, scale_factor=(1.7, 0.6))",
         one([](const std::vector<Tensor>& in) {
           return interpolate(in[0], std::nullopt, std::vector<double>{1.7, 0.6});
         }),
         {{wave({1, 2, 5, 6})}});
  interp("interpolate:bilinear", "interpolate(a0, size=(5, 7), mode='bilinear')",
         one([](const std::vector<Tensor>& in) { return interpolate(in[0], std::vector<int64_t>{5, 7}, std::nullopt, "bilinear"); }),
         {{wave({2, 3, 3, 4})}, {wave({2, 3, 6, 9}, kDouble)}, {wave({1, 2, 3, 4}, kBFloat16)},
          {wave({1, 2, 3, 4}).transpose(2, 3)}, {with_specials}, {ints({1, 1, 3, 4})},  // integers: raise
          {wave({2, 3, 4})}});                                                           // 3-D input: raises
  interp("interpolate:bilinear_align_corners", "interpolate(a0, scale_factor=1.5, mode='bilinear', align_corners=True)",
         one([](const std::vector<Tensor>& in) {
           return interpolate(in[0], std::nullopt, std::vector<double>{1.5}, "bilinear", true);
         }),
         {{wave({2, 3, 3, 4})}, {wave({1, 1, 1, 4})}});
  interp("interpolate:linear_recompute", "interpolate(a0, scale_factor=0.7, mode='linear', recompute_scale_factor=True)",
         one([](const std::vector<Tensor>& in) {
           return interpolate(in[0], std::nullopt, std::vector<double>{0.7}, "linear", std::nullopt, true);
         }),
         {{wave({2, 3, 10})}});
  interp("interpolate:trilinear", "interpolate(a0, size=(3, 4, 2), mode='trilinear')",
         one([](const std::vector<Tensor>& in) { return interpolate(in[0], std::vector<int64_t>{3, 4, 2}, std::nullopt, "trilinear"); }),
         {{wave({1, 2, 2, 3, 4})}});
  interp("interpolate:area", "interpolate(a0, size=(2, 3), mode='area')",
         one([](const std::vector<Tensor>& in) { return interpolate(in[0], std::vector<int64_t>{2, 3}, std::nullopt, "area"); }),
         {{wave({2, 3, 5, 6})}});
  interp("interpolate:nearest_align_corners", "interpolate(a0, size=4, align_corners=True)",
         one([](const std::vector<Tensor>& in) { return interpolate(in[0], std::vector<int64_t>{4}, std::nullopt, "nearest", true); }),
         {{wave({1, 2, 3})}});  // raises
  const std::string aten = "torch.ops.aten.";
  db.push_back({"upsample_nearest2d", "resample",
                one([](const std::vector<Tensor>& in) { return upsample_nearest2d(in[0], {6, 5}, 2.0, 1.5); }),
                aten + "upsample_nearest2d(a0, [6, 5], 2.0, 1.5)", {{wave({2, 3, 3, 4})}, {wave({3, 3, 4})}}});
  db.push_back({"upsample_bilinear2d", "resample",
                one([](const std::vector<Tensor>& in) { return upsample_bilinear2d(in[0], {6, 5}, false); }),
                aten + "upsample_bilinear2d(a0, [6, 5], False)", {{wave({2, 3, 3, 4})}, {wave({1, 1, 4, 9}, kDouble)}}});

  auto padm = [&](std::string name, std::string torch, Fn f, std::vector<Sample> samples) {
    entry(std::move(name), std::move(torch), std::move(f), std::move(samples));
  };
  padm("pad:reflect", "pad(a0, (2, 1, 1, 3), mode='reflect')",
       one([](const std::vector<Tensor>& in) { return pad(in[0], {2, 1, 1, 3}, "reflect"); }),
       {{wave({2, 3, 4, 5})}, {wave({3, 4, 5}, kDouble)}, {wave({2, 3, 5, 4}).transpose(2, 3)}, {ints({1, 4, 4})},
        {wave({2, 3, 3, 5})},    // padding 3 of a dim of 3: raises
        {wave({2, 3, 4, 5, 6})}});  // 5-D input for 2 padded dims: raises
  padm("pad:reflect1d", "pad(a0, (3, 2), mode='reflect')",
       one([](const std::vector<Tensor>& in) { return pad(in[0], {3, 2}, "reflect"); }), {{wave({2, 3, 5})}, {wave({2, 4})}});
  padm("pad:replicate", "pad(a0, (1, 2, 0, 3), mode='replicate')",
       one([](const std::vector<Tensor>& in) { return pad(in[0], {1, 2, 0, 3}, "replicate"); }),
       {{wave({2, 3, 4, 5})}, {wave({3, 1, 1}, kHalf)}, {wave({1, 2, 0, 3})}});  // an empty padded dim: raises
  padm("pad:replicate3d", "pad(a0, (1, 0, 2, 1, 1, 1), mode='replicate')",
       one([](const std::vector<Tensor>& in) { return pad(in[0], {1, 0, 2, 1, 1, 1}, "replicate"); }),
       {{wave({1, 2, 2, 3, 2})}});
  padm("reflection_pad2d", "pad(a0, (2, 1, 1, 3), mode='reflect')",
       one([](const std::vector<Tensor>& in) { return reflection_pad2d(in[0], {2, 1, 1, 3}); }), {{wave({2, 3, 4, 5})}});
  padm("replication_pad1d", "pad(a0, (1, 2), mode='replicate')",
       one([](const std::vector<Tensor>& in) { return replication_pad1d(in[0], {1, 2}); }),
       {{wave({2, 3, 4})}, {wave({3, 4}, kDouble)}});
  padm("replication_pad3d", "pad(a0, (1, 0, 2, 1, 1, 1), mode='replicate')",
       one([](const std::vector<Tensor>& in) { return replication_pad3d(in[0], {1, 0, 2, 1, 1, 1}); }), {{wave({1, 2, 2, 3, 2})}});
  padm("reflection_pad1d", "pad(a0, (3, 2), mode='reflect')",
       one([](const std::vector<Tensor>& in) { return reflection_pad1d(in[0], {3, 2}); }), {{wave({2, 3, 5})}});
  padm("reflection_pad3d", "pad(a0, (1, 0, 2, 1, 1, 1), mode='reflect')",
       one([](const std::vector<Tensor>& in) { return reflection_pad3d(in[0], {1, 0, 2, 1, 1, 1}); }),
       {{wave({1, 2, 3, 4, 3})}});
  padm("replication_pad2d", "pad(a0, (1, 2, 0, 3), mode='replicate')",
       one([](const std::vector<Tensor>& in) { return replication_pad2d(in[0], {1, 2, 0, 3}); }), {{wave({2, 3, 4, 5})}});
  padm("reflection_pad1d:bad", "pad(a0, (1, 2, 3), mode='reflect')",
       one([](const std::vector<Tensor>& in) { return reflection_pad1d(in[0], {1, 2, 3}); }), {{wave({2, 3, 4})}});  // raises
  padm("pad:circular", "pad(a0, (2, 3, 1, 1), mode='circular')",
       one([](const std::vector<Tensor>& in) { return pad(in[0], {2, 3, 1, 1}, "circular"); }),
       {{wave({2, 3, 4, 5})}, {wave({1, 2, 3}, kDouble)}, {wave({1, 2, 2, 2})}});  // wraps twice: raises
}

}  // namespace kiln::opdb
