// kiln/test/test_cuda_eager_factories.cpp — factories on a device: memset patterns and generated full/iota kernels.
//
// A cuda factory fills its memory on the device: full with a memset of the value's bit pattern
// (fill_pattern) where one exists, else a generated kernel (rt::generated_factory), which also
// makes iota at any start and step from one iota(0, 1) kernel. Both are checked here without a
// GPU: the patterns against the bytes the interpreter's full writes, and the generated kernels
// run on the cpu against the interpreter. The GPU tests run them on a device
// (CudaGpu.FactoriesOnTheDevice).
#include "runtime/cuda/cuda_eager.h"

#include "base/tensor_impl.h"
#include "frontend/ops_factory.h"
#include "frontend/tensor.h"
#include "runtime/eager/eager.h"
#include "runtime/interpreter/interpreter.h"
#include "test_support/check.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

namespace kiln::rt {
namespace {

const std::vector<ScalarType> kDtypes = {ScalarType::Float,  ScalarType::Double, ScalarType::Half,  ScalarType::BFloat16,
                                         ScalarType::Int8,   ScalarType::UInt8,  ScalarType::Int16, ScalarType::Int32,
                                         ScalarType::Int64,  ScalarType::Bool};

ir::AttrList full_attrs(const std::vector<int64_t>& size, const Scalar& value, ScalarType dtype) {
  return ir::AttrList({ir::AttrValue(ir::to_exprs(size)), ir::AttrValue(value), ir::AttrValue(dtype), ir::AttrValue(Device())});
}
ir::AttrList iota_attrs(int64_t length, const Scalar& start, const Scalar& step, ScalarType dtype) {
  return ir::AttrList({ir::AttrValue(ir::Expr(length)), ir::AttrValue(start), ir::AttrValue(step), ir::AttrValue(dtype),
                       ir::AttrValue(Device())});
}

std::string bytes_of(const Tensor& t) {
  return std::string(static_cast<const char*>(t.impl()->data()), static_cast<size_t>(t.numel()) * element_size(t.dtype()));
}

// The memset pattern repeated over one element is the element's bytes, for every dtype and
// value full accepts (an 8-byte value with unequal halves: its two halves).
TEST(CudaEagerFactories, FillPatternsAreTheElementsBytes) {
  const std::vector<Scalar> values = {Scalar(0.0),  Scalar(int64_t{1}), Scalar(int64_t{-1}), Scalar(2.5),
                                      Scalar(-0.0), Scalar(true),       Scalar(int64_t{100}), Scalar(-7.25),
                                      Scalar(std::numeric_limits<double>::infinity()), Scalar(std::nan(""))};
  int two_halves = 0;
  for (ScalarType dt : kDtypes) {
    for (const Scalar& v : values) {
      if (!is_floating_point(dt) && v.is_floating_point() && !std::isfinite(v.to_double())) continue;
      if ((dt == ScalarType::UInt8 && v.to_double() < 0)) continue;
      SCOPED_TRACE(std::string(dtype_name(dt)) + " " + v.str());
      const Tensor want = interpret_op(ir::OpKind::full, {}, full_attrs({1}, v, dt)).at(0);
      const std::string element = bytes_of(want);
      const FillPattern p = fill_pattern(v, dt);
      ASSERT_TRUE(p.width == 1 || p.width == 2 || p.width == 4 || p.width == 8);
      std::string filled;
      if (p.width == 8) {  // two halves: two strided 32-bit memsets
        filled.append(reinterpret_cast<const char*>(&p.bits), 4);
        filled.append(reinterpret_cast<const char*>(&p.high), 4);
        ++two_halves;
      }
      while (filled.size() < element.size()) filled.append(reinterpret_cast<const char*>(&p.bits), static_cast<size_t>(p.width));
      EXPECT_EQ(filled, element);
    }
  }
  EXPECT_GT(two_halves, 0);  // 2.5 as f64, 1 as int64
}

// full and iota as generated, shape-generic kernels give the interpreter's values bit for bit,
// for every dtype, size, value, start and step (run here on the cpu; on a GPU for cuda).
TEST(CudaEagerFactories, GeneratedFactoriesMatchTheInterpreter) {
  for (ScalarType dt : kDtypes) {
    SCOPED_TRACE(dtype_name(dt));
    for (const std::vector<int64_t>& size : std::vector<std::vector<int64_t>>{{}, {0}, {5}, {3, 4}, {2, 3, 33}})
      for (const Scalar& v : {Scalar(0.0), Scalar(1.5), Scalar(int64_t{-3}), Scalar(true)}) {
        if (dt == ScalarType::UInt8 && v.to_double() < 0) continue;
        const ir::AttrList a = full_attrs(size, v, dt);
        const Tensor got = generated_factory(ir::OpKind::full, a, Device());
        const Tensor want = interpret_op(ir::OpKind::full, {}, a).at(0);
        ASSERT_EQ(got.sizes().vec(), want.sizes().vec());
        EXPECT_EQ(bytes_of(got.contiguous()), bytes_of(want)) << v.str();
      }
    for (int64_t length : {0, 1, 7, 1000})
      for (const auto& [start, step] : std::vector<std::pair<Scalar, Scalar>>{{Scalar(int64_t{0}), Scalar(int64_t{1})},
                                                                              {Scalar(int64_t{5}), Scalar(int64_t{1})},
                                                                              {Scalar(int64_t{-3}), Scalar(int64_t{2})},
                                                                              {Scalar(0.5), Scalar(0.25)},
                                                                              {Scalar(int64_t{10}), Scalar(int64_t{-3})},
                                                                              {Scalar(1e9), Scalar(3.0)}}) {
        const ir::AttrList a = iota_attrs(length, start, step, dt);
        if (dt == ScalarType::Bool) {  // the prim's shape function refuses it, at any start and step
          const std::string e = test::error_of([&] { (void)generated_factory(ir::OpKind::iota, a, Device()); });
          EXPECT_NE(e.find("[iota] dtype bool is not supported"), std::string::npos) << e;
          continue;
        }
        const Tensor got = generated_factory(ir::OpKind::iota, a, Device());
        const Tensor want = interpret_op(ir::OpKind::iota, {}, a).at(0);
        ASSERT_EQ(got.sizes().vec(), want.sizes().vec());
        EXPECT_EQ(bytes_of(got.contiguous()), bytes_of(want)) << "length " << length << " start " << start.str()
                                                              << " step " << step.str();
      }
  }
}

// aranges at moving starts (a decoder's positions) share one kernel: iota(0, 1) in int64, then
// eager ops that are compiled once.
TEST(CudaEagerFactories, IotaAtMovingStartsCompilesOnce) {
  (void)generated_factory(ir::OpKind::iota, iota_attrs(16, Scalar(int64_t{3}), Scalar(int64_t{2}), ScalarType::Float),
                          Device());
  const int64_t built = eager_stats().kernels_compiled;
  for (int64_t start = 4; start < 12; ++start) {
    const ir::AttrList a = iota_attrs(16 + start, Scalar(start), Scalar(int64_t{2}), ScalarType::Float);
    EXPECT_EQ(bytes_of(generated_factory(ir::OpKind::iota, a, Device())), bytes_of(interpret_op(ir::OpKind::iota, {}, a).at(0)));
  }
  EXPECT_EQ(eager_stats().kernels_compiled, built);
  EXPECT_EQ(test::error_of([] {
              (void)generated_factory(ir::OpKind::iota, iota_attrs(-1, Scalar(int64_t{0}), Scalar(int64_t{1}), ScalarType::Int64),
                                      Device());
            }),
            "[iota] length must be non-negative, got -1");
}

}  // namespace
}  // namespace kiln::rt
