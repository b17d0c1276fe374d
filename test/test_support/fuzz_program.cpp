// kiln/test/test_support/fuzz_program.cpp — the fuzzer's program text (print and parse),
// attributes, its RNG and the construction of input tensors with their layouts.
//
// Text form (one node a line; `#` and `torch:` lines are ignored when parsing):
//   program seed=42
//   sizes s0=5/7 s1=3/2
//   %0 = input dtype=f32 shape=[s0,3] layout=transposed vals=normal
//   %1 = sum %0 dims=[1] keepdim=True
//   output %1
#include "test_support/fuzz_program.h"

#include "test_support/number_text.h"

#include "test_support/make.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace kiln::fuzz {

uint64_t Rng::next() {
  uint64_t z = (s_ += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
int64_t Rng::range(int64_t lo, int64_t hi) {
  if (hi <= lo) return lo;
  return lo + static_cast<int64_t>(next() % static_cast<uint64_t>(hi - lo + 1));
}
double Rng::real() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

uint64_t env_u64(const char* name, uint64_t fallback) {
  const char* v = std::getenv(name);
  if (!v || !*v) return fallback;
  return std::strtoull(v, nullptr, 0);
}

// ---- attributes ---------------------------------------------------------------------------------

bool Attrs::has(std::string_view k) const {
  for (const auto& [key, v] : kv)
    if (key == k) return true;
  return false;
}
const std::string& Attrs::raw(std::string_view k) const {
  for (const auto& [key, v] : kv)
    if (key == k) return v;
  throw std::runtime_error("fuzz: missing attribute " + std::string(k));
}
int64_t Attrs::i(std::string_view k) const { return std::stoll(raw(k)); }
double Attrs::f(std::string_view k) const { return std::stod(raw(k)); }
bool Attrs::b(std::string_view k) const { return raw(k) == "True"; }
ScalarType Attrs::dt(std::string_view k) const { return dtype_parse(raw(k)); }
std::vector<int64_t> Attrs::ints(std::string_view k) const {
  std::string s = raw(k);
  if (s.size() < 2 || s.front() != '[' || s.back() != ']') throw std::runtime_error("fuzz: not a list: " + s);
  std::vector<int64_t> out;
  std::stringstream ss(s.substr(1, s.size() - 2));
  std::string item;
  while (std::getline(ss, item, ','))
    if (!item.empty()) out.push_back(std::stoll(item));
  return out;
}
Scalar Attrs::scalar(std::string_view k) const {
  const std::string& s = raw(k);
  if (s == "True" || s == "False") return Scalar(s == "True");
  if (s.find_first_of(".eEn") != std::string::npos) return Scalar(std::stod(s));
  return Scalar(static_cast<int64_t>(std::stoll(s)));
}

namespace {
const std::vector<std::pair<ScalarType, std::string>>& dtype_names() {
  static const std::vector<std::pair<ScalarType, std::string>> names = {
      {kBool, "bool"}, {kByte, "u8"},  {kChar, "i8"},      {kShort, "i16"}, {kInt, "i32"},
      {kLong, "i64"},  {kHalf, "f16"}, {kBFloat16, "bf16"}, {kFloat, "f32"}, {kDouble, "f64"}};
  return names;
}
}  // namespace

std::string dtype_text(ScalarType t) {
  for (const auto& [d, n] : dtype_names())
    if (d == t) return n;
  return "?";
}
ScalarType dtype_parse(std::string_view s) {
  for (const auto& [d, n] : dtype_names())
    if (n == s) return d;
  throw std::runtime_error("fuzz: unknown dtype " + std::string(s));
}
std::string fmt_double(double v) {
  std::string s = test::shortest_double(v);
  if (s.find_first_of(".eEn") == std::string::npos) s += ".0";
  return s;
}
std::string fmt_ints(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
  return s + "]";
}

// ---- program text -------------------------------------------------------------------------------

std::string Program::text() const {
  std::string s = "program seed=" + std::to_string(seed) + "\n";
  if (!sizes.empty()) {
    s += "sizes";
    for (const auto& [n, v] : sizes) s += " " + n + "=" + std::to_string(v[0]) + "/" + std::to_string(v[1]);
    s += "\n";
  }
  for (size_t i = 0; i < nodes.size(); ++i) {
    s += "%" + std::to_string(i) + " = " + nodes[i].op;
    for (int a : nodes[i].args) s += " %" + std::to_string(a);
    for (const auto& [k, v] : nodes[i].attrs.kv) s += " " + k + "=" + v;
    s += "\n";
  }
  s += "output";
  for (int o : outputs) s += " %" + std::to_string(o);
  return s + "\n";
}

Program Program::parse(std::string_view text) {
  Program p;
  std::stringstream in{std::string(text)};
  std::string line;
  auto bad = [&](const std::string& why) { throw std::runtime_error("fuzz: cannot parse '" + line + "': " + why); };
  auto value_id = [&](const std::string& tok) {
    if (tok.size() < 2 || tok[0] != '%') bad("expected %id, got " + tok);
    int id = std::stoi(tok.substr(1));
    if (id < 0 || id >= static_cast<int>(p.nodes.size())) bad("unknown value " + tok);
    return id;
  };
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#' || line.rfind("torch:", 0) == 0) continue;
    std::stringstream ls(line);
    std::vector<std::string> toks;
    for (std::string t; ls >> t;) toks.push_back(t);
    if (toks.empty()) continue;
    if (toks[0] == "program") {
      for (size_t i = 1; i < toks.size(); ++i)
        if (toks[i].rfind("seed=", 0) == 0) p.seed = std::stoull(toks[i].substr(5));
    } else if (toks[0] == "sizes") {
      for (size_t i = 1; i < toks.size(); ++i) {
        size_t eq = toks[i].find('='), sl = toks[i].find('/');
        if (eq == std::string::npos || sl == std::string::npos) bad("size " + toks[i]);
        p.sizes.push_back({toks[i].substr(0, eq),
                           {std::stoll(toks[i].substr(eq + 1, sl - eq - 1)), std::stoll(toks[i].substr(sl + 1))}});
      }
    } else if (toks[0] == "output") {
      for (size_t i = 1; i < toks.size(); ++i) p.outputs.push_back(value_id(toks[i]));
    } else {
      if (toks.size() < 3 || toks[1] != "=" || toks[0] != "%" + std::to_string(p.nodes.size())) bad("expected %N = op");
      Node n;
      n.op = toks[2];
      for (size_t i = 3; i < toks.size(); ++i) {
        if (toks[i][0] == '%') {
          n.args.push_back(value_id(toks[i]));
        } else {
          size_t eq = toks[i].find('=');
          if (eq == std::string::npos) bad("attribute " + toks[i]);
          n.attrs.set(toks[i].substr(0, eq), toks[i].substr(eq + 1));
        }
      }
      if (n.op != "input" && !find_op(n.op)) bad("unknown op " + n.op);
      p.nodes.push_back(std::move(n));
    }
  }
  if (p.outputs.empty()) throw std::runtime_error("fuzz: program has no output line");
  return p;
}

std::vector<int> Program::input_ids() const {
  std::vector<int> ids;
  for (size_t i = 0; i < nodes.size(); ++i)
    if (nodes[i].op == "input") ids.push_back(static_cast<int>(i));
  return ids;
}

std::vector<int64_t> Program::shape_of_input(int id, int variant) const {
  const std::string& s = nodes.at(id).attrs.raw("shape");
  std::vector<int64_t> out;
  std::stringstream ss(s.substr(1, s.size() - 2));
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (item.empty()) continue;
    if (item[0] == 's') {
      bool found = false;
      for (const auto& [n, v] : sizes)
        if (n == item) out.push_back(v[variant]), found = true;
      if (!found) throw std::runtime_error("fuzz: unknown size variable " + item);
    } else {
      out.push_back(std::stoll(item));
    }
  }
  return out;
}

// ---- inputs -------------------------------------------------------------------------------------

namespace {

Layout layout_of(const Node& n, size_t rank) {
  std::string l = n.attrs.has("layout") ? n.attrs.raw("layout") : "contiguous";
  if (l == "transposed" && rank >= 2) return Layout::Transposed;
  if (l == "expanded" && rank >= 1) return Layout::Expanded;
  if (l == "sliced" && rank >= 1) return Layout::Sliced;
  return Layout::Contiguous;
}

// Logical (row-major) values for input `id`: expanded inputs repeat along dim 0.
std::vector<double> gen_values(const Program& p, int id, int variant) {
  const Node& n = p.nodes.at(id);
  std::vector<int64_t> shape = p.shape_of_input(id, variant);
  ScalarType dt = n.attrs.dt("dtype");
  std::string kind = n.attrs.has("vals") ? n.attrs.raw("vals") : "normal";
  Rng r(p.seed * 0x100000001b3ull + static_cast<uint64_t>(id) * 7919 + static_cast<uint64_t>(variant) * 104729);
  int64_t numel = 1;
  for (int64_t s : shape) numel *= s;
  const bool expanded = layout_of(n, shape.size()) == Layout::Expanded;
  const int64_t inner = shape.empty() || shape[0] == 0 ? 1 : numel / shape[0];
  std::vector<double> v(static_cast<size_t>(numel));
  int64_t bound = 0;
  if (kind.find(':') != std::string::npos) bound = std::stoll(kind.substr(kind.find(':') + 1));
  for (int64_t i = 0; i < numel; ++i) {
    if (expanded && i >= inner) {
      v[static_cast<size_t>(i)] = v[static_cast<size_t>(i % inner)];
      continue;
    }
    double x;
    if (kind.rfind("idx", 0) == 0) x = static_cast<double>(r.range(0, bound - 1));
    else if (kind.rfind("tgt", 0) == 0) x = r.chance(0.2) ? -100.0 : static_cast<double>(r.range(0, bound - 1));
    else if (dt == kBool) x = r.chance(0.5) ? 1 : 0;
    else if (dt == kByte) x = static_cast<double>(r.range(0, 12));
    else if (!is_floating_point(dt)) x = static_cast<double>(r.range(-6, 6));
    else if (kind == "pos") x = 0.25 + 3 * r.real();
    else if (kind == "unit") x = 0.05 + 0.9 * r.real();  // a probability: binary_cross_entropy
    else if (kind == "special" && r.chance(0.3)) {
      static const double sp[] = {0.0, -0.0, 1.0, -1.0, 0.5, NAN, INFINITY, -INFINITY, 2.0, -2.5};
      x = sp[r.range(0, 9)];
    } else {
      x = -3 + 6 * r.real();
    }
    v[static_cast<size_t>(i)] = x;
  }
  if (kind.rfind("perm", 0) == 0) {
    // Distinct values along dim d (the last field): each line along d is a prefix of a
    // shuffled 0..bound-1, so scatter writes each position at most once.
    int64_t d = std::stoll(kind.substr(kind.rfind(':') + 1));
    std::vector<int64_t> strides = contiguous_strides(shape);
    for (int64_t i = 0; i < numel; ++i) {
      if ((i / strides[d]) % shape[d] != 0) continue;  // the start of a line along d
      std::vector<int64_t> perm(static_cast<size_t>(bound));
      for (int64_t k = 0; k < bound; ++k) perm[static_cast<size_t>(k)] = k;
      for (int64_t k = bound - 1; k > 0; --k) std::swap(perm[static_cast<size_t>(k)], perm[static_cast<size_t>(r.range(0, k))]);
      for (int64_t k = 0; k < shape[d]; ++k) v[static_cast<size_t>(i + k * strides[d])] = static_cast<double>(perm[static_cast<size_t>(k)]);
    }
  }
  return v;
}

}  // namespace

Tensor build_input(const Program& p, int id, int variant, const std::vector<double>& logical) {
  const Node& n = p.nodes.at(id);
  std::vector<int64_t> shape = p.shape_of_input(id, variant);
  const size_t rank = shape.size();
  ScalarType dt = n.attrs.dt("dtype");
  Layout layout = layout_of(n, rank);
  std::vector<int64_t> strides = contiguous_strides(shape);
  int64_t offset = 0, storage = 1;
  for (int64_t s : shape) storage *= s;
  if (layout == Layout::Transposed) {
    std::vector<int64_t> swapped = shape;
    std::swap(swapped[rank - 1], swapped[rank - 2]);
    strides = contiguous_strides(swapped);
    std::swap(strides[rank - 1], strides[rank - 2]);
  } else if (layout == Layout::Expanded) {
    std::vector<int64_t> base = shape;
    base[0] = 1;
    strides = contiguous_strides(base);
    strides[0] = 0;
    storage = 1;
    for (int64_t s : base) storage *= s;
  } else if (layout == Layout::Sliced) {
    std::vector<int64_t> base = shape;
    base[rank - 1] = 2 * shape[rank - 1] + 1;
    strides = contiguous_strides(base);
    strides[rank - 1] = 2;
    offset = 1;
    storage = 1;
    for (int64_t s : base) storage *= s;
  }
  // Storage outside the view holds NaN (floats) or 99, which no correct read sees.
  std::vector<double> buf(static_cast<size_t>(std::max<int64_t>(storage, 1)), is_floating_point(dt) ? NAN : 99.0);
  if (dt == kBool) std::fill(buf.begin(), buf.end(), 1.0);
  std::vector<int64_t> idx(rank, 0);
  for (size_t i = 0; i < logical.size(); ++i) {
    int64_t off = offset;
    for (size_t d = 0; d < rank; ++d) off += idx[d] * strides[d];
    buf[static_cast<size_t>(off)] = logical[i];
    for (size_t d = rank; d-- > 0;) {
      if (++idx[d] < shape[d]) break;
      idx[d] = 0;
    }
  }
  Tensor base = dispatch_dtype(dt, [&](auto tag) { return test::mk<decltype(tag)>(buf, {static_cast<int64_t>(buf.size())}); });
  return test::strided(base, shape, strides, offset);
}

Tensor input_tensor(const Program& p, int id, int variant) {
  return build_input(p, id, variant, gen_values(p, id, variant));
}

std::vector<Tensor> make_inputs(const Program& p, int variant) {
  std::vector<Tensor> out;
  for (int id : p.input_ids()) out.push_back(input_tensor(p, id, variant));
  return out;
}

std::vector<Tensor> replay(const Program& p, const std::vector<Tensor>& inputs, std::vector<Tensor>* all,
                           bool functional_views) {
  std::vector<Tensor> vals;
  size_t next_input = 0;
  for (const Node& n : p.nodes) {
    if (n.op == "input") {
      vals.push_back(inputs.at(next_input++));
      continue;
    }
    std::vector<Tensor> args;
    for (int a : n.args) args.push_back(vals.at(static_cast<size_t>(a)));
    vals.push_back(find_op(functional_views && n.op == "view" ? "reshape" : n.op)->run(args, n.attrs));
  }
  std::vector<Tensor> outs;
  for (int o : p.outputs) outs.push_back(vals.at(static_cast<size_t>(o)));
  if (all) *all = vals;
  return outs;
}

// ---- golden files ------------------------------------------------------------------------------

std::vector<GoldenRecord> read_golden_records(const std::string& file) {
  std::ifstream in(file);
  std::vector<GoldenRecord> recs;
  std::string line;
  GoldenRecord r;
  auto starts = [&](const char* s) { return line.rfind(s, 0) == 0; };
  while (std::getline(in, line)) {
    if (line == "begin") r = GoldenRecord{};
    else if (line == "end") recs.push_back(r);
    else if (starts("input %")) r.inputs.push_back(line);
    else if (starts("out ") || starts("error") || starts("grad ") || starts("skip")) r.results.push_back(line);
    else if (!starts("#") && !starts("torch: ")) r.program += line + "\n";
  }
  return recs;
}

void parse_value_line(const std::string& line, int skip, ScalarType* dt, std::vector<int64_t>* shape,
                      std::vector<double>* vals) {
  std::istringstream ss(line);
  std::string tok;
  for (int i = 0; i < skip; ++i) ss >> tok;
  ss >> tok;
  *dt = dtype_parse(tok);
  ss >> tok;
  Attrs a;
  a.set("s", tok);
  *shape = a.ints("s");
  ss >> tok;  // ':'
  vals->clear();
  while (ss >> tok) vals->push_back(tok == "nan" ? NAN : tok == "inf" ? INFINITY : tok == "-inf" ? -INFINITY : std::stod(tok));
}

Tensor tensor_of(ScalarType dt, const std::vector<int64_t>& shape, const std::vector<double>& vals) {
  return dispatch_dtype(dt, [&](auto tag) {
    using T = decltype(tag);
    std::vector<T> x;
    for (double v : vals) {
      if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) x.push_back(T(static_cast<float>(v)));
      else x.push_back(static_cast<T>(v));
    }
    return test::make<T>(x, shape);
  });
}

std::vector<Tensor> golden_inputs(const Program& p, const GoldenRecord& r) {
  std::vector<int> ids = p.input_ids();
  if (ids.size() != r.inputs.size())
    throw std::runtime_error("golden record: " + std::to_string(r.inputs.size()) + " inputs for a program of " +
                             std::to_string(ids.size()));
  std::vector<Tensor> inputs;
  for (size_t k = 0; k < ids.size(); ++k) {
    ScalarType dt;
    std::vector<int64_t> shape;
    std::vector<double> vals;
    parse_value_line(r.inputs[k], 2, &dt, &shape, &vals);
    inputs.push_back(build_input(p, ids[k], 0, vals));
  }
  return inputs;
}

std::string golden_head(const Program& p) {
  std::string out = "begin\n" + p.text();
  for (size_t k = 0; k < p.nodes.size(); ++k) {
    const Node& node = p.nodes[k];
    if (node.op == "input") continue;
    std::vector<std::string> names;
    for (int a : node.args) names.push_back("v" + std::to_string(a));
    out += "torch: v" + std::to_string(k) + " = " + find_op(node.op)->torch(names, node.attrs) + "\n";
  }
  const std::vector<Tensor> in = make_inputs(p, 0);
  const std::vector<int> ids = p.input_ids();
  for (size_t k = 0; k < ids.size(); ++k) {
    out += "input %" + std::to_string(ids[k]) + " " + dtype_text(in[k].dtype()) + " " + fmt_ints(in[k].sizes().vec()) +
           " :";
    for (double v : in[k].to_vector<double>()) out += " " + fmt_double(v);
    out += "\n";
  }
  return out;
}

void write_golden_heads(const std::string& path, uint64_t first, uint64_t n, const GenOptions& opts,
                        const std::function<bool(const Program&)>& keep) {
  std::ofstream out(path);
  for (uint64_t i = 0; i < n; ++i) {
    const Program p = generate(first + i, opts);
    if (!keep || keep(p)) out << golden_head(p) << "end\n";
  }
  std::printf("[fuzz] wrote the programs of %llu seeds to %s\n", static_cast<unsigned long long>(n), path.c_str());
}

}  // namespace kiln::fuzz
