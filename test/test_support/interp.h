// kiln/test/test_support/interp.h — running one interpreter prim from a test.
//
// run(op, inputs, attrs) calls rt::interpret_op on the given tensors and attributes, expects
// exactly one output, and returns it. Tests of multi-output prims call rt::interpret_op
// themselves.
#pragma once

#include "frontend/tensor.h"
#include "ir/attr.h"
#include "ir/op.h"
#include "runtime/interpreter/interpreter.h"

#include <gtest/gtest.h>

#include <utility>
#include <vector>

namespace kiln::test {

inline Tensor run(ir::OpKind op, const std::vector<Tensor>& inputs, std::vector<ir::AttrValue> attrs = {}) {
  std::vector<Tensor> out = rt::interpret_op(op, inputs, ir::AttrList(std::move(attrs)));
  EXPECT_EQ(out.size(), 1u) << "outputs of " << ir::op_name(op);
  return out.at(0);
}

}  // namespace kiln::test
