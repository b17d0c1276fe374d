// kiln/test/test_support/fuzz_gen.cpp — the seeded program generator.
//
// It builds a program node by node and runs each new step eagerly at both size variants, so
// the attributes it chooses (dims, slice bounds, index values) are known to be valid for both:
// a step that fails in one variant only, or changes rank between them, is dropped; a step that
// raises kiln::Error in both may end the program (its expected outcome is then that error). Op
// generators (fuzz_ops*.cpp) choose operands through GenCtx: existing values (biased to recent
// ones, so steps chain), or fresh inputs shaped to broadcast with them.
#include "test_support/fuzz_program.h"

#include <algorithm>

namespace kiln::fuzz {

int GenCtx::pick(const std::function<bool(const GenValue&)>& pred) {
  std::vector<int> ok;
  for (size_t i = 0; i < vals.size(); ++i)
    if (!vals[i].random && (!pred || pred(vals[i]))) ok.push_back(static_cast<int>(i));
  if (ok.empty()) return -1;
  // Half the time one of the three newest candidates.
  if (rng.chance(0.5)) {
    size_t k = std::min<size_t>(3, ok.size());
    return ok[ok.size() - 1 - static_cast<size_t>(rng.range(0, static_cast<int64_t>(k) - 1))];
  }
  return rng.pick(ok);
}

ScalarType GenCtx::random_dtype(bool float_bias) {
  double x = rng.real();
  if (float_bias && x < 0.55) return kFloat;
  static const std::vector<ScalarType> all = {kFloat, kDouble, kHalf, kBFloat16, kInt, kLong, kBool, kByte};
  return rng.pick(all);
}

std::array<int64_t, 2> GenCtx::dim(int v, int64_t d) const {
  const auto& dims = vals.at(v).dims;
  if (d < 0) d += static_cast<int64_t>(dims.size());
  return dims.at(static_cast<size_t>(d));
}

std::string GenCtx::scalar_for(ScalarType t) {
  if (t == kBool && rng.chance(0.5)) return rng.chance(0.5) ? "True" : "False";
  if (!is_floating_point(t) || rng.chance(0.3)) return std::to_string(rng.range(-3, 3));
  static const std::vector<double> fs = {0.5, -1.5, 2.0, 0.25, -3.0, 1.0};
  return fmt_double(rng.pick(fs));
}

std::vector<std::array<int64_t, 2>> GenCtx::random_dims(int max_rank) {
  int64_t r = rng.range(0, 99) < 8 ? 0 : rng.range(1, max_rank);
  std::vector<std::array<int64_t, 2>> dims;
  int64_t numel = 1;
  for (int64_t i = 0; i < r; ++i) {
    std::array<int64_t, 2> p;
    double x = rng.real();
    if (x < 0.03) p = {0, 0};
    else if (x < 0.22) p = {1, 1};
    else if (x < 0.55) p = {rng.range(2, 5), 0}, p[1] = p[0];
    else if (x < 0.6) p = {1, rng.range(2, 4)};  // size 1 when traced, then larger
    else {
      // a size variable: reuse one (broadcasting and duck sizing need shared sizes) or a new one
      if (!prog.sizes.empty() && rng.chance(0.6)) p = rng.pick(prog.sizes).second;
      else p = {rng.range(2, 6), rng.range(2, 7)};
    }
    if (numel * std::max(p[0], p[1]) > 64) p = {1, 1};
    numel *= std::max<int64_t>(1, std::max(p[0], p[1]));
    dims.push_back(p);
  }
  return dims;
}

int GenCtx::add_input(ScalarType dtype, const std::vector<std::array<int64_t, 2>>& dims, std::string vals_kind,
                      std::optional<Layout> layout) {
  std::string shape = "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    std::string tok;
    if (dims[i][0] == dims[i][1]) {
      tok = std::to_string(dims[i][0]);
    } else {
      for (const auto& [n, v] : prog.sizes)
        if (v == dims[i]) tok = n;
      if (tok.empty()) {
        tok = "s" + std::to_string(prog.sizes.size());
        prog.sizes.push_back({tok, dims[i]});
      }
    }
    shape += (i ? "," : "") + tok;
  }
  shape += "]";
  Layout l = layout.value_or(Layout::Contiguous);
  if (!layout) {
    double x = rng.real();
    l = x < 0.64 ? Layout::Contiguous : x < 0.76 ? Layout::Transposed : x < 0.88 ? Layout::Expanded : Layout::Sliced;
  }
  static const char* names[] = {"contiguous", "transposed", "expanded", "sliced"};
  if (vals_kind.empty()) vals_kind = is_floating_point(dtype) && rng.chance(0.1) ? "special" : "normal";
  Node n;
  n.op = "input";
  n.attrs.set("dtype", dtype_text(dtype));
  n.attrs.set("shape", shape);
  n.attrs.set("layout", names[static_cast<int>(l)]);
  n.attrs.set("vals", vals_kind);
  prog.nodes.push_back(n);
  int id = static_cast<int>(prog.nodes.size()) - 1;
  GenValue g;
  g.dtype = dtype;
  g.dims = dims;
  g.is_input = true;
  for (int v = 0; v < 2; ++v) g.t[static_cast<size_t>(v)] = input_tensor(prog, id, v);
  vals.push_back(g);
  return id;
}

int GenCtx::broadcast_input(const std::vector<std::array<int64_t, 2>>& dims, ScalarType dtype) {
  std::vector<std::array<int64_t, 2>> out;
  size_t drop = dims.empty() || !rng.chance(0.25) ? 0 : static_cast<size_t>(rng.range(1, static_cast<int64_t>(dims.size())));
  for (size_t i = drop; i < dims.size(); ++i) out.push_back(rng.chance(0.2) ? std::array<int64_t, 2>{1, 1} : dims[i]);
  if (rng.chance(0.08) && out.size() < 4) out.insert(out.begin(), std::array<int64_t, 2>{rng.range(1, 2), 0}), out[0][1] = out[0][0];
  return add_input(dtype, out);
}

namespace {

// Runs n at both variants. 0: fine (value appended); 1: drop it; 2: keep it and end the program.
// The elements a step's operands can broadcast to: when they broadcast (right-aligned, each
// position's sizes equal or 1), the product of the largest size per position; otherwise (a
// contraction such as mm's [3, 17000] x [17000, 5], or a refusal) the largest operand. A step
// over the two ~70k-element operands of a large program can broadcast them to 5e9 elements
// ([70853, 1] with [70853], seed 7301359), which filled the machine's memory before any check
// could refuse it; such a step is not tried.
constexpr double kMaxStepElements = double(1 << 24);
double broadcast_bound(const std::vector<Tensor>& args) {
  size_t rank = 0;
  double largest_operand = 1;
  for (const Tensor& t : args)
    if (t.defined()) {
      rank = std::max(rank, static_cast<size_t>(t.dim()));
      largest_operand = std::max(largest_operand, static_cast<double>(t.numel()));
    }
  double bound = 1;
  for (size_t k = 0; k < rank; ++k) {  // position k from the right
    int64_t largest = 1;
    for (const Tensor& t : args)
      if (t.defined() && k < static_cast<size_t>(t.dim()))
        largest = std::max(largest, t.size(t.dim() - 1 - static_cast<int64_t>(k)));
    for (const Tensor& t : args)
      if (t.defined() && k < static_cast<size_t>(t.dim())) {
        const int64_t s = t.size(t.dim() - 1 - static_cast<int64_t>(k));
        if (s != 1 && s != largest) return largest_operand;  // they do not broadcast
      }
    bound *= static_cast<double>(largest);
  }
  return bound;
}

int try_step(GenCtx& c, const OpSpec& spec, const Node& n) {
  std::array<Tensor, 2> out;
  for (size_t v = 0; v < 2; ++v) {
    std::vector<Tensor> args;
    for (int a : n.args) args.push_back(c.vals.at(static_cast<size_t>(a)).t[v]);
    if (broadcast_bound(args) > kMaxStepElements) return 1;
  }
  int errors = 0, other = 0;
  for (size_t v = 0; v < 2; ++v) {
    std::vector<Tensor> args;
    for (int a : n.args) args.push_back(c.vals.at(static_cast<size_t>(a)).t[v]);
    try {
      out[v] = spec.run(args, n.attrs);
    } catch (const kiln::Error&) {
      ++errors;
    } catch (...) {
      ++other;
    }
  }
  if (other) return 2;  // an internal error or crash-like outcome: the runner reports it
  if (errors == 2) return c.allow_errors && c.rng.chance(0.12) ? 2 : 1;
  if (errors) return 1;
  if (out[0].dim() != out[1].dim() || out[0].dtype() != out[1].dtype()) return 1;
  GenValue g;
  g.dtype = out[0].dtype();
  for (int64_t d = 0; d < out[0].dim(); ++d) g.dims.push_back({out[0].size(d), out[1].size(d)});
  g.t = out;
  g.random = (spec.flags & kRandom) != 0;
  c.vals.push_back(g);
  return 0;
}

}  // namespace

Program generate(uint64_t seed, const GenOptions& opts) {
  Program p;
  p.seed = seed;
  Rng rng(seed ^ 0x5851f42d4c957f2dull);
  GenCtx c{rng, p, {}};
  const int n_inputs = static_cast<int>(rng.range(1, 3));
  for (int i = 0; i < n_inputs; ++i) c.add_input(c.random_dtype(), c.random_dims());
  if (opts.large) {
    // ~70k elements: reductions over them take the split (multi-threaded) path.
    if (rng.chance(0.5)) c.add_input(kFloat, {{rng.range(68000, 72000), rng.range(68000, 72000)}}, "", Layout::Contiguous);
    else c.add_input(rng.chance(0.7) ? kFloat : kDouble, {{rng.range(2, 4), 3}, {17000, 17003}});
  }
  const auto& table = op_table();
  int total_weight = 0;
  for (const OpSpec& s : table) total_weight += s.weight;
  const int steps = static_cast<int>(rng.range(1, opts.max_steps));
  int made = 0;
  bool ended = false;
  for (int attempt = 0; attempt < steps * 8 && made < steps && !ended; ++attempt) {
    int64_t w = rng.range(0, total_weight - 1);
    const OpSpec* spec = &table.back();
    for (const OpSpec& s : table) {
      if (w < s.weight) {
        spec = &s;
        break;
      }
      w -= s.weight;
    }
    const size_t nodes_before = p.nodes.size(), vals_before = c.vals.size(), sizes_before = p.sizes.size();
    Node n;
    n.op = spec->name;
    bool ok = spec->gen(c, n);
    if (ok) {
      p.nodes.push_back(n);
      int r = try_step(c, *spec, n);
      if (r == 0) {
        ++made;
        continue;
      }
      if (r == 2) {
        ended = true;
        c.vals.push_back(GenValue{kFloat, {}, {}, false, false});
        continue;
      }
    }
    // Undo the step and any inputs its generator declared.
    p.nodes.resize(nodes_before);
    c.vals.resize(vals_before);
    p.sizes.resize(sizes_before);
  }
  // Outputs: the last value, values nothing consumed, every random value.
  const int last = static_cast<int>(p.nodes.size()) - 1;
  std::vector<bool> used(p.nodes.size(), false);
  for (const Node& n : p.nodes)
    for (int a : n.args) used[static_cast<size_t>(a)] = true;
  p.outputs.push_back(last);
  if (!ended) {
    for (int i = 0; i < last; ++i) {
      const bool step = p.nodes[static_cast<size_t>(i)].op != "input";
      if (step && (c.vals[static_cast<size_t>(i)].random || (!used[static_cast<size_t>(i)] && p.outputs.size() < 3)))
        p.outputs.push_back(i);
    }
  }
  return p;
}

}  // namespace kiln::fuzz
