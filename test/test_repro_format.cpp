// kiln/test/test_repro_format.cpp — the repro tensor text format (bit-exact round trips) and repro dirs.
#include "kiln/kiln.h"
#include "ir/text.h"
#include "runtime/debug/repro.h"
#include "runtime/debug/run_graph.h"
#include "test_support/check.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>

namespace kiln::rt {
namespace {

// The raw bytes of a (contiguous copy of a) tensor.
std::vector<uint8_t> bytes(const Tensor& t0) {
  Tensor t = t0.contiguous();
  const auto* p = static_cast<const uint8_t*>(t.data_ptr());
  return std::vector<uint8_t>(p, p + t.nbytes());
}

Tensor from_bits_f32(const std::vector<uint32_t>& bits) {
  Tensor t = empty({static_cast<int64_t>(bits.size())}, TensorOptions(kFloat));
  std::memcpy(t.data_ptr(), bits.data(), bits.size() * 4);
  return t;
}

void expect_round_trip(const std::vector<Tensor>& ts) {
  const std::string text = write_tensors(ts);
  const std::vector<Tensor> back = parse_tensors(text);
  ASSERT_EQ(back.size(), ts.size()) << text;
  for (size_t i = 0; i < ts.size(); ++i) {
    EXPECT_EQ(back[i].dtype(), ts[i].dtype()) << i;
    EXPECT_EQ(back[i].sizes().vec(), ts[i].sizes().vec()) << i;
    EXPECT_EQ(bytes(back[i]), bytes(ts[i])) << "tensor " << i << "\n" << text;
  }
  EXPECT_EQ(write_tensors(back), text);
}

TEST(ReproFormat, FloatSpecialsAreBitExact) {
  // +0, -0, 1, quiet NaN, NaN with payload and sign, +inf, -inf, smallest denormal, max.
  Tensor f = from_bits_f32({0x00000000u, 0x80000000u, 0x3f800000u, 0x7fc00000u, 0xffc01234u, 0x7f800000u,
                            0xff800000u, 0x00000001u, 0x7f7fffffu});
  Tensor d = tensor({0.1, -0.0, std::numeric_limits<double>::quiet_NaN(), -std::numeric_limits<double>::infinity(),
                     std::numeric_limits<double>::denorm_min(), 1e308});
  expect_round_trip({f, d});
  const std::string text = write_tensors({f});
  EXPECT_NE(text.find("tensor f32 [9]"), std::string::npos) << text;
  EXPECT_NE(text.find("0x80000000"), std::string::npos) << text;
  EXPECT_NE(text.find("0xffc01234"), std::string::npos) << text;
}

TEST(ReproFormat, HalfBFloat16BoolAndIntegers) {
  Tensor h = tensor({1.0f, -0.0f, 65504.0f, 6e-8f, INFINITY, NAN}).to(kHalf);
  Tensor bf = tensor({1.0f, -0.0f, 3.0e38f, 1e-40f, -INFINITY, NAN}).to(kBFloat16);
  Tensor b = tensor({true, false, true}).reshape({3, 1});
  Tensor i64 = tensor({std::numeric_limits<int64_t>::min(), int64_t{-1}, int64_t{0}, std::numeric_limits<int64_t>::max()});
  Tensor i32 = tensor({std::numeric_limits<int32_t>::min(), 7, std::numeric_limits<int32_t>::max()}, TensorOptions(kInt32));
  Tensor i16 = tensor({-32768, 32767}, TensorOptions(kInt16));
  Tensor i8 = tensor({-128, 127}, TensorOptions(kInt8));
  Tensor u8 = tensor({0, 255}, TensorOptions(kUInt8));
  expect_round_trip({h, bf, b, i64, i32, i16, i8, u8});
}

TEST(ReproFormat, ShapesNonContiguousAndEmpty) {
  Tensor x = arange(24, TensorOptions(kFloat)).reshape({2, 3, 4});
  Tensor t = x.transpose(0, 2);  // written contiguously
  Tensor e = zeros({0, 3}, TensorOptions(kDouble));
  Tensor s = full({}, 2.5, TensorOptions(kFloat));
  const std::vector<Tensor> back = parse_tensors(write_tensors({t, e, s}));
  ASSERT_EQ(back.size(), 3u);
  EXPECT_TRUE(equal(back[0], t));
  EXPECT_EQ(back[1].sizes().vec(), (std::vector<int64_t>{0, 3}));
  EXPECT_EQ(back[2].dim(), 0);
  EXPECT_EQ(back[2].item<float>(), 2.5f);
}

TEST(ReproFormat, DecimalInputAndComments) {
  const std::vector<Tensor> ts = parse_tensors(
      "# hand written\n"
      "tensor f32 [2, 2]   # a comment\n"
      "0.5 -0 nan -inf\n"
      "tensor i64 [3]\n1 -2 3\n"
      "tensor bool [2]\ntrue 0\n"
      "tensor f16 [1]\n0.25\n");
  ASSERT_EQ(ts.size(), 4u);
  std::vector<float> f = ts[0].reshape({-1}).to_vector<float>();
  EXPECT_EQ(f[0], 0.5f);
  EXPECT_TRUE(std::signbit(f[1]));
  EXPECT_TRUE(std::isnan(f[2]));
  EXPECT_EQ(f[3], -INFINITY);
  EXPECT_EQ(ts[1].to_vector<int64_t>(), (std::vector<int64_t>{1, -2, 3}));
  EXPECT_EQ(ts[2].to_vector<bool>(), (std::vector<bool>{true, false}));
  EXPECT_EQ(ts[3].to(kFloat).item<float>(), 0.25f);
}

TEST(ReproFormat, ErrorsNameTheLine) {
  auto msg = [](std::string_view text) {
    try {
      parse_tensors(text);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(msg("tensor f32 [2]\n1\n"), "[repro] line 2: tensor 0 has 1 values, expected 2");
  EXPECT_EQ(msg("tensor q7 [2]\n"), "[repro] line 1: unknown dtype 'q7'");
  EXPECT_EQ(msg("tensor i8 [1]\n300\n"), "[repro] line 2: '300' is not a i8 value");
  EXPECT_EQ(msg("1 2\n"), "[repro] line 1: values before any 'tensor' header");
  EXPECT_EQ(msg("tensor f32 [1]\n1 2\n"), "[repro] line 2: more values than the 1 of tensor 0");
}

TEST(ReproFormat, ReproDirectoryRoundTrip) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("kiln_repro_format_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  Repro r;
  r.graph = std::shared_ptr<ir::Graph>(ir::parse_graph("graph(%x : f32[2], %y : f32[2]) {\n"
                                                       "  %0 : f32[2] = mul(%x, %y)\n"
                                                       "  return (%0)\n"
                                                       "}\n")
                                           .release());
  r.inputs = {tensor({1.0f, NAN}), tensor({-0.0f, 2.0f})};
  r.differs = "output 0: 1 of 2 elements differ";
  write_repro(dir.string(), r);
  EXPECT_TRUE(std::filesystem::exists(dir / "graph.kir"));
  Repro back = read_repro(dir.string());
  EXPECT_EQ(ir::print_graph(*back.graph), ir::print_graph(*r.graph));
  ASSERT_EQ(back.inputs.size(), 2u);
  EXPECT_EQ(bytes(back.inputs[0]), bytes(r.inputs[0]));
  EXPECT_EQ(bytes(back.inputs[1]), bytes(r.inputs[1]));
  EXPECT_EQ(back.backend_a, "cpu");
  EXPECT_EQ(back.backend_b, "interpreter");
  EXPECT_EQ(back.differs, r.differs);
  // The .kir file alone picks up inputs.txt beside it.
  Repro via_file = read_repro((dir / "graph.kir").string());
  EXPECT_EQ(bytes(via_file.inputs[1]), bytes(r.inputs[1]));
  std::filesystem::remove_all(dir);
}

TEST(ReproFormat, ADumpedDynamicGraphRunsAtItsHeadersSizes) {
  // A KILN_DEBUG_DIR dump of a dynamic trace declares its symbols' sizes: kiln run/check make
  // default inputs at them; an inputs file given explicitly is read instead, at its own sizes.
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("kiln_repro_header_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string kir = (dir / "g.kir").string();
  {
    std::ofstream(kir) << "symbols(s0 = 2, s1 = 3)\nguards(s0*s1 % 6 == 0, s0*s1//6 == 1)\n"
                          "graph(%x : f32[s0, s1], %y : f32[2*s0]) {\n"
                          "  %0 : f32[6, s0*s1//6] = reshape(%x, size=[6, s0*s1//6])\n"
                          "  %1 : f32[6] = squeeze(%0, dims=[1])\n  return (%1, %y)\n}\n";
  }
  Repro r = read_repro(kir);
  ASSERT_EQ(r.inputs.size(), 2u);
  EXPECT_EQ(r.inputs[0].sizes().vec(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(r.inputs[1].sizes().vec(), (std::vector<int64_t>{4}));
  const RunResult ok = run_graph(*r.graph, r.inputs, "cpu");
  ASSERT_TRUE(ok.ok()) << ok.message;
  EXPECT_EQ(ok.outputs[0].to_vector<float>(), (std::vector<float>{-1.5f, -1.0f, -0.5f, 0.0f, 0.5f, 1.0f}));
  // Explicit inputs at sizes where the squeezed dim is 2: each backend refuses the squeeze.
  const std::string inputs = (dir / "in.txt").string();
  {
    std::ofstream(inputs) << write_tensors({ones({3, 4}), ones({6})});
  }
  Repro other = read_repro(kir, inputs);
  EXPECT_EQ(other.inputs[0].sizes().vec(), (std::vector<int64_t>{3, 4}));
  for (const char* backend : {"cpu", "interpreter"}) {
    const RunResult bad = run_graph(*other.graph, other.inputs, backend);
    EXPECT_EQ(bad.status, RunResult::Status::UserError) << backend;
    EXPECT_NE(bad.message.find("[squeeze]"), std::string::npos) << backend << ": " << bad.message;
  }
  // Without the header, the symbolic inputs have no sizes to take.
  EXPECT_NE(test::error_of([&] { default_inputs(*r.graph); }).find("declare s0 in a symbols(...) header"),
            std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST(ReproFormat, DefaultInputsAreDeterministic) {
  auto g = ir::parse_graph("graph(%x : f32[3], %i : i32[2], %b : bool[2]) {\n  return (%x, %i, %b)\n}\n");
  std::vector<Tensor> in = default_inputs(*g);
  ASSERT_EQ(in.size(), 3u);
  EXPECT_EQ(in[0].to_vector<float>(), (std::vector<float>{-1.5f, -1.0f, -0.5f}));
  EXPECT_EQ(in[1].to_vector<int32_t>(), (std::vector<int32_t>{0, 1}));
  EXPECT_EQ(in[2].to_vector<bool>(), (std::vector<bool>{false, true}));
}

}  // namespace
}  // namespace kiln::rt
