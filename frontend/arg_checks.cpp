// kiln/frontend/arg_checks.cpp — the shared argument checks of frontend/arg_checks.h.
#include "frontend/arg_checks.h"

#include "base/error.h"
#include "frontend/symbolic.h"
#include "frontend/ops_view.h"
#include "ir/shape_env.h"

namespace kiln {

const char* cpp_type_name(ScalarType t) {
  switch (t) {
    case ScalarType::Bool: return "bool";
    case ScalarType::UInt8: return "unsigned char";
    case ScalarType::Int8: return "signed char";
    case ScalarType::Int16: return "short int";
    case ScalarType::Int32: return "int";
    case ScalarType::Int64: return "long int";
    case ScalarType::Half: return "c10::Half";
    case ScalarType::BFloat16: return "c10::BFloat16";
    case ScalarType::Float: return "float";
    case ScalarType::Double: return "double";
  }
  return "?";
}

void check_fill_fits(std::string_view op, const Scalar& value, ScalarType dtype, int64_t numel) {
  if (numel == 1 && (dtype == ScalarType::Half || dtype == ScalarType::BFloat16)) return;
  check_scalar_fits(op, value, dtype);
}

bool same_size(const Tensor& a, int64_t da, const Tensor& b, int64_t db) {
  return ir::sym_eq(sym_size(a, da), sym_size(b, db));
}

int64_t hint_size(const Tensor& t, int64_t d) {
  return t.impl()->sizes()[static_cast<size_t>(normalize_dim("size", d, t.dim(), false))];
}

void check_same_dtype(std::string_view op, const char* a, const char* b, const Tensor& x, const Tensor& y) {
  if (x.dtype() != y.dtype()) {
    fail(op, "expected {} and {} to have the same dtype, but got: {} != {}", a, b, cpp_type_name(x.dtype()),
         cpp_type_name(y.dtype()));
  }
}

void check_floating_kernel(std::string_view op, std::string_view kernel, ScalarType dt) {
  if (!is_floating_point(dt)) fail(op, "\"{}\" not implemented for '{}'", kernel, c10_type_name(dt));
}

void check_reduction(std::string_view op, std::string_view reduction) {
  if (reduction != "mean" && reduction != "sum" && reduction != "none")
    fail(op, "{} is not a valid value for reduction", reduction);
}

}  // namespace kiln
