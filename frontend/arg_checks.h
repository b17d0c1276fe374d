// kiln/frontend/arg_checks.h — internal: argument checks that several op families share, with
// PyTorch's wording. Not part of the public API.
#pragma once

#include "base/dtype.h"
#include "frontend/tensor.h"

#include <string_view>

namespace kiln {

// The C++ element type names PyTorch's TypeMeta prints with g++ on Linux ("float != long int",
// "c10::Half").
const char* cpp_type_name(ScalarType t);

// Whether dim da of a and dim db of b have equal sizes (decided with a guard when symbolic).
bool same_size(const Tensor& a, int64_t da, const Tensor& b, int64_t db);

// The size for messages: the hint of a symbolic size (no guard).
int64_t hint_size(const Tensor& t, int64_t d);

// Fails unless x and y (called a and b in the message) have one dtype.
void check_same_dtype(std::string_view op, const char* a, const char* b, const Tensor& x, const Tensor& y);

// check_scalar_fits for a fill of `numel` elements (full, full_like, fill_, scalar_tensor).
// PyTorch's CPU fill of a single element converts an f16/bf16 value through float without the
// overflow check, so 70000 becomes inf there and is refused for two elements; kiln follows that
// rule on every device. A symbolic fill (numel -1) is never one element.
void check_fill_fits(std::string_view op, const Scalar& value, ScalarType dtype, int64_t numel);

// Fails unless dt is floating, as ATen's floating-only kernels do, naming the kernel:
// "[hardshrink] \"hardshrink_cpu\" not implemented for 'Long'".
void check_floating_kernel(std::string_view op, std::string_view kernel, ScalarType dt);

// Fails unless a loss's reduction is "mean", "sum" or "none", as PyTorch words it:
// "[op] avg is not a valid value for reduction".
void check_reduction(std::string_view op, std::string_view reduction);

}  // namespace kiln
