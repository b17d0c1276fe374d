// kiln/test/test_support/check.h — shared checks for tests: error messages, dtype-generic
// element comparison, and the vector aliases and constants tests spell expected values with.
//
// error_of(fn) gives the message of the kiln::Error that fn throws ("<no error>" when it
// throws none), so a test can assert the exact "[op] message". doubles(t) reads any tensor as
// doubles; expect_exact compares dtype and every element exactly (sign of zero included, NaN
// matches NaN only); expect_close compares within a relative tolerance, plus an optional
// absolute one (infinities and NaN exactly, zeros too without the absolute one). sizes_of(t)
// is t's sizes as a vector.
#pragma once

#include "base/dtype.h"
#include "base/error.h"
#include "base/half.h"
#include "frontend/tensor.h"
#include "make.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

namespace kiln::test {

using Ints = std::vector<int64_t>;
using Longs = std::vector<int64_t>;
using Floats = std::vector<float>;
using Doubles = std::vector<double>;
using Bools = std::vector<bool>;

// Expected values written as doubles (a file comparing floats may define float ones locally).
inline constexpr double kInf = std::numeric_limits<double>::infinity();
inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// The message of the kiln::Error that fn throws, or "<no error>".
template <typename Fn> std::string error_of(Fn&& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  return "<no error>";
}

inline Ints sizes_of(const Tensor& t) { return t.sizes().vec(); }

// Every element as a double (exact for every dtype, int64 beyond 2^53 excepted).
inline std::vector<double> doubles(const Tensor& t) {
  return dispatch_dtype(t.dtype(), [&](auto tag) {
    using T = decltype(tag);
    std::vector<double> out;
    for (T x : values<T>(t)) {
      if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>)
        out.push_back(static_cast<double>(static_cast<float>(x)));
      else
        out.push_back(static_cast<double>(x));
    }
    return out;
  });
}

// Exact comparison: same dtype, NaN where NaN is expected, otherwise equal with the same sign
// bit (so -0.0 and 0.0 differ).
inline void expect_exact(const Tensor& t, ScalarType dtype, const std::vector<double>& want) {
  ASSERT_EQ(t.dtype(), dtype);
  std::vector<double> got = doubles(t);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    if (std::isnan(want[i])) {
      EXPECT_TRUE(std::isnan(got[i])) << "element " << i << ": got " << got[i];
    } else {
      EXPECT_EQ(got[i], want[i]) << "element " << i;
      EXPECT_EQ(std::signbit(got[i]), std::signbit(want[i])) << "sign of element " << i << " (" << got[i] << ")";
    }
  }
}

// |got - want| <= rel * |want| + abs elementwise (NaN and infinities must match exactly, and
// zeros too when abs is 0).
inline void expect_close(const Tensor& t, const std::vector<double>& want, double rel, double abs = 0) {
  std::vector<double> got = doubles(t);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    if (std::isnan(want[i]))
      EXPECT_TRUE(std::isnan(got[i])) << "element " << i << ": got " << got[i];
    else if (std::isinf(want[i]) || (want[i] == 0 && abs == 0))
      EXPECT_EQ(got[i], want[i]) << "element " << i;
    else
      EXPECT_NEAR(got[i], want[i], rel * std::fabs(want[i]) + abs) << "element " << i;
  }
}

}  // namespace kiln::test
