// kiln/frontend/ops_factory.cpp — tensor factories: empty, zeros, ones, full, arange, linspace,
// logspace, eye, *_like, random tensors and tensors from data.
//
// Factories dispatch the prims full, iota, uniform and normal (so that they have one
// implementation per backend); empty/empty_strided and tensors from data allocate a StorageImpl
// directly. arange and linspace reproduce PyTorch's CPU arithmetic: arange's length is
// computed in double (int64 arithmetic for int64 results) and linspace evaluates start + i*step
// for the first half and end - (steps-1-i)*step for the second half, in the result dtype
// (in double for integral results); logspace raises base to the same exponents, in double.
// Random factories take (seed, offset) from a Generator.
#include "frontend/ops_factory.h"

#include "frontend/arg_checks.h"
#include "frontend/dispatch.h"
#include "frontend/elementwise_layout.h"
#include "base/error.h"
#include "frontend/symbolic.h"
#include "frontend/tracer.h"
#include "frontend/ops.h"
#include "frontend/ops_view.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

namespace kiln {

namespace {
thread_local Device t_default_device;
}  // namespace

Device default_device() { return t_default_device; }
DefaultDeviceScope::DefaultDeviceScope(Device d) : previous_(t_default_device) { t_default_device = d; }
DefaultDeviceScope::~DefaultDeviceScope() { t_default_device = previous_; }


namespace {

using ir::OpKind;

void check_sizes(std::string_view op, IntArrayRef size) {
  for (int64_t s : size) {
    if (s < 0) {
      fail(op, "Trying to create tensor with negative dimension {}: [{}]", s, fmt::join(size.begin(), size.end(), ", "));
    }
  }
  (void)checked_numel(op, size);
}

std::vector<ir::Expr> exprs(IntArrayRef size) { return ir::to_exprs(size.vec()); }

// The dtype a Scalar gives a tensor on its own: bool, int64 or the default float dtype.
ScalarType scalar_default_dtype(const Scalar& v) {
  if (v.is_bool()) return ScalarType::Bool;
  if (v.is_integral()) return ScalarType::Int64;
  return get_default_dtype();
}

Tensor full_prim(IntArrayRef size, const Scalar& value, ScalarType dtype, Device device) {
  return dispatch1(OpKind::full, {}, {exprs(size), value, dtype, device});
}

Tensor iota_prim(int64_t length, const Scalar& start, const Scalar& step, ScalarType dtype, Device device) {
  return dispatch1(OpKind::iota, {}, {ir::Expr(length), start, step, dtype, device});
}

Storage storage_for(std::string_view op, IntArrayRef size, ScalarType dtype, Device device) {
  return make_intrusive<StorageImpl>(checked_nbytes(op, size, dtype), device);
}

void check_floating(std::string_view op, ScalarType dtype) {
  if (!is_floating_point(dtype)) {
    fail(op, "{} only produces floating point dtypes, but got {}", op, c10_type_name(dtype));
  }
}

// linspace's constants as PyTorch's CPU kernel has them for result type T: the bounds
// converted to T and step = (end - start) / (steps - 1), all evaluated in T with rounding after
// each operation (in double for integral T, whose results are truncated at the end).
struct LinspaceConsts {
  double start, end, step;
};

template <typename T>
LinspaceConsts linspace_consts(const Scalar& start, const Scalar& end, int64_t steps) {
  if constexpr (std::is_integral_v<T>) {
    double s = static_cast<double>(start.to<T>());
    double e = static_cast<double>(end.to<T>());
    return {s, e, (e - s) / static_cast<double>(steps - 1)};
  } else if constexpr (std::is_same_v<T, double> || std::is_same_v<T, float>) {
    T s = start.to<T>();
    T e = end.to<T>();
    T step = (e - s) / static_cast<T>(steps - 1);
    return {static_cast<double>(s), static_cast<double>(e), static_cast<double>(step)};
  } else {  // Half, BFloat16: each operation computes in float and rounds to T
    T s = start.to<T>();
    T e = end.to<T>();
    T diff = T(static_cast<float>(e) - static_cast<float>(s));
    T den = T(static_cast<float>(steps - 1));
    T step = T(static_cast<float>(diff) / static_cast<float>(den));
    return {static_cast<float>(s), static_cast<float>(e), static_cast<float>(step)};
  }
}

// logspace's exponents: start and end read in T, their difference taken in T for floating T
// (in f32 for f16 and bf16, then rounded) and in double for integers, over steps - 1 in double.
struct LogspaceConsts {
  double start, end, step;
};

template <typename T>
LogspaceConsts logspace_consts(const Scalar& start, const Scalar& end, int64_t steps) {
  constexpr bool plain = std::is_integral_v<T> || std::is_same_v<T, double> || std::is_same_v<T, float>;
  auto as_double = [](T v) {
    if constexpr (plain) return static_cast<double>(v);
    else return static_cast<double>(static_cast<float>(v));  // Half, BFloat16
  };
  const T s = start.to<T>(), e = end.to<T>();
  double diff = 0;
  if constexpr (std::is_integral_v<T>) diff = as_double(e) - as_double(s);
  else if constexpr (plain) diff = static_cast<double>(T(e - s));
  else diff = as_double(T(static_cast<float>(e) - static_cast<float>(s)));
  return {as_double(s), as_double(e), diff / static_cast<double>(steps - 1)};
}

}  // namespace

// ---- empty, zeros, ones, full ------------------------------------------------------------------------

Tensor empty(IntArrayRef size, TensorOptions opts) {
  check_sizes("empty", size);
  const ScalarType dtype = opts.dtype_or(get_default_dtype());
  return Tensor(make_intrusive<TensorImpl>(storage_for("empty", size, dtype, opts.device_or()), dtype, size));
}

Tensor empty_strided(IntArrayRef size, IntArrayRef stride, TensorOptions opts) {
  const int64_t extent = checked_extent("empty_strided", size, stride);
  const ScalarType dtype = opts.dtype_or(get_default_dtype());
  return Tensor(make_intrusive<TensorImpl>(storage_for("empty_strided", extent, dtype, opts.device_or()), dtype,
                                           size, stride, 0));
}

Tensor zeros(IntArrayRef size, TensorOptions opts) {
  check_sizes("zeros", size);
  return full_prim(size, 0, opts.dtype_or(get_default_dtype()), opts.device_or());
}

Tensor ones(IntArrayRef size, TensorOptions opts) {
  check_sizes("ones", size);
  return full_prim(size, 1, opts.dtype_or(get_default_dtype()), opts.device_or());
}

Tensor full(IntArrayRef size, const Scalar& value, TensorOptions opts) {
  check_sizes("full", size);
  ScalarType dtype = opts.dtype_or(scalar_default_dtype(value));
  check_fill_fits("full", value, dtype, checked_numel("full", size));
  return full_prim(size, value, dtype, opts.device_or());
}

// As at::scalar_tensor: the default dtype unless given, whatever the value's type (unlike full);
// a value the dtype cannot hold is refused as a one-element full refuses it (-1.5 as uint8).
Tensor wrapped_number(const Scalar& value, ScalarType dtype, Device device) {
  return full_prim({}, value, dtype, device);
}

Tensor scalar_tensor(const Scalar& value, TensorOptions opts) {
  const ScalarType dtype = opts.dtype_or(get_default_dtype());
  check_fill_fits("scalar_tensor", value, dtype, 1);
  return full_prim({}, value, dtype, opts.device_or());
}

// ---- arange, linspace, eye -----------------------------------------------------------------------------

Tensor arange(const Scalar& end, TensorOptions opts) { return arange(0, end, 1, opts); }

Tensor arange(const Scalar& start, const Scalar& end, const Scalar& step, TensorOptions opts) {
  bool all_integral = !start.is_floating_point() && !end.is_floating_point() && !step.is_floating_point();
  ScalarType dtype = opts.dtype_or(all_integral ? ScalarType::Int64 : get_default_dtype());
  Device device = opts.device_or();
  if (dtype == ScalarType::Bool) fail("arange", "arange is not supported for dtype Bool");
  double size_d;
  if (is_integral(dtype, false)) {
    // PyTorch's accumulate type for integers is int64: the values are iota of the truncated
    // start and step. Integral bounds size the range in int64; a floating bound or step sizes
    // it in double, as PyTorch does (arange(0.25, 10, 0.5, dtype=int64) is 20 zeros: its step
    // truncates to 0, its size does not).
    const int64_t xs = start.to_int(), xst = step.to_int();
    if (all_integral) {
      const int64_t xe = end.to_int();
      if (xst == 0) fail("arange", "step must be nonzero");
      if (!((xst > 0 && xe >= xs) || (xst < 0 && xe <= xs)))
        fail("arange", "upper bound and larger bound inconsistent with step sign");
      const int64_t sgn = (xst > 0) - (xst < 0);
      size_d = std::ceil(static_cast<double>((xe - xs + xst - sgn) / xst));
    } else {
      const double ds = start.to_double(), de = end.to_double(), dst = step.to_double();
      if (!(dst > 0 || dst < 0)) fail("arange", "step must be nonzero");
      if (!std::isfinite(ds) || !std::isfinite(de)) fail("arange", "unsupported range: {} -> {}", ds, de);
      if (!((dst > 0 && de >= ds) || (dst < 0 && de <= ds)))
        fail("arange", "upper bound and larger bound inconsistent with step sign");
      size_d = std::ceil((de - ds) / dst);
    }
    if (!(size_d >= 0 && size_d <= static_cast<double>(std::numeric_limits<int64_t>::max()))) {
      fail("arange", "invalid size, possible overflow?");
    }
    return iota_prim(static_cast<int64_t>(size_d), xs, xst, dtype, device);
  }
  double xs = start.to_double(), xe = end.to_double(), xst = step.to_double();
  if (!(xst > 0 || xst < 0)) fail("arange", "step must be nonzero");
  if (!std::isfinite(xs) || !std::isfinite(xe)) fail("arange", "unsupported range: {} -> {}", xs, xe);
  if (!((xst > 0 && xe >= xs) || (xst < 0 && xe <= xs))) {
    fail("arange", "upper bound and larger bound inconsistent with step sign");
  }
  size_d = std::ceil((xe - xs) / xst);
  if (!(size_d >= 0 && size_d <= static_cast<double>(std::numeric_limits<int64_t>::max()))) {
    fail("arange", "invalid size, possible overflow?");
  }
  return iota_prim(static_cast<int64_t>(size_d), xs, xst, dtype, device);
}

Tensor linspace(const Scalar& start, const Scalar& end, int64_t steps, TensorOptions opts) {
  if (steps < 0) fail("linspace", "number of steps must be non-negative");
  ScalarType dtype = opts.dtype_or(get_default_dtype());
  Device device = opts.device_or();
  if (dtype == ScalarType::Bool) fail("linspace", "linspace is not supported for dtype Bool");
  if (steps == 0) return full_prim({0}, 0, dtype, device);
  if (steps == 1) return full_prim({1}, start, dtype, device);
  bool integral = is_integral(dtype, false);
  ScalarType compute = integral ? ScalarType::Double : dtype;
  LinspaceConsts k = dispatch_dtype(dtype, [&](auto tag) -> LinspaceConsts {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, bool>) {
      return {0, 0, 0};  // rejected above
    } else {
      return linspace_consts<T>(start, end, steps);
    }
  });
  auto c = [&](double v) { return wrapped_number(v, compute, device).expand({steps}); };
  Tensor idx = iota_prim(steps, 0, 1, compute, device);              // i
  Tensor rev = iota_prim(steps, steps - 1, -1, compute, device);     // steps - 1 - i
  Tensor lo = dispatch1(OpKind::add, {c(k.start), dispatch1(OpKind::mul, {c(k.step), idx})});
  Tensor hi = dispatch1(OpKind::sub, {c(k.end), dispatch1(OpKind::mul, {c(k.step), rev})});
  Tensor first_half = lt(iota_prim(steps, 0, 1, ScalarType::Int64, device), Scalar(steps / 2));
  return to(dispatch1(OpKind::where, {first_half, lo, hi}), dtype);
}

// ATen's logspace: base ^ e in f64, e = start + step i for the first half and end - step
// (steps - 1 - i) for the rest, start and end first read in the result's dtype (an integer
// result truncates); one step is base ^ start, start unrounded. All on the host, as linspace's
// constants, so a traced logspace records only iotas and pointwise ops.
Tensor logspace(const Scalar& start, const Scalar& end, int64_t steps, double base, TensorOptions opts) {
  if (steps < 0) fail("logspace", "number of steps must be non-negative");
  const ScalarType dtype = opts.dtype_or(get_default_dtype());
  const Device device = opts.device_or();
  if (dtype == ScalarType::Bool) fail("logspace", "\"logspace_cpu\" not implemented for 'Bool'");
  if (steps <= 1) return full({steps}, std::pow(base, start.to_double()), ScalarType::Double).to(TensorOptions(dtype).device(device));
  const LogspaceConsts k = dispatch_dtype(dtype, [&](auto tag) -> LogspaceConsts {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, bool>) {
      return {0, 0, 0};  // rejected above
    } else {
      return logspace_consts<T>(start, end, steps);
    }
  });
  const double b = base, s = k.start, e = k.end, step = k.step;
  auto c = [&](double v) { return wrapped_number(v, ScalarType::Double, device).expand({steps}); };
  const Tensor idx = iota_prim(steps, 0, 1, ScalarType::Double, device), rev = iota_prim(steps, steps - 1, -1, ScalarType::Double, device);
  const Tensor lo = dispatch1(OpKind::add, {c(s), dispatch1(OpKind::mul, {c(step), idx})});
  const Tensor hi = dispatch1(OpKind::sub, {c(e), dispatch1(OpKind::mul, {c(step), rev})});
  const Tensor first_half = lt(iota_prim(steps, 0, 1, ScalarType::Int64, device), Scalar(steps / 2));
  return to(pow(Scalar(b), dispatch1(OpKind::where, {first_half, lo, hi})), dtype);
}

Tensor eye(int64_t n, TensorOptions opts) { return eye(n, n, opts); }

Tensor eye(int64_t n, int64_t m, TensorOptions opts) {
  if (n < 0) fail("eye", "n must be greater or equal to 0, got {}", n);
  if (m < 0) fail("eye", "m must be greater or equal to 0, got {}", m);
  Device device = opts.device_or();
  Tensor rows = iota_prim(n, 0, 1, ScalarType::Int64, device).unsqueeze(1).expand({n, m});
  Tensor cols = iota_prim(m, 0, 1, ScalarType::Int64, device).unsqueeze(0).expand({n, m});
  return to(dispatch1(OpKind::eq, {rows, cols}), opts.dtype_or(get_default_dtype()));
}

// ---- *_like -------------------------------------------------------------------------------------------

static TensorOptions like(const Tensor& t, TensorOptions opts) {
  return TensorOptions(opts.dtype_or(t.dtype())).device(opts.device_or(t.device()));
}

// PyTorch's preserve_format: an eager *_like result has `t`'s strides where `t` is dense and
// non-overlapping, else `t`'s dims' order by TensorIterator's rule (frontend/elementwise_layout.h).
// `make` makes a row-major tensor of the sizes it is given, outermost dim first in memory; the
// result is that tensor viewed in `t`'s layout.
// Inside a trace (of a captured eager tensor's *_like) the factory records with `t`'s sizes: a
// traced value has no layout.
template <typename Make>
static Tensor in_layout_of(const Tensor& t, Make make) {
  const TensorImpl* ti = t.impl();
  if (!ti || Tracer::current() || ti->strides() == IntArrayRef(contiguous_strides(ti->sizes()))) return make(t.sizes());
  const std::vector<int64_t> strides = is_non_overlapping_and_dense(ti->sizes(), ti->strides())
                                           ? ti->strides().vec()
                                           : elementwise_output_strides(ti->sizes(), {ti});
  if (strides.empty()) return make(t.sizes());
  const std::vector<int64_t> order = outer_to_inner(ti->sizes(), strides);
  std::vector<int64_t> sizes;
  for (int64_t d : order) sizes.push_back(ti->sizes()[static_cast<size_t>(d)]);
  const Tensor r = make(IntArrayRef(sizes));
  const TensorImpl* ri = r.impl();
  return Tensor(make_intrusive<TensorImpl>(ri->storage(), ri->dtype(), ti->sizes(), strides, ri->storage_offset()));
}

// A traced tensor with symbolic sizes gives a factory with the same symbolic sizes.
Tensor empty_like(const Tensor& t, TensorOptions opts) {
  if (is_symbolic(t)) return zeros_like(t, opts);  // traced: contents are never observed uninitialized
  return in_layout_of(t, [&](IntArrayRef sizes) { return empty(sizes, like(t, opts)); });
}
Tensor zeros_like(const Tensor& t, TensorOptions opts) { return full_like(t, 0, opts); }
Tensor ones_like(const Tensor& t, TensorOptions opts) { return full_like(t, 1, opts); }
Tensor full_like(const Tensor& t, const Scalar& value, TensorOptions opts) {
  if (!is_symbolic(t)) {
    return in_layout_of(t, [&](IntArrayRef sizes) { return full(sizes, value, like(t, opts)); });
  }
  const TensorOptions o = like(t, opts);
  check_fill_fits("full_like", value, o.dtype_or(t.dtype()), -1);  // symbolic: never one element
  return sym_full(sym_sizes(t), value, o.dtype_or(t.dtype()), o.device_or());
}
Tensor fill(const Tensor& t, const Scalar& value) { return full_like(t, value); }
Tensor fill(const Tensor& t, const Tensor& value) {
  if (value.dim() != 0)
    fail("fill", "fill_ only supports 0-dimension value tensor but got tensor with {} dimensions.", value.dim());
  return sym_expand(value.to(t.dtype()), sym_sizes(t)).clone();
}
// The random *_like factories stay row-major, unlike PyTorch's: a draw's numbers follow the
// row-major element order, so an eager draw and a compiled one put the same number at the same
// element (a traced value has no layout to follow).
Tensor rand_like(const Tensor& t, TensorOptions opts) { return rand(t.sizes(), like(t, opts)); }
Tensor randn_like(const Tensor& t, TensorOptions opts) { return randn(t.sizes(), like(t, opts)); }

// ---- random ---------------------------------------------------------------------------------------------

static Tensor random_prim(OpKind kind, IntArrayRef size, double a, double b, Generator& gen, ScalarType dtype,
                          Device device) {
  auto seed = static_cast<int64_t>(gen.seed());
  auto offset = static_cast<int64_t>(gen.next_offset());
  return dispatch1(kind, {}, {exprs(size), a, b, seed, offset, dtype, device});
}

Tensor rand(IntArrayRef size, TensorOptions opts) { return rand(size, default_generator(), opts); }

Tensor rand(IntArrayRef size, Generator& gen, TensorOptions opts) {
  check_sizes("rand", size);
  ScalarType dtype = opts.dtype_or(get_default_dtype());
  check_floating("rand", dtype);
  return random_prim(OpKind::uniform, size, 0.0, 1.0, gen, dtype, opts.device_or());
}

Tensor randn(IntArrayRef size, TensorOptions opts) { return randn(size, default_generator(), opts); }

Tensor randn(IntArrayRef size, Generator& gen, TensorOptions opts) {
  check_sizes("randn", size);
  ScalarType dtype = opts.dtype_or(get_default_dtype());
  // PyTorch 2.15 draws nothing for no elements, so an empty integer or bool randn is allowed
  // (rand checks its dtype first and refuses it).
  if (!is_floating_point(dtype) && checked_numel("randn", size) == 0) return empty(size, TensorOptions(dtype).device(opts.device_or()));
  check_floating("randn", dtype);
  return random_prim(OpKind::normal, size, 0.0, 1.0, gen, dtype, opts.device_or());
}

Tensor randint(int64_t high, IntArrayRef size, TensorOptions opts) { return randint(0, high, size, opts); }

Tensor randint(int64_t low, int64_t high, IntArrayRef size, TensorOptions opts) {
  return randint(low, high, size, default_generator(), opts);
}

// floor(u * (high - low)) + low with u uniform in [0, 1) drawn in float64.
Tensor randint(int64_t low, int64_t high, IntArrayRef size, Generator& gen, TensorOptions opts) {
  check_sizes("randint", size);
  if (low >= high) fail("randint", "random_ expects 'from' to be less than 'to', but got from={} >= to={}", low, high);
  Device device = opts.device_or();
  Tensor u = random_prim(OpKind::uniform, size, 0.0, 1.0, gen, ScalarType::Double, device);
  double range = static_cast<double>(high) - static_cast<double>(low);
  Tensor k = to(floor(mul(u, Scalar(range))), ScalarType::Int64);
  return to(add(k, Scalar(low)), opts.dtype_or(ScalarType::Int64));
}

// ---- from data ------------------------------------------------------------------------------------------

template <typename T>
Tensor tensor(const std::vector<T>& values, IntArrayRef shape, TensorOptions opts) {
  check_sizes("tensor", shape);
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  if (n != static_cast<int64_t>(values.size())) {
    fail("tensor", "the data has {} elements but shape [{}] needs {}", values.size(),
         fmt::join(shape.begin(), shape.end(), ", "), n);
  }
  ScalarType dtype = opts.dtype_or(scalar_type_of<T>);
  Tensor out(make_intrusive<TensorImpl>(storage_for("tensor", shape, dtype, Device()), dtype, shape));
  dispatch_dtype(dtype, [&](auto tag) {
    using D = decltype(tag);
    D* p = static_cast<D*>(out.impl()->data());
    for (size_t i = 0; i < values.size(); ++i) {
      T v = values[i];
      if constexpr (std::is_same_v<D, bool>) {
        p[i] = static_cast<double>(v) != 0.0;
      } else if constexpr (std::is_same_v<D, Half> || std::is_same_v<D, BFloat16>) {
        if constexpr (std::is_same_v<T, double> || std::is_integral_v<T>) {
          p[i] = D(static_cast<float>(static_cast<double>(v)));
        } else {
          p[i] = D(static_cast<float>(v));
        }
      } else if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
        p[i] = static_cast<D>(static_cast<float>(v));
      } else {
        p[i] = static_cast<D>(v);
      }
    }
    return 0;
  });
  Device device = opts.device_or();
  return device == Device() ? out : out.to(device);
}

#define KILN_INSTANTIATE_TENSOR(T) template Tensor tensor<T>(const std::vector<T>&, IntArrayRef, TensorOptions);
KILN_INSTANTIATE_TENSOR(bool)
KILN_INSTANTIATE_TENSOR(uint8_t)
KILN_INSTANTIATE_TENSOR(int8_t)
KILN_INSTANTIATE_TENSOR(int16_t)
KILN_INSTANTIATE_TENSOR(int32_t)
KILN_INSTANTIATE_TENSOR(int64_t)
KILN_INSTANTIATE_TENSOR(Half)
KILN_INSTANTIATE_TENSOR(BFloat16)
KILN_INSTANTIATE_TENSOR(float)
KILN_INSTANTIATE_TENSOR(double)
#undef KILN_INSTANTIATE_TENSOR

static TensorOptions with_default(TensorOptions opts, ScalarType t) { return opts.dtype(opts.dtype_or(t)); }

Tensor tensor(std::initializer_list<double> values, TensorOptions opts) {
  return tensor<double>(std::vector<double>(values), with_default(opts, get_default_dtype()));
}
Tensor tensor(std::initializer_list<float> values, TensorOptions opts) {
  return tensor<float>(std::vector<float>(values), with_default(opts, get_default_dtype()));
}
Tensor tensor(std::initializer_list<int> values, TensorOptions opts) {
  std::vector<int64_t> v(values.begin(), values.end());
  return tensor<int64_t>(v, with_default(opts, ScalarType::Int64));
}
Tensor tensor(std::initializer_list<int64_t> values, TensorOptions opts) {
  return tensor<int64_t>(std::vector<int64_t>(values), with_default(opts, ScalarType::Int64));
}
Tensor tensor(std::initializer_list<bool> values, TensorOptions opts) {
  return tensor<bool>(std::vector<bool>(values), with_default(opts, ScalarType::Bool));
}

}  // namespace kiln
