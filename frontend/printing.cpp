// kiln/frontend/printing.cpp — Tensor::str(), Tensor::toString() and operator<<.
//
// str() reproduces Python's repr of a torch tensor (torch/_tensor_str.py) under the default
// print options: precision 4, threshold 1000 elements (beyond it each dim shows its first and
// last 3 entries around "..."), linewidth 80. The element format is chosen once per tensor as
// PyTorch's _Formatter does: integer-valued floats print as "1." (int_mode), widely ranged or
// very large/small floats print in scientific notation, the rest in fixed notation; every
// element is padded to the widest one. f16/bf16 print as their float32 value. Suffixes
// (device, size, dtype) follow _str_intern and wrap as _add_suffixes does.
//
// Elements are read straight through data pointer + strides, so printing depends on no other
// op (and works on any view). A traced tensor has no data: it prints its IR type instead,
// e.g. "tensor(<traced f32[2, 3]>)".
#include "base/dtype.h"
#include "base/error.h"
#include "frontend/tensor.h"
#include "ir/graph.h"
#include "ir/tensor_type.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ostream>
#include <string>
#include <type_traits>
#include <vector>

namespace kiln {

namespace {

// torch._tensor_str.PRINT_OPTS defaults.
constexpr int kPrecision = 4;
constexpr int64_t kThreshold = 1000;
constexpr int64_t kEdgeItems = 3;
constexpr int64_t kLineWidth = 80;

// A strided view of CPU memory: element (i0, i1, ...) lives at base + sum(ik * strides[k]).
struct StridedData {
  const char* base;
  ScalarType dtype;
  IntArrayRef sizes;
  IntArrayRef strides;

  const char* at(int64_t elem_offset) const { return base + elem_offset * static_cast<int64_t>(element_size(dtype)); }
  // A floating element as Python sees it after .item(): widened to double.
  double as_double(int64_t off) const {
    const char* p = at(off);
    return dispatch_dtype(dtype, [&](auto v) -> double {
      using T = decltype(v);
      if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
        return static_cast<double>(static_cast<float>(*reinterpret_cast<const T*>(p)));
      } else {
        return static_cast<double>(*reinterpret_cast<const T*>(p));
      }
    });
  }
  // A bool or integer element as Python's "{}".format prints it.
  std::string as_int_string(int64_t off) const {
    const char* p = at(off);
    return dispatch_dtype(dtype, [&](auto v) -> std::string {
      using T = decltype(v);
      if constexpr (std::is_same_v<T, bool>) {
        return *reinterpret_cast<const bool*>(p) ? "True" : "False";
      } else if constexpr (std::is_integral_v<T>) {
        return std::to_string(static_cast<int64_t>(*reinterpret_cast<const T*>(p)));
      } else {
        internal_fail("printing: integer read of floating dtype {}", dtype_name(dtype));
      }
    });
  }
};

// The indices of one dim that are printed: all, or the first and last kEdgeItems when the
// tensor is summarized and the dim is longer than 2 * kEdgeItems.
bool elided(int64_t size, bool summarize) { return summarize && size > 2 * kEdgeItems; }

std::vector<int64_t> shown_indices(int64_t size, bool summarize) {
  std::vector<int64_t> idx;
  if (elided(size, summarize)) {
    for (int64_t i = 0; i < kEdgeItems; ++i) idx.push_back(i);
    for (int64_t i = size - kEdgeItems; i < size; ++i) idx.push_back(i);
  } else {
    for (int64_t i = 0; i < size; ++i) idx.push_back(i);
  }
  return idx;
}

// Element offsets of get_summarized_data(t) (or of all of t), in row-major order.
void collect_offsets(const StridedData& d, size_t dim, int64_t off, bool summarize, std::vector<int64_t>& out) {
  if (dim == d.sizes.size()) {
    out.push_back(off);
    return;
  }
  for (int64_t i : shown_indices(d.sizes[dim], summarize)) {
    collect_offsets(d, dim + 1, off + i * d.strides[dim], summarize, out);
  }
}

// Python's "{:.<prec>f}" / "{:.<prec>e}" of a float (printf rounds exactly, as Python does).
std::string format_double(double v, bool sci, int prec) {
  if (std::isnan(v)) return "nan";  // Python prints "nan" whatever the sign bit
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[512];  // %f of the largest double needs 309 digits
  std::snprintf(buf, sizeof(buf), sci ? "%.*e" : "%.*f", prec, v);
  return buf;
}
std::string fixed(double v) { return format_double(v, false, kPrecision); }
std::string scientific(double v) { return format_double(v, true, kPrecision); }
std::string integral(double v) { return format_double(v, false, 0); }

// torch._tensor_str._Formatter: decides int_mode / sci_mode and the common width.
class Formatter {
 public:
  Formatter(const StridedData& d, const std::vector<int64_t>& offsets) : data_(d) {
    floating_ = is_floating_point(d.dtype);
    if (!floating_) {
      for (int64_t off : offsets) max_width_ = std::max(max_width_, d.as_int_string(off).size());
      return;
    }
    std::vector<double> vals;
    for (int64_t off : offsets) {
      double v = d.as_double(off);
      if (std::isfinite(v) && v != 0) vals.push_back(v);
    }
    if (vals.empty()) return;  // no valid number: int_mode, width 1
    double mn = std::abs(vals[0]), mx = std::abs(vals[0]);
    for (double v : vals) {
      mn = std::min(mn, std::abs(v));
      mx = std::max(mx, std::abs(v));
      if (v != std::ceil(v)) int_mode_ = false;
    }
    if (int_mode_) {
      if (mx / mn > 1000.0 || mx > 1.0e8) {
        sci_mode_ = true;
        for (double v : vals) max_width_ = std::max(max_width_, scientific(v).size());
      } else {
        for (double v : vals) max_width_ = std::max(max_width_, integral(v).size() + 1);
      }
    } else if (mx / mn > 1000.0 || mx > 1.0e8 || mn < 1.0e-4) {
      sci_mode_ = true;
      for (double v : vals) max_width_ = std::max(max_width_, scientific(v).size());
    } else {
      for (double v : vals) max_width_ = std::max(max_width_, fixed(v).size());
    }
  }

  size_t width() const { return max_width_; }

  std::string format(int64_t off) const {
    std::string ret;
    if (floating_) {
      double v = data_.as_double(off);
      if (sci_mode_) {
        ret = scientific(v);
      } else if (int_mode_) {
        ret = integral(v);
        if (std::isfinite(v)) ret += ".";
      } else {
        ret = fixed(v);
      }
    } else {
      ret = data_.as_int_string(off);
    }
    if (ret.size() < max_width_) ret.insert(0, max_width_ - ret.size(), ' ');
    return ret;
  }

 private:
  const StridedData& data_;
  bool floating_ = false;
  bool int_mode_ = true;
  bool sci_mode_ = false;
  size_t max_width_ = 1;
};

// Appends parts joined by sep. (Strings are built by appending throughout: GCC 12 at -O3
// reports a false -Wrestrict for `"literal" + std::string` temporaries.)
void append_joined(std::string& out, const std::vector<std::string>& parts, const std::string& sep) {
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i) out += sep;
    out += parts[i];
  }
}

std::string bracketed(const std::vector<std::string>& parts, const std::string& sep) {
  std::string out = "[";
  append_joined(out, parts, sep);
  out += ']';
  return out;
}

// _vector_str: one dim of elements, wrapped to the line width.
std::string vector_str(const StridedData& d, int64_t off, int64_t indent, bool summarize, const Formatter& f) {
  const size_t dim = d.sizes.size() - 1;
  const int64_t size = d.sizes[dim];
  const int64_t element_length = static_cast<int64_t>(f.width()) + 2;
  const int64_t per_line = std::max<int64_t>(1, (kLineWidth - indent) / element_length);
  std::vector<std::string> items;
  for (int64_t i : shown_indices(size, summarize)) {
    if (elided(size, summarize) && i == size - kEdgeItems) items.push_back(" ...");
    items.push_back(f.format(off + i * d.strides[dim]));
  }
  std::vector<std::string> lines;
  for (size_t i = 0; i < items.size(); i += static_cast<size_t>(per_line)) {
    std::vector<std::string> line(items.begin() + static_cast<std::ptrdiff_t>(i),
                                  items.begin() + static_cast<std::ptrdiff_t>(std::min(items.size(), i + per_line)));
    std::string text;
    append_joined(text, line, ", ");
    lines.push_back(std::move(text));
  }
  std::string sep = ",\n";
  sep.append(static_cast<size_t>(indent + 1), ' ');
  return bracketed(lines, sep);
}

// _tensor_str_with_formatter for the sub-tensor at `dim` starting at element offset `off`.
std::string tensor_str(const StridedData& d, size_t dim, int64_t off, int64_t indent, bool summarize,
                       const Formatter& f) {
  const size_t rank = d.sizes.size();
  if (rank == 0) return f.format(off);
  if (dim == rank - 1) return vector_str(d, off, indent, summarize, f);
  const int64_t size = d.sizes[dim];
  std::vector<std::string> slices;
  for (int64_t i : shown_indices(size, summarize)) {
    if (elided(size, summarize) && i == size - kEdgeItems) slices.push_back("...");
    slices.push_back(tensor_str(d, dim + 1, off + i * d.strides[dim], indent + 1, summarize, f));
  }
  std::string sep = ",";
  sep.append(rank - dim - 1, '\n');
  sep.append(static_cast<size_t>(indent + 1), ' ');
  return bracketed(slices, sep);
}

// _add_suffixes: ", suffix" on the last line while it fits in the line width, else a new line.
std::string add_suffixes(const std::string& tensor_str, const std::vector<std::string>& suffixes, int64_t indent) {
  std::string out = tensor_str;
  // Python: len(s) - s.rfind("\n") + 1, where rfind gives -1 when there is no newline.
  size_t nl = tensor_str.rfind('\n');
  int64_t rfind = nl == std::string::npos ? -1 : static_cast<int64_t>(nl);
  int64_t last_line_len = static_cast<int64_t>(tensor_str.size()) - rfind + 1;
  for (const std::string& suffix : suffixes) {
    int64_t suffix_len = static_cast<int64_t>(suffix.size());
    if (last_line_len + suffix_len + 2 > kLineWidth) {
      out += ",\n";
      out.append(static_cast<size_t>(indent), ' ');
      out += suffix;
      last_line_len = indent + suffix_len;
    } else {
      out += ", ";
      out += suffix;
      last_line_len += suffix_len + 2;
    }
  }
  out += ')';
  return out;
}

// str(tuple(shape)): "(0, 3)", "(0,)".
std::string python_tuple(IntArrayRef sizes) {
  std::string s = "(";
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(sizes[i]);
  }
  if (sizes.size() == 1) s += ",";
  s += ')';
  return s;
}

}  // namespace

std::string Tensor::str() const {
  if (!defined()) return "[ Tensor (undefined) ]";  // libtorch's text for an undefined tensor
  const std::string prefix = "tensor(";
  const int64_t indent = static_cast<int64_t>(prefix.size());
  std::vector<std::string> suffixes;

  if (is_traced()) {  // no data to read: show the IR type (it names a non-CPU device itself)
    return add_suffixes(fmt::format("{}<traced {}>", prefix, impl()->value()->type().str()), suffixes, indent);
  }
  if (!device().is_cpu()) suffixes.push_back(fmt::format("device='{}'", device().str()));

  const ScalarType dt = dtype();
  std::string body;
  if (numel() == 0) {
    // Explicit shape unless it is (0,); an empty tensor shows every dtype but the default.
    if (dim() != 1) suffixes.push_back(fmt::format("size={}", python_tuple(sizes())));
    if (dt != get_default_dtype()) suffixes.push_back(fmt::format("dtype=torch.{}", dtype_name(dt)));
    body = "[]";
  } else {
    bool default_dtype = dt == get_default_dtype() || dt == ScalarType::Int64 || dt == ScalarType::Bool;
    if (!default_dtype) suffixes.push_back(fmt::format("dtype=torch.{}", dtype_name(dt)));
    Tensor host = is_cpu() ? *this : to(Device(DeviceType::CPU));
    const TensorImpl& impl = *host.impl();
    StridedData data{static_cast<const char*>(impl.data()), dt, impl.sizes(), impl.strides()};
    const bool summarize = impl.numel() > kThreshold;
    std::vector<int64_t> offsets;
    collect_offsets(data, 0, 0, summarize, offsets);
    Formatter formatter(data, offsets);
    body = tensor_str(data, 0, 0, indent, summarize, formatter);
  }
  return add_suffixes(prefix + body, suffixes, indent);
}

std::string Tensor::toString() const {
  if (!defined()) return "UndefinedType";
  return (device().is_cuda() ? "CUDA" : "CPU") + std::string(c10_type_name(dtype())) + "Type";
}

std::ostream& operator<<(std::ostream& os, const Tensor& t) { return os << t.str(); }

}  // namespace kiln
