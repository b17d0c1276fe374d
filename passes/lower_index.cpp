// kiln/passes/lower_index.cpp — views, cat and pad as index remapping; small lowering tables.
#include "passes/lower_index.h"

#include "base/error.h"
#include "ir/shape_env.h"
#include "passes/lower.h"

#include <algorithm>
#include <optional>
#include <set>

namespace kiln::passes {

using ir::Expr;
using ir::OpKind;

Expr linear_index(const std::vector<Expr>& idx, const std::vector<Expr>& strides) {
  if (idx.size() != strides.size()) internal_fail("linear_index: {} indices for {} strides", idx.size(), strides.size());
  Expr e = 0;
  for (size_t i = 0; i < idx.size(); ++i) e = e + idx[i] * strides[i];
  return e;
}

std::vector<Expr> unravel(const Expr& flat, const std::vector<Expr>& sizes) {
  std::vector<Expr> idx(sizes.size());
  Expr stride = 1;
  for (size_t i = sizes.size(); i-- > 0;) {
    if (sizes[i] == Expr(1)) {
      idx[i] = 0;
      continue;
    }
    Expr q = stride == Expr(1) ? flat : ir::floordiv(flat, stride);
    idx[i] = i == 0 ? q : ir::mod(q, sizes[i]);
    stride = stride * sizes[i];
  }
  return idx;
}

Expr loop_var(const Expr& extent, const Expr& var) { return extent == Expr(1) ? Expr(0) : var; }

std::vector<Expr> grid_vars(const std::vector<Expr>& extents, const std::vector<size_t>& order, std::vector<Expr>* grid) {
  std::vector<size_t> walk = order;
  if (walk.empty())
    for (size_t d = 0; d < extents.size(); ++d) walk.push_back(d);
  size_t skip = 0;  // leading dims of extent 1, all but the last dim
  while (skip + 1 < walk.size() && extents[walk[skip]] == Expr(1)) ++skip;
  grid->clear();
  std::vector<Expr> idx(extents.size(), Expr(0));
  for (size_t i = skip; i < walk.size(); ++i) {
    grid->push_back(extents[walk[i]]);
    idx[walk[i]] = loop_var(extents[walk[i]], ir::grid_expr(i - skip));
  }
  return idx;
}

std::vector<Expr> loop_vars(const std::vector<Expr>& extents, Expr (*var)(size_t)) {
  std::vector<Expr> v;
  v.reserve(extents.size());
  for (size_t i = 0; i < extents.size(); ++i) v.push_back(loop_var(extents[i], var(i)));
  return v;
}

namespace {

// reshape with symbolic sizes: groups end where the prefix products of input and output dims
// are the same expression (s0*4*16 and s0*64 are one hash-consed Expr), so [s0, 64] ->
// [s0, 4, 16] keeps dim 0 as it is and only splits the 64. Equal prefix products at both ends
// of a group make its index mapping exact for every value of the symbols (a zero prefix
// means an empty tensor, which is never indexed). A group may hold no dim on one side (a
// size-1 dim). Without a common boundary, the rest is one group (a flat index).
std::vector<Expr> reshape_source_symbolic(const std::vector<Expr>& in, const std::vector<Expr>& out,
                                          const std::vector<Expr>& idx) {
  auto prefixes = [](const std::vector<Expr>& sz) {
    std::vector<Expr> p{Expr(1)};
    for (const Expr& e : sz) p.push_back(p.back() * e);
    return p;
  };
  const std::vector<Expr> pa = prefixes(in), pb = prefixes(out);
  std::vector<Expr> src(in.size(), Expr(0));
  size_t i = 0, j = 0;
  while (i < in.size() || j < out.size()) {
    // The nearest common boundary after (i, j).
    size_t i1 = in.size(), j1 = out.size();
    bool found = false;
    for (size_t span = 1; span <= in.size() - i + out.size() - j && !found; ++span)
      for (size_t a = i; a <= in.size() && a - i <= span && !found; ++a) {
        const size_t b = j + span - (a - i);
        if (b <= out.size() && pa[a] == pb[b]) {
          i1 = a;
          j1 = b;
          found = true;
        }
      }
    Expr flat = 0;
    for (size_t d = j; d < j1; ++d) flat = flat * out[d] + idx[d];
    std::vector<Expr> sub(in.begin() + static_cast<long>(i), in.begin() + static_cast<long>(i1));
    std::vector<Expr> part = unravel(flat, sub);
    for (size_t d = i; d < i1; ++d) src[d] = part[d - i];
    i = i1;
    j = j1;
  }
  return src;
}

// reshape: dims are matched in groups of equal products so that index arithmetic stays local
// (a group of one input and one output dim maps the index through unchanged).
std::vector<Expr> reshape_source(const std::vector<Expr>& in, const std::vector<Expr>& out, const std::vector<Expr>& idx) {
  const bool static_shapes = all_const(in) && all_const(out);
  if (!static_shapes) return reshape_source_symbolic(in, out, idx);
  const std::vector<int64_t> a = to_ints(in), b = to_ints(out);
  std::vector<Expr> src(a.size(), Expr(0));
  size_t i = 0, j = 0;
  while (i < a.size() || j < b.size()) {
    // Skip size-1 dims on either side: they contribute index 0 / nothing.
    if (i < a.size() && a[i] == 1) {
      ++i;
      continue;
    }
    if (j < b.size() && b[j] == 1) {
      ++j;
      continue;
    }
    if (i == a.size() || j == b.size()) break;  // only empty tensors get here
    size_t i1 = i + 1, j1 = j + 1;
    int64_t pa = a[i], pb = b[j];
    while (pa != pb) {
      if (pa < pb) {
        if (i1 == a.size()) break;
        pa *= a[i1++];
      } else {
        if (j1 == b.size()) break;
        pb *= b[j1++];
      }
    }
    // Output dims [j, j1) flatten into an offset that unflattens into input dims [i, i1).
    Expr flat = 0;
    for (size_t d = j; d < j1; ++d) flat = flat * Expr(b[d]) + idx[d];
    std::vector<Expr> sub(in.begin() + static_cast<long>(i), in.begin() + static_cast<long>(i1));
    std::vector<Expr> part = unravel(flat, sub);
    for (size_t d = i; d < i1; ++d) src[d] = part[d - i];
    i = i1;
    j = j1;
  }
  return src;
}

}  // namespace

std::vector<Expr> view_source_index(const ir::Node* n, const std::vector<Expr>& idx) {
  const std::vector<Expr>& in = n->input(0)->type().sizes;
  const std::vector<Expr>& out = n->output()->type().sizes;
  switch (ir::as_view(n->op())) {
    case ir::ViewOp::reshape: return reshape_source(in, out, idx);
    case ir::ViewOp::expand: {
      std::vector<Expr> src(in.size());
      const size_t lead = out.size() - in.size();
      for (size_t d = 0; d < in.size(); ++d) src[d] = (in[d] == Expr(1)) ? Expr(0) : idx[d + lead];
      return src;
    }
    case ir::ViewOp::permute: {
      const auto& dims = n->attr<std::vector<int64_t>>("dims");
      std::vector<Expr> src(in.size());
      for (size_t i = 0; i < dims.size(); ++i) src[static_cast<size_t>(dims[i])] = idx[i];
      return src;
    }
    case ir::ViewOp::slice: {
      std::vector<Expr> src = idx;
      const auto dim = static_cast<size_t>(n->attr<int64_t>("dim"));
      src[dim] = n->attr<Expr>("start") + n->attr<Expr>("step") * idx[dim];
      return src;
    }
    case ir::ViewOp::squeeze: {
      const auto& dims = n->attr<std::vector<int64_t>>("dims");
      std::set<int64_t> sq(dims.begin(), dims.end());
      std::vector<Expr> src;
      size_t j = 0;
      for (size_t d = 0; d < in.size(); ++d) src.push_back(sq.count(static_cast<int64_t>(d)) ? Expr(0) : idx[j++]);
      return src;
    }
    case ir::ViewOp::unsqueeze: {
      std::vector<Expr> src = idx;
      src.erase(src.begin() + n->attr<int64_t>("dim"));
      return src;
    }
    case ir::ViewOp::diagonal: {
      const int64_t offset = n->attr<int64_t>("offset");
      const auto d1 = static_cast<size_t>(n->attr<int64_t>("dim1")), d2 = static_cast<size_t>(n->attr<int64_t>("dim2"));
      std::vector<Expr> src(in.size());
      size_t j = 0;
      for (size_t d = 0; d < in.size(); ++d)
        if (d != d1 && d != d2) src[d] = idx[j++];
      const Expr& diag = idx.back();
      src[d1] = diag + Expr(offset < 0 ? -offset : 0);
      src[d2] = diag + Expr(offset > 0 ? offset : 0);
      return src;
    }
    case ir::ViewOp::as_strided: {
      const auto& stride = n->attr<std::vector<Expr>>("stride");
      return unravel(n->attr<Expr>("storage_offset") + linear_index(idx, stride), in);
    }
  }
  internal_fail("view_source_index: unhandled view {}", n->info().name);
}

namespace {

// A piece of cat / constant_pad is read (and the value discarded by the select) even where
// its predicate is false, at an index clamped into its sizes, which exists unless the piece is
// empty. When one of `sizes` may be 0 at run time (a symbolic size, or a constant 0), every
// index of the piece but dim `except` (cat's clamped dim, 0 then anyway) is multiplied by "the
// piece is not empty", so an empty piece reads its index 0 only: within the smallest allocation
// (runtime/allocator.h gives a 0-byte request a 64-byte block), never past it.
std::vector<Expr> guard_empty(const std::vector<Expr>& idx, size_t except, const std::vector<Expr>& sizes) {
  Expr nonempty = 1;
  for (const Expr& s : sizes)
    if (!(s.is_const() && s.as_const() > 0)) nonempty = nonempty * ir::ne(s, Expr(0));
  if (nonempty == Expr(1)) return idx;
  std::vector<Expr> out = idx;
  for (size_t d = 0; d < out.size(); ++d)
    if (d != except) out[d] = out[d] * nonempty;
  return out;
}

}  // namespace

std::vector<PieceIndex> shape_source_pieces(const ir::Node* n, const std::vector<Expr>& idx) {
  std::vector<PieceIndex> pieces;
  switch (ir::as_shape(n->op())) {
    case ir::ShapeOp::cat: {
      const auto dim = static_cast<size_t>(n->attr<int64_t>("dim"));
      Expr offset = 0;
      for (size_t j = 0; j < n->inputs().size(); ++j) {
        const std::vector<Expr>& sz = n->input(j)->type().sizes;
        if (sz.size() != idx.size() || sz[dim] == Expr(0)) continue;  // legacy empty inputs take no room
        PieceIndex p;
        p.input = static_cast<int>(j);
        p.index = guard_empty(idx, dim, {sz[dim]});
        p.index[dim] = ir::max(Expr(0), ir::min(idx[dim] - offset, sz[dim] - 1));
        offset = offset + sz[dim];
        p.predicate = ir::lt(idx[dim], offset);
        pieces.push_back(std::move(p));
      }
      if (!pieces.empty()) pieces.back().always = true;
      return pieces;
    }
    case ir::ShapeOp::constant_pad: {
      const auto& pad = n->attr<std::vector<int64_t>>("pad");
      const std::vector<Expr>& sz = n->input(0)->type().sizes;
      PieceIndex value;
      value.input = -1;
      value.always = true;
      // An input known to be empty is not read at all: what its producer would compute at the
      // clamped index 0 is garbage, and a check there (gather's bounds) would fail on it.
      if (std::any_of(sz.begin(), sz.end(), [](const Expr& s) { return s == Expr(0); })) return {value};
      PieceIndex p;
      p.input = 0;
      std::vector<Expr> padded_sizes;
      for (size_t k = 0; 2 * k + 1 < pad.size(); ++k)
        if (pad[2 * k] != 0 || pad[2 * k + 1] != 0) padded_sizes.push_back(sz[idx.size() - 1 - k]);
      p.index = idx;
      Expr pred = 1;
      bool any_pad = false;
      // pad lists (before, after) pairs starting from the last dim.
      for (size_t k = 0; 2 * k + 1 < pad.size(); ++k) {
        const size_t d = idx.size() - 1 - k;
        const int64_t before = pad[2 * k], after = pad[2 * k + 1];
        if (before == 0 && after == 0) continue;
        const Expr src = idx[d] - Expr(before);
        p.index[d] = ir::max(Expr(0), ir::min(src, sz[d] - 1));
        if (before > 0) pred = pred * ir::le(Expr(0), src);
        if (after > 0) pred = pred * ir::lt(src, sz[d]);
        any_pad = any_pad || before > 0 || after > 0;
      }
      p.index = guard_empty(p.index, idx.size(), padded_sizes);
      p.predicate = ir::ne(pred, Expr(0));
      p.always = !any_pad;
      pieces.push_back(std::move(p));
      pieces.push_back(std::move(value));
      return pieces;
    }
  }
  internal_fail("shape_source_pieces: unhandled op {}", n->info().name);
}

bool split_supported(ir::ReductionOp op) {
  switch (op) {
    case ir::ReductionOp::sum:
    case ir::ReductionOp::prod:
    case ir::ReductionOp::amax:
    case ir::ReductionOp::amin:
    case ir::ReductionOp::any:
    case ir::ReductionOp::all: return true;
    case ir::ReductionOp::argmax:
    case ir::ReductionOp::argmin: return false;
  }
  return false;
}

bool tile_supported(ir::ReductionOp op) { return split_supported(op); }

std::vector<int64_t> unproven_dims(const std::vector<ir::Expr>& index, const std::vector<ir::Expr>& other,
                                   int64_t skip_dim) {
  std::vector<int64_t> out;
  for (size_t d = 0; d < index.size() && d < other.size(); ++d) {
    if (static_cast<int64_t>(d) == skip_dim) continue;
    const std::optional<int64_t> ic = index[d].maybe_const(), oc = other[d].maybe_const();
    // Under a trace, what its guards (ShapeEnv::current(), index_fits' guard) say counts too.
    if (!(index[d] == other[d] || (ic && oc && *ic <= *oc) || ir::known_true(ir::le(index[d], other[d]))))
      out.push_back(static_cast<int64_t>(d));
  }
  return out;
}

bool indexed_read_inlinable(const ir::Node* n) {
  if (n->op() != ir::OpKind::gather && n->op() != ir::OpKind::index_select) return false;
  const ir::TensorType& self = n->input(0)->type();
  const ir::TensorType& index = n->input(1)->type();
  if (self.rank() == 0) return false;  // PyTorch's 0-dim operands: left to the library
  if (n->op() == ir::OpKind::index_select) return index.rank() == 1;
  return index.rank() == self.rank();
}

IndexedRead indexed_read(const ir::Node* n, const std::vector<ir::Expr>& idx) {
  IndexedRead r;
  r.dim = n->attr<int64_t>("dim");
  const auto d = static_cast<size_t>(r.dim);
  r.bound = n->input(0)->type().sizes.at(d);
  r.index_at = n->op() == ir::OpKind::gather ? idx : std::vector<ir::Expr>{idx.at(d)};
  if (n->op() == ir::OpKind::gather) r.unproven = unproven_dims(n->input(1)->type().sizes, n->input(0)->type().sizes, r.dim);
  return r;
}

std::vector<ir::Expr> indexed_source(const IndexedRead& r, const std::vector<ir::Expr>& idx, const ir::Expr& picked) {
  std::vector<ir::Expr> src = idx;
  src.at(static_cast<size_t>(r.dim)) = picked;
  return src;
}

bool indexed_write_kernelable(const ir::Node* n) {
  const ir::OpKind op = n->op();
  if (op != ir::OpKind::scatter && op != ir::OpKind::scatter_add && op != ir::OpKind::scatter_reduce) return false;
  const ir::TensorType& self = n->input(0)->type();
  const ir::TensorType& index = n->input(1)->type();
  const ir::TensorType& src = n->input(2)->type();
  // PyTorch's 0-dim operands act as 1-element 1-D ones: left to the library.
  return self.rank() > 0 && index.rank() == self.rank() && src.rank() == self.rank();
}

LineWalk line_walk(const std::vector<ir::Expr>& sizes, int64_t dim, int64_t tile) {
  LineWalk w;
  w.dim = dim;
  for (size_t d = 0; d < sizes.size(); ++d)
    if (d != static_cast<size_t>(dim)) w.grid.push_back(sizes[d]);
  if (tile > 0 && static_cast<size_t>(dim) + 1 < sizes.size()) {
    w.tile = tile;
    w.last = sizes.back();
    w.grid.back() = ir::floordiv(w.last + (tile - 1), ir::Expr(tile));
  }
  return w;
}

IndexedWrite indexed_write(const ir::Node* n, int64_t tile) {
  IndexedWrite w;
  const std::vector<ir::Expr>& index = n->input(1)->type().sizes;
  const std::vector<ir::Expr>& self = n->input(0)->type().sizes;
  static_cast<LineWalk&>(w) = line_walk(index, n->attr<int64_t>("dim"), tile);
  const auto dim = static_cast<size_t>(w.dim);
  w.whole_lines = true;
  for (size_t d = 0; d < index.size(); ++d) w.whole_lines = w.whole_lines && (d == dim || index[d] == self[d]);
  w.length = index.at(dim);
  w.bound = self.at(dim);
  w.unproven_src = unproven_dims(index, n->input(2)->type().sizes, -1);
  w.unproven_self = unproven_dims(index, self, w.dim);
  return w;
}

std::vector<ir::Expr> LineWalk::line_extents(const ir::Expr& n) const {
  if (tile == 0) return {n};
  const ir::Expr first = ir::grid_expr(grid.size() - 1) * tile;  // the tile's first element
  return {n, ir::min(ir::Expr(tile), last - first)};
}

std::vector<ir::Expr> LineWalk::at(const std::vector<ir::Expr>& grid_idx, const std::vector<ir::Expr>& stage_idx) const {
  std::vector<ir::Expr> idx = grid_idx;
  if (tile > 0) idx.back() = ir::grid_expr(grid.size() - 1) * tile + stage_idx.at(1);
  idx.insert(idx.begin() + dim, stage_idx.at(0));
  return idx;
}

std::vector<std::string> collect_params(const ir::Kernel& k) {
  std::set<std::string> syms;
  auto add = [&](const Expr& e) {
    std::vector<std::string> s;
    e.collect_symbols(s);
    syms.insert(s.begin(), s.end());
  };
  for (const Expr& e : k.grid) add(e);
  for (const ir::KStage& st : k.stages) {
    for (const Expr& e : st.extents) add(e);
    for (const ir::KInst& in : st.body)
      if (in.kind == ir::KOp::Load || in.kind == ir::KOp::Store || in.kind == ir::KOp::Index ||
          (in.kind == ir::KOp::Check && in.check == ir::CheckKind::InBounds))
        add(in.index);
  }
  std::vector<std::string> out;
  for (const std::string& s : syms) {
    const bool loop_var = s.size() >= 2 && (s[0] == 'p' || s[0] == 'r') &&
                          s.find_first_not_of("0123456789", 1) == std::string::npos;
    if (!loop_var && !ir::value_symbol_id(s)) out.push_back(s);
  }
  return out;
}

}  // namespace kiln::passes
