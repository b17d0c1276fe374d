// kiln/runtime/debug/repro.cpp — the tensor text format and the repro directory layout.
#include "runtime/debug/repro.h"

#include "base/read_file.h"

#include "base/error.h"
#include "frontend/ops_factory.h"
#include "base/half.h"
#include "ir/shape_env.h"
#include "ir/text.h"

#include <fmt/format.h>

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

namespace kiln::rt {

namespace {

// One value of a contiguous tensor as text: (token, decimal for the comment or "").
std::pair<std::string, std::string> format_value(ScalarType dt, const uint8_t* p) {
  switch (dt) {
    case ScalarType::Bool: return {*p ? "1" : "0", ""};
    case ScalarType::UInt8: return {std::to_string(*p), ""};
    case ScalarType::Int8: return {std::to_string(*reinterpret_cast<const int8_t*>(p)), ""};
    case ScalarType::Int16: {
      int16_t v;
      std::memcpy(&v, p, 2);
      return {std::to_string(v), ""};
    }
    case ScalarType::Int32: {
      int32_t v;
      std::memcpy(&v, p, 4);
      return {std::to_string(v), ""};
    }
    case ScalarType::Int64: {
      int64_t v;
      std::memcpy(&v, p, 8);
      return {std::to_string(v), ""};
    }
    case ScalarType::Half: {
      uint16_t b;
      std::memcpy(&b, p, 2);
      return {fmt::format("{:#06x}", b), fmt::format("{}", detail::half_bits_to_float(b))};
    }
    case ScalarType::BFloat16: {
      uint16_t b;
      std::memcpy(&b, p, 2);
      return {fmt::format("{:#06x}", b), fmt::format("{}", detail::bf16_bits_to_float(b))};
    }
    case ScalarType::Float: {
      uint32_t b;
      std::memcpy(&b, p, 4);
      float f;
      std::memcpy(&f, p, 4);
      return {fmt::format("{:#010x}", b), fmt::format("{}", f)};
    }
    case ScalarType::Double: {
      uint64_t b;
      std::memcpy(&b, p, 8);
      double d;
      std::memcpy(&d, p, 8);
      return {fmt::format("{:#018x}", b), fmt::format("{}", d)};
    }
  }
  internal_fail("repro: unknown dtype");
}

template <typename T> bool parse_int_token(std::string_view tok, T& out) {
  auto [ptr, ec] = std::from_chars(tok.data(), tok.data() + tok.size(), out);
  return ec == std::errc() && ptr == tok.data() + tok.size();
}

bool parse_hex(std::string_view tok, uint64_t& out) {
  if (tok.size() < 3 || tok[0] != '0' || (tok[1] != 'x' && tok[1] != 'X')) return false;
  auto [ptr, ec] = std::from_chars(tok.data() + 2, tok.data() + tok.size(), out, 16);
  return ec == std::errc() && ptr == tok.data() + tok.size();
}

bool parse_double(std::string_view tok, double& out) {
  std::string s(tok);
  char* end = nullptr;
  errno = 0;
  out = std::strtod(s.c_str(), &end);
  return end == s.c_str() + s.size() && !s.empty();
}

// Stores one token into element p of dtype dt; false when it does not parse or fit.
bool store_value(ScalarType dt, std::string_view tok, uint8_t* p) {
  uint64_t bits = 0;
  double d = 0;
  const bool hex = parse_hex(tok, bits);
  auto store = [&](auto v) { std::memcpy(p, &v, sizeof v); };
  switch (dt) {
    case ScalarType::Bool:
      if (tok == "1" || tok == "true") *p = 1;
      else if (tok == "0" || tok == "false") *p = 0;
      else return false;
      return true;
    case ScalarType::UInt8: { uint8_t v; if (!parse_int_token(tok, v)) return false; store(v); return true; }
    case ScalarType::Int8: { int8_t v; if (!parse_int_token(tok, v)) return false; store(v); return true; }
    case ScalarType::Int16: { int16_t v; if (!parse_int_token(tok, v)) return false; store(v); return true; }
    case ScalarType::Int32: { int32_t v; if (!parse_int_token(tok, v)) return false; store(v); return true; }
    case ScalarType::Int64: { int64_t v; if (!parse_int_token(tok, v)) return false; store(v); return true; }
    case ScalarType::Half:
      if (hex) { if (bits > 0xffff) return false; store(static_cast<uint16_t>(bits)); return true; }
      if (!parse_double(tok, d)) return false;
      store(detail::float_to_half_bits(static_cast<float>(d)));
      return true;
    case ScalarType::BFloat16:
      if (hex) { if (bits > 0xffff) return false; store(static_cast<uint16_t>(bits)); return true; }
      if (!parse_double(tok, d)) return false;
      store(detail::float_to_bf16_bits(static_cast<float>(d)));
      return true;
    case ScalarType::Float:
      if (hex) { if (bits > 0xffffffffu) return false; store(static_cast<uint32_t>(bits)); return true; }
      if (!parse_double(tok, d)) return false;
      store(static_cast<float>(d));
      return true;
    case ScalarType::Double:
      if (hex) { store(bits); return true; }
      if (!parse_double(tok, d)) return false;
      store(d);
      return true;
  }
  return false;
}

std::vector<std::string_view> split_ws(std::string_view s) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
    size_t j = i;
    while (j < s.size() && !std::isspace(static_cast<unsigned char>(s[j]))) ++j;
    if (j > i) out.push_back(s.substr(i, j - i));
    i = j;
  }
  return out;
}

void write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (out) out.write(text.data(), static_cast<std::streamsize>(text.size()));
  if (!out) fail("repro", "cannot write {}", path);
}

}  // namespace

std::string write_tensors(const std::vector<Tensor>& tensors) {
  std::string out = "# kiln tensors: floats as bit patterns (decimal in the comment)\n";
  for (const Tensor& t0 : tensors) {
    if (!t0.is_cpu()) fail("repro", "only CPU tensors can be written, got one on {}", t0.device().str());
    const Tensor t = t0.contiguous();
    out += fmt::format("tensor {} {}\n", dtype_short_name(t.dtype()), shape_str(t.sizes()));
    const auto* base = static_cast<const uint8_t*>(t.data_ptr());
    const size_t es = t.element_size();
    const int64_t n = t.numel();
    constexpr int64_t kPerLine = 8;
    for (int64_t i = 0; i < n; i += kPerLine) {
      std::string line, comment;
      for (int64_t j = i; j < std::min(n, i + kPerLine); ++j) {
        auto [tok, dec] = format_value(t.dtype(), base + static_cast<size_t>(j) * es);
        line += (j > i ? " " : "") + tok;
        if (!dec.empty()) comment += " " + dec;
      }
      out += line + (comment.empty() ? "" : "   #" + comment) + "\n";
    }
  }
  return out;
}

std::vector<Tensor> parse_tensors(std::string_view text) {
  std::vector<Tensor> out;
  Tensor cur;
  int64_t filled = 0;
  uint8_t* base = nullptr;
  int line_no = 0;
  auto finish = [&](int at) {
    if (cur.defined() && filled != cur.numel())
      fail("repro", "line {}: tensor {} has {} values, expected {}", at, out.size(), filled, cur.numel());
    if (cur.defined()) out.push_back(cur);
    cur = Tensor();
  };
  while (!text.empty()) {
    ++line_no;
    size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1);
    if (size_t hash = line.find('#'); hash != std::string_view::npos) line = line.substr(0, hash);
    std::vector<std::string_view> toks = split_ws(line);
    if (toks.empty()) continue;
    if (toks[0] == "tensor") {
      finish(line_no);
      if (toks.size() < 2) fail("repro", "line {}: expected 'tensor <dtype> [sizes]'", line_no);
      auto dt = dtype_from_short_name(toks[1]);
      if (!dt) fail("repro", "line {}: unknown dtype '{}'", line_no, toks[1]);
      std::string dims;
      for (size_t i = 2; i < toks.size(); ++i) dims += std::string(toks[i]) + " ";
      if (dims.empty() || dims.front() != '[' || dims.find(']') == std::string::npos)
        fail("repro", "line {}: expected sizes in brackets after the dtype", line_no);
      std::vector<int64_t> sizes;
      std::string inner = dims.substr(1, dims.find(']') - 1);
      for (char& c : inner)
        if (c == ',') c = ' ';
      for (std::string_view s : split_ws(inner)) {
        int64_t v;
        if (!parse_int_token(s, v) || v < 0) fail("repro", "line {}: bad size '{}'", line_no, s);
        sizes.push_back(v);
      }
      cur = empty(sizes, TensorOptions(*dt));
      base = static_cast<uint8_t*>(cur.data_ptr());
      filled = 0;
      continue;
    }
    if (!cur.defined()) fail("repro", "line {}: values before any 'tensor' header", line_no);
    for (std::string_view tok : toks) {
      if (filled >= cur.numel())
        fail("repro", "line {}: more values than the {} of tensor {}", line_no, cur.numel(), out.size());
      if (!store_value(cur.dtype(), tok, base + static_cast<size_t>(filled) * cur.element_size()))
        fail("repro", "line {}: '{}' is not a {} value", line_no, tok, dtype_short_name(cur.dtype()));
      ++filled;
    }
  }
  finish(line_no);
  return out;
}

void on_graph_devices(const ir::Graph& g, std::vector<Tensor>& inputs) {
  for (size_t i = 0; i < inputs.size() && i < g.inputs().size(); ++i)
    if (inputs[i].device() != g.inputs()[i]->type().device) inputs[i] = inputs[i].to(g.inputs()[i]->type().device);
}

std::vector<Tensor> default_inputs(const ir::Graph& g, const std::map<std::string, int64_t>& sizes) {
  std::vector<Tensor> out;
  for (const ir::Value* v : g.inputs()) {
    const ir::TensorType& ty = v->type();
    std::vector<int64_t> shape;
    for (const ir::Expr& e : ty.sizes) {
      std::vector<std::string> symbols;
      e.collect_symbols(symbols);
      for (const std::string& s : symbols)
        if (!sizes.count(s))
          fail("repro", "input {} has symbolic type {}; give the inputs explicitly or declare {} in a symbols(...) header",
               v->name(), ty.str(), s);
      const std::optional<int64_t> n = e.evaluate_exact(sizes);
      if (!n) fail("repro", "input {} of type {}: size {} overflows int64 at these sizes", v->name(), ty.str(), e.str());
      if (*n < 0) fail("repro", "input {} of type {}: size {} is {} at these sizes", v->name(), ty.str(), e.str(), *n);
      shape.push_back(*n);
    }
    Tensor t = empty(shape, TensorOptions(ty.dtype));
    auto* p = static_cast<uint8_t*>(t.data_ptr());
    for (int64_t i = 0; i < t.numel(); ++i) {
      std::string tok = ty.dtype == ScalarType::Bool ? std::to_string(i % 2)
                        : is_floating_point(ty.dtype) ? fmt::format("{}", static_cast<double>(i % 7) * 0.5 - 1.5)
                                                      : std::to_string(i % 5);
      store_value(ty.dtype, tok, p + static_cast<size_t>(i) * t.element_size());
    }
    // On the device the graph types it on: a graph for cuda:99 fails here on a machine without
    // that device, instead of running on the host.
    out.push_back(ty.device.is_cpu() ? t : t.to(ty.device));
  }
  return out;
}

std::string read_text_file(const std::string& path, std::string_view op) { return read_regular_file(path, op); }

void write_repro(const std::string& dir, const Repro& r) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) fail("repro", "cannot create {}: {}", dir, ec.message());
  const std::string header = fmt::format(
      "# kiln repro: {} and {} differ on this graph with the inputs in inputs.txt\n# {}\n"
      "# replay: kiln check {}\n",
      r.backend_a, r.backend_b, r.differs, dir);
  write_file(dir + "/graph.kir", header + ir::print_graph(*r.graph));
  write_file(dir + "/inputs.txt", write_tensors(r.inputs));
  write_file(dir + "/repro.txt", fmt::format("backends: {} {}\ndiffers: {}\n", r.backend_a, r.backend_b, r.differs));
}

Repro read_repro(const std::string& path, const std::string& inputs_file) {
  namespace fs = std::filesystem;
  const bool is_dir = fs::is_directory(path);
  const fs::path dir = is_dir ? fs::path(path) : fs::path(path).parent_path();
  const std::string kir = is_dir ? (dir / "graph.kir").string() : path;
  Repro r;
  const std::string text = read_text_file(kir, "repro");
  ir::ShapeEnv env;  // a text with a symbols(...) header declares its sizes there
  r.graph = std::shared_ptr<ir::Graph>(ir::parse_graph(text, ir::declares_symbols(text) ? &env : nullptr).release());
  const fs::path inputs = inputs_file.empty() ? dir / "inputs.txt" : fs::path(inputs_file);
  r.inputs = !inputs_file.empty() || fs::exists(inputs) ? parse_tensors(read_text_file(inputs.string(), "repro"))
                                                        : default_inputs(*r.graph, env.hints());
  on_graph_devices(*r.graph, r.inputs);
  if (const fs::path meta = dir / "repro.txt"; fs::exists(meta)) {
    std::istringstream in(read_text_file(meta.string(), "repro"));
    std::string line;
    while (std::getline(in, line)) {
      if (line.rfind("backends:", 0) == 0) {
        std::vector<std::string_view> b = split_ws(std::string_view(line).substr(9));
        if (b.size() != 2) fail("repro", "{}: 'backends:' needs two names", meta.string());
        r.backend_a = std::string(b[0]);
        r.backend_b = std::string(b[1]);
      } else if (line.rfind("differs:", 0) == 0) {
        r.differs = line.substr(line.find_first_not_of(' ', 8) == std::string::npos ? line.size()
                                                                                     : line.find_first_not_of(' ', 8));
      }
    }
  }
  return r;
}

}  // namespace kiln::rt
