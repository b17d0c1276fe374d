// kiln/frontend/ops_moments_statistics.cpp — statistics over samples (frontend/ops_moments_statistics.h).
//
// Each follows ATen's own composition step by step (measured in PyTorch 2.15 to agree bit for bit
// where the steps are the same ops), recording ops kiln already has:
//   cov        the weighted mean of each row, then the centered rows' product with their
//              weighted transpose, over w_sum - correction (w_sum - correction * sum(w aw) /
//              w_sum with aweights), a factor <= 0 taken as 0 (so inf or NaN, as ATen's);
//   corrcoef   cov divided by the standard deviations, once along each side, clipped to [-1, 1];
//   quantile   the sorted slice read at rank q (n - 1) in f64 (NaN anywhere: the last rank, so
//              the result is NaN; nanquantile: q (non-NaN count - 1)), rounded by the
//              interpolation mode, the two neighbours gathered and lerped;
//   histc      each value's bin (x - min) bins / (max - min), truncated, max itself in the last
//              bin, the counts added by scatter_add into one spare slot for values left out;
//   bincount   scatter_add of ones (or the weights) at each value (eager: the length is a value);
//   trapezoid  sum(y) - (y_first + y_last) / 2, times dx; with points, dx_i (y_i + y_i+1) / 2
//              summed (cumulative_trapezoid: the running sum of the same terms).
#include "frontend/ops_moments_statistics.h"

#include "base/error.h"
#include "frontend/arg_checks.h"
#include "frontend/ops.h"
#include "frontend/ops_factory.h"
#include "frontend/ops_moments.h"
#include "frontend/ops_sort.h"
#include "frontend/ops_view.h"
#include "frontend/promotion.h"
#include "frontend/tracer.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

namespace kiln {

namespace {

// The values of `t`, read on the host. While a function is traced there are none to read (a
// captured tensor is read by reference on every run, so its values at trace time would go
// stale): the op raises DataDependentError, and compile() runs the function eagerly.
template <typename T = double> std::vector<T> host_values(std::string_view op, const Tensor& t, std::string_view why) {
  if (t.is_traced() || Tracer::current())
    fail_data_dependent(op, "{}, which a traced function does not have; compile() runs such a function eagerly", why);
  return t.to_vector<T>();
}

// fweights / aweights: at most 1-D, integral / floating, one per observation, non-negative.
// Returns their values.
std::vector<double> check_weights(const Tensor& w, const char* name, bool integral, int64_t observations) {
  if (w.dim() > 1)
    fail("cov", "cov(): expected {} to have one or fewer dimensions but got {} with {} dimensions", name, name,
         w.dim());
  const bool ok = integral ? is_integral(w.dtype(), /*include_bool=*/false) : is_floating_point(w.dtype());
  if (!ok)
    fail("cov", "cov(): expected {} to have {} dtype but got {} with {} dtype", name,
         integral ? "integral" : "floating point", name, c10_type_name(w.dtype()));
  if (w.numel() != observations)
    fail("cov", "cov(): expected {} to have the same numel as there are observations in the input but got {} != {}",
         name, w.numel(), observations);
  const std::vector<double> v =
      host_values("cov", w, "cov() checks its weights' values (non-negative, not summing to zero)");
  for (double x : v)
    if (!(x >= 0)) fail("cov", "cov(): {} cannot be negative", name);
  return v;
}

}  // namespace

Tensor cov(const Tensor& self, int64_t correction, const std::optional<Tensor>& fweights,
           const std::optional<Tensor>& aweights) {
  constexpr std::string_view op = "cov";
  if (self.dim() > 2)
    fail(op, "cov(): expected input to have two or fewer dimensions but got an input with {} dimensions", self.dim());
  if (self.dtype() == ScalarType::Bool) fail(op, "cov(): bool dtype is not supported for input");
  const Tensor in = self.dim() < 2 ? self.reshape({1, -1}) : self;
  const int64_t n = in.size(1);
  std::optional<Tensor> w;
  std::vector<double> weight(static_cast<size_t>(n), 1.0);  // the product of both weights' values
  if (fweights) {
    const std::vector<double> f = check_weights(*fweights, "fweights", /*integral=*/true, n);
    for (size_t i = 0; i < f.size(); ++i) weight[i] *= f[i];
    w = *fweights;
  }
  if (aweights) {
    const std::vector<double> a = check_weights(*aweights, "aweights", /*integral=*/false, n);
    for (size_t i = 0; i < a.size(); ++i) weight[i] *= a[i];
    w = w ? mul(*w, *aweights) : *aweights;
  }
  double weight_sum = 0;
  for (double x : weight) weight_sum += x;
  if (w && weight_sum == 0) fail(op, "cov(): weights sum to zero, can't be normalized");
  Tensor centered;
  if (w) {
    const Tensor w_sum = sum(*w);
    const Tensor avg = div(sum(mul(in, *w), {1}), w_sum);
    Tensor factor = correction == 0 ? w_sum
                    : aweights      ? sub(w_sum, div(mul(sum(mul(*w, *aweights)), Scalar(correction)), w_sum))
                                    : sub(w_sum, Scalar(correction));
    factor = where(le(factor, 0), zeros({}, factor.options()), factor);
    centered = sub(in, avg.unsqueeze(1));
    return div(mm(centered, mul(centered, *w).t()), factor).squeeze();
  }
  const Tensor avg = div(sum(in, {1}), Scalar(n));
  centered = sub(in, avg.unsqueeze(1));
  int64_t factor = 0;
  if (__builtin_sub_overflow(n, correction, &factor) || factor < 0) factor = 0;
  return div(mm(centered, centered.t()), Scalar(factor)).squeeze();
}

Tensor corrcoef(const Tensor& self) {
  if (self.dim() > 2)
    fail("corrcoef", "corrcoef(): expected input to have two or fewer dimensions but got an input with {} dimensions",
         self.dim());
  const Tensor c = cov(self);
  if (c.dim() == 0) return div(c, c);  // one variable: 1, or NaN for a variance of 0, NaN or inf
  const Tensor sd = sqrt(c.diagonal());
  return clamp(div(div(c, sd.reshape({-1, 1})), sd.reshape({1, -1})), Scalar(-1), Scalar(1));
}

namespace {

enum class Interpolation { linear, lower, higher, midpoint, nearest };

Interpolation parse_interpolation(std::string_view s) {
  if (s == "linear") return Interpolation::linear;
  if (s == "lower") return Interpolation::lower;
  if (s == "higher") return Interpolation::higher;
  if (s == "midpoint") return Interpolation::midpoint;
  if (s == "nearest") return Interpolation::nearest;
  fail("quantile", "quantile() interpolation must be one of linear, lower, higher, midpoint or nearest, but got {}", s);
}

// ATen's quantile_compute; `ignore_nan` for nanquantile.
Tensor quantile_impl(const Tensor& self, const Tensor& q, std::optional<int64_t> dim, bool keepdim,
                     std::string_view interpolation, bool ignore_nan) {
  constexpr std::string_view op = "quantile";
  const Interpolation mode = parse_interpolation(interpolation);
  if (self.numel() == 0) fail(op, "quantile() input tensor must be non-empty");
  if (q.dim() > 1) fail(op, "quantile() q must be a scalar or 1D tensor");
  if (self.dtype() != ScalarType::Float && self.dtype() != ScalarType::Double)
    fail(op, "quantile() input tensor must be either float or double dtype");
  if (q.dtype() != self.dtype()) fail(op, "quantile() q tensor must be same dtype as the input tensor");
  const int64_t d = normalize_dim(op, dim.value_or(0), self.dim());
  if (!q.is_traced())
    for (double v : q.to_vector<double>())
      if (!(v >= 0 && v <= 1)) fail(op, "quantile() q values must be in the range [0, 1]");
  // The slices to reduce as the last dim: [..., S] (no dim: all of self).
  const Tensor flat = !dim || self.dim() == 0 ? self.reshape({-1}) : self.movedim(d, -1);
  const Tensor sorted = std::get<0>(sort(flat, -1));
  const Tensor q64 = q.reshape({-1}).to(ScalarType::Double);  // [Q]
  Tensor rank;
  if (ignore_nan) {
    const Tensor counted = sum(logical_not(isnan(sorted)), {-1}, /*keepdim=*/true);
    rank = mul(q64, sub(counted, 1));
    rank = where(lt(rank, 0), Scalar(0.0), rank);
  } else {
    const int64_t last = sorted.size(-1) - 1;
    rank = where(any(isnan(sorted), {-1}, /*keepdim=*/true), Scalar(static_cast<double>(last)), mul(q64, Scalar(last)));
  }
  if (mode == Interpolation::lower)
    rank = floor(rank);
  else if (mode == Interpolation::higher)
    rank = ceil(rank);
  else if (mode == Interpolation::nearest)
    rank = round(rank);
  // q is checked again where it is read (a traced q has no values above; a captured one may
  // change between calls): a rank of -1 for a q outside [0, 1] (or NaN) makes the gather raise.
  rank = where(logical_and(ge(q64, 0), le(q64, 1)), rank, Scalar(-1.0));
  const Tensor below = rank.to(ScalarType::Int64);
  Tensor values = gather(sorted, -1, below);
  if (mode == Interpolation::linear || mode == Interpolation::midpoint) {
    const Tensor weight = mode == Interpolation::midpoint ? full_like(rank, 0.5) : sub(rank, below);
    const Tensor above = gather(sorted, -1, ceil(rank).to(ScalarType::Int64));
    values = lerp(values, above, weight.to(self.dtype()));
  }
  // [..., Q] -> the reduced shape, with Q first for a 1-D q.
  values = q.dim() == 0 ? values.squeeze(-1) : values.movedim(-1, 0);
  if (!keepdim || self.dim() == 0) return values;
  const int64_t lead = q.dim() == 0 ? 0 : 1;
  if (dim) return values.unsqueeze(lead + d);
  std::vector<int64_t> shape(static_cast<size_t>(self.dim()), 1);
  if (lead) shape.insert(shape.begin(), q.numel());
  return values.reshape(shape);
}

// The scalar-q overloads check q first, then read it in self's dtype (f64 for other dtypes,
// which the dtype check then refuses).
Tensor scalar_q(const Tensor& self, double q) {
  if (!(q >= 0 && q <= 1)) fail("quantile", "quantile() q must be in the range [0, 1] but got {:g}", q);
  const bool floating = self.dtype() == ScalarType::Float || self.dtype() == ScalarType::Double;
  return full({}, q, self.options().dtype(floating ? self.dtype() : ScalarType::Double));
}

}  // namespace

Tensor quantile(const Tensor& self, const Tensor& q, std::optional<int64_t> dim, bool keepdim,
                std::string_view interpolation) {
  return quantile_impl(self, q, dim, keepdim, interpolation, /*ignore_nan=*/false);
}

Tensor quantile(const Tensor& self, double q, std::optional<int64_t> dim, bool keepdim,
                std::string_view interpolation) {
  return quantile_impl(self, scalar_q(self, q), dim, keepdim, interpolation, /*ignore_nan=*/false);
}

Tensor nanquantile(const Tensor& self, const Tensor& q, std::optional<int64_t> dim, bool keepdim,
                   std::string_view interpolation) {
  return quantile_impl(self, q, dim, keepdim, interpolation, /*ignore_nan=*/true);
}

Tensor nanquantile(const Tensor& self, double q, std::optional<int64_t> dim, bool keepdim,
                   std::string_view interpolation) {
  return quantile_impl(self, scalar_q(self, q), dim, keepdim, interpolation, /*ignore_nan=*/true);
}

Tensor histc(const Tensor& self, int64_t bins, const Scalar& min, const Scalar& max) {
  constexpr std::string_view op = "histc";
  if (bins <= 0) fail(op, "torch.histogram(): bins must be > 0, but got {} for dimension 0", bins);
  if (bins == INT64_MAX) fail(op, "torch.histc: {} bins do not fit in memory", bins);
  double lo = min.to_double(), hi = max.to_double();
  if (lo == hi && self.numel() > 0) {  // the data's range
    const std::vector<double> v = host_values(op, self, "histc() with min == max takes its range from the values");
    lo = INFINITY;
    hi = -INFINITY;
    for (double x : v) {
      if (std::isnan(x)) lo = hi = x;
      if (std::isnan(lo)) break;
      lo = std::min(lo, x);
      hi = std::max(hi, x);
    }
  }
  if (lo == hi) {
    lo -= 1;
    hi += 1;
  }
  // Numbers as PyTorch's stream prints them (6 significant digits; a NaN as -nan).
  auto text = [](double v) { return std::isnan(v) ? std::string("-nan") : fmt::format("{:g}", v); };
  if (!std::isfinite(lo) || !std::isfinite(hi))
    fail(op, "torch.histc: range of [{}, {}] is not finite", text(lo), text(hi));
  if (lo > hi) fail(op, "torch.histc: max must be larger than min");
  if (self.dtype() == ScalarType::Bool) fail(op, "\"linspace_cpu\" not implemented for 'Bool'");
  if (!is_floating_point(self.dtype()))
    fail(op, "\"histogram_cpu\" not implemented for '{}'", c10_type_name(self.dtype()));
  // In self's dtype, in ATen's order: (x - L) * bins / (H - L), truncated; H itself in the last
  // bin; values outside [L, H] (NaN included) into the spare slot `bins`, dropped at the end.
  const Tensor x = self.reshape({-1});
  const Tensor L = full({}, lo, x.options()), H = full({}, hi, x.options());
  const Tensor inside = logical_and(ge(x, L), le(x, H));
  const Tensor pos = div(mul(sub(x, L), Scalar(bins)), sub(H, L));
  // A position that overflows (an f16 product past 65504) counts in bin 0, as PyTorch's does.
  const Tensor bin =
      clamp_max(where(logical_and(inside, isfinite(pos)), pos, Scalar(0.0)).to(ScalarType::Int64), Scalar(bins - 1));
  const Tensor slot = where(inside, bin, Scalar(bins));
  const Tensor counts = zeros({bins + 1}, x.options()).scatter_add(0, slot, ones_like(x));
  return counts.narrow(0, 0, bins);
}

Tensor bincount(const Tensor& self, const std::optional<Tensor>& weights, int64_t minlength) {
  constexpr std::string_view op = "bincount";
  if (!is_integral(self.dtype(), /*include_bool=*/false))
    fail(op, "\"bincount_cpu\" not implemented for '{}'", c10_type_name(self.dtype()));
  if (minlength < 0) fail(op, "minlength should be >= 0");
  if (self.dim() == 1 && self.numel() == 0)
    return zeros({minlength}, TensorOptions(ScalarType::Int64).device(self.device()));
  if (self.dim() != 1) fail(op, "bincount only supports 1-d non-negative integral inputs.");
  const std::vector<int64_t> v = host_values<int64_t>(op, self, "bincount's result is as long as its largest value");
  if (*std::min_element(v.begin(), v.end()) < 0) fail(op, "bincount only supports 1-d non-negative integral inputs.");
  if (weights && (weights->dim() != 1 || weights->size(0) != self.size(0)))
    fail(op, "weights should be 1-d and have the same length as input");
  const int64_t largest = *std::max_element(v.begin(), v.end());
  if (largest == INT64_MAX) fail(op, "bincount of the value {} needs more than 2^63 bins", largest);
  const int64_t length = std::max(largest + 1, minlength);
  const ScalarType dtype = !weights                                ? ScalarType::Int64
                           : weights->dtype() == ScalarType::Float ? ScalarType::Float
                                                                   : ScalarType::Double;
  const Tensor added = weights ? weights->to(dtype) : ones({self.size(0)}, TensorOptions(dtype).device(self.device()));
  return zeros({length}, added.options()).scatter_add(0, self.to(ScalarType::Int64), added);
}

namespace {

// Points x viewed against y along d: a 1-D x of y's length lies along d; a lower-rank x gets
// leading 1s. The result's differences along d are the spacings.
Tensor spacings(std::string_view op, const Tensor& y, const Tensor& x, int64_t d) {
  Tensor viewed = x;
  if (x.dim() == 1) {
    if (x.size(0) != y.size(d)) fail(op, "{}: There must be one `x` value for each sample point", op);
    std::vector<int64_t> shape(static_cast<size_t>(y.dim()), 1);
    shape[static_cast<size_t>(d)] = x.size(0);
    viewed = x.reshape(shape);
  } else if (x.dim() < y.dim()) {
    std::vector<int64_t> shape(static_cast<size_t>(y.dim() - x.dim()), 1);
    shape.insert(shape.end(), x.sizes().begin(), x.sizes().end());
    viewed = x.reshape(shape);
  }
  return sub(viewed.slice(d, 1), viewed.slice(d, 0, -1));
}

void check_trapezoid_dtypes(std::string_view op, const Tensor& y, const Tensor* x) {
  if (y.dtype() == ScalarType::Bool || (x && x->dtype() == ScalarType::Bool))
    fail(op, "{}: received a bool input for {}, but bool is not supported", op, x ? "`x` or `y`" : "`y`");
}

void check_dx(std::string_view op, const Scalar& dx) {
  if (dx.is_bool()) fail(op, "{}: Currently, we only support dx as a real number.", op);
}

// y's sizes without dim d, in zeros: the integral over no samples.
Tensor no_samples(const Tensor& y, int64_t d) {
  std::vector<int64_t> shape = y.sizes().vec();
  shape.erase(shape.begin() + d);
  return zeros(shape, y.options());
}

// The sums of neighbours along d: y_i + y_{i+1}.
Tensor pair_sums(const Tensor& y, int64_t d) { return add(y.slice(d, 0, -1), y.slice(d, 1)); }

}  // namespace

Tensor trapezoid(const Tensor& y, const Tensor& x, int64_t dim) {
  constexpr std::string_view op = "trapezoid";
  const int64_t d = normalize_dim(op, dim, y.dim(), /*allow_scalar=*/false);
  if (y.size(d) == 0) return no_samples(y, d);
  check_trapezoid_dtypes(op, y, &x);
  return div(sum(mul(spacings(op, y, x, d), pair_sums(y, d)), {d}), Scalar(2.0));
}

Tensor trapezoid(const Tensor& y, const Scalar& dx, int64_t dim) {
  constexpr std::string_view op = "trapezoid";
  const int64_t d = normalize_dim(op, dim, y.dim(), /*allow_scalar=*/false);
  if (y.size(d) == 0) return no_samples(y, d);
  check_trapezoid_dtypes(op, y, nullptr);
  check_dx(op, dx);
  // dx (sum(y) - (y_first + y_last) / 2), as ATen writes it for a constant spacing.
  const Tensor ends = mul(add(y.select(d, 0), y.select(d, -1)), Scalar(0.5));
  return mul(sub(sum(y, {d}), ends), Scalar(dx.to_double()));
}

Tensor cumulative_trapezoid(const Tensor& y, const Tensor& x, int64_t dim) {
  constexpr std::string_view op = "cumulative_trapezoid";
  const int64_t d = normalize_dim(op, dim, y.dim(), /*allow_scalar=*/false);
  check_trapezoid_dtypes(op, y, &x);
  return cumsum(div(mul(spacings(op, y, x, d), pair_sums(y, d)), Scalar(2.0)), d);
}

Tensor cumulative_trapezoid(const Tensor& y, const Scalar& dx, int64_t dim) {
  constexpr std::string_view op = "cumulative_trapezoid";
  const int64_t d = normalize_dim(op, dim, y.dim(), /*allow_scalar=*/false);
  check_trapezoid_dtypes(op, y, nullptr);
  check_dx(op, dx);
  return cumsum(mul(pair_sums(y, d), Scalar(dx.to_double() / 2.0)), d);
}

}  // namespace kiln
