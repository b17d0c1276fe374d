// kiln/frontend/ops_linear_einsum.cpp — einsum (frontend/ops_linear.h), which records the
// Linear family's products.
//
// einsum follows PyTorch's own algorithm (aten/src/ATen/native/Linear.cpp): parse the
// subscripts (A-Z before a-z, the ellipsis dims right-aligned across operands), take the
// diagonal of a subscript repeated within an operand, sum a subscript no later operand and not
// the output needs, then contract the operands left to right. Each contraction sorts the
// subscripts of the pair into batch (in both, needed later), contracted (in both, not needed),
// left-only and right-only, and is one bmm of [batch, left, contracted] by [batch, contracted,
// right]. Sizes are read as integers (a symbolic size is pinned by a guard).
#include "frontend/ops_linear.h"

#include "base/error.h"
#include "frontend/decompositions_detail.h"
#include "frontend/dispatch.h"
#include "frontend/ops_factory.h"
#include "frontend/ops.h"
#include "frontend/ops_view.h"

#include <algorithm>
#include <string>

namespace kiln {

namespace {

constexpr int kLetters = 52;  // label ids: 'A'-'Z' 0-25, 'a'-'z' 26-51, ellipsis dim k: 52 + k

int label_of(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return 26 + (c - 'a');
  return -1;
}

char label_char(int id) {
  return id < 26 ? static_cast<char>('A' + id) : id < kLetters ? static_cast<char>('a' + id - 26) : '.';
}

// One term of the equation: letters, with the ellipsis' position (-1: none) among them.
struct Term {
  std::vector<int> letters;
  int ellipsis_at = -1;
};

Term parse_term(std::string_view s, std::string_view what) {
  Term t;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '.') {
      if (t.ellipsis_at >= 0) fail("einsum", "found '.' for {} for which an ellipsis was already found", what);
      if (s.substr(i, 3) != "...") fail("einsum", "found '.' for {} that is not part of any ellipsis", what);
      t.ellipsis_at = static_cast<int>(t.letters.size());
      i += 2;
      continue;
    }
    const int id = label_of(s[i]);
    if (id < 0) fail("einsum", "invalid subscript given at index {} in the equation string, subscripts must be in [a-zA-Z]", i);
    t.letters.push_back(id);
  }
  return t;
}

// The labels of a tensor's dims, its ellipsis dims numbered so that they align from the right.
std::vector<int> expand_term(const Term& t, int64_t ell_dims, int64_t ell_rank) {
  std::vector<int> labels(t.letters.begin(), t.letters.begin() + (t.ellipsis_at < 0 ? t.letters.size() : t.ellipsis_at));
  for (int64_t k = 0; k < ell_dims; ++k) labels.push_back(kLetters + static_cast<int>(ell_rank - ell_dims + k));
  if (t.ellipsis_at >= 0) labels.insert(labels.end(), t.letters.begin() + t.ellipsis_at, t.letters.end());
  return labels;
}

struct Operand {
  Tensor t;
  std::vector<int> labels;  // one per dim
};

size_t position(const std::vector<int>& v, int x) { return static_cast<size_t>(std::find(v.begin(), v.end(), x) - v.begin()); }
bool contains(const std::vector<int>& v, int x) { return std::find(v.begin(), v.end(), x) != v.end(); }

// Sums the dims of `o` whose labels `keep` rejects.
template <typename Keep> void sum_unneeded(Operand& o, Keep keep) {
  std::vector<int64_t> dims;
  std::vector<int> rest;
  for (size_t d = 0; d < o.labels.size(); ++d)
    if (keep(o.labels[d])) rest.push_back(o.labels[d]);
    else dims.push_back(static_cast<int64_t>(d));
  if (dims.empty()) return;
  o.t = o.t.sum(dims);
  o.labels = rest;
}

// `o` permuted to `order` (labels it has) and expanded to `sizes` where it has size 1.
Tensor arrange(const Operand& o, const std::vector<int>& order, const std::vector<int64_t>& sizes) {
  std::vector<int64_t> perm;
  for (int l : order) perm.push_back(static_cast<int64_t>(position(o.labels, l)));
  return o.t.permute(perm).expand(sizes);
}

int64_t product(const std::vector<int64_t>& v, size_t from, size_t to) {
  int64_t p = 1;
  for (size_t i = from; i < to; ++i) p *= v[i];
  return p;
}

// Contracts a and b; `needed(l)`: label l is used by a later operand or the output.
template <typename Needed> Operand contract(const Operand& a, const Operand& b, Needed needed, const std::vector<int64_t>& size_of) {
  std::vector<int> batch, summed, left, right;
  for (int l : a.labels) {
    if (!contains(b.labels, l)) left.push_back(l);
    else if (needed(l)) batch.push_back(l);
    else summed.push_back(l);
  }
  for (int l : b.labels)
    if (!contains(a.labels, l)) right.push_back(l);
  auto sizes = [&](std::initializer_list<const std::vector<int>*> groups) {
    std::vector<int64_t> s;
    for (const std::vector<int>* g : groups)
      for (int l : *g) s.push_back(size_of[static_cast<size_t>(l)]);
    return s;
  };
  std::vector<int> a_order = batch, b_order = batch;
  a_order.insert(a_order.end(), left.begin(), left.end());
  a_order.insert(a_order.end(), summed.begin(), summed.end());
  b_order.insert(b_order.end(), summed.begin(), summed.end());
  b_order.insert(b_order.end(), right.begin(), right.end());
  const std::vector<int64_t> bs = sizes({&batch}), ls = sizes({&left}), ss = sizes({&summed}), rs = sizes({&right});
  const int64_t B = product(bs, 0, bs.size()), L = product(ls, 0, ls.size()), S = product(ss, 0, ss.size()),
                R = product(rs, 0, rs.size());
  const Tensor lhs = arrange(a, a_order, sizes({&batch, &left, &summed})).reshape({B, L, S});
  const Tensor rhs = arrange(b, b_order, sizes({&batch, &summed, &right})).reshape({B, S, R});
  Operand out;
  out.labels = batch;
  out.labels.insert(out.labels.end(), left.begin(), left.end());
  out.labels.insert(out.labels.end(), right.begin(), right.end());
  out.t = bmm(lhs, rhs).reshape(sizes({&batch, &left, &right}));
  return out;
}

}  // namespace

Tensor einsum(std::string_view equation, const std::vector<Tensor>& tensors) {
  std::string eq;
  for (char c : equation)
    if (c != ' ') eq += c;
  if (tensors.empty()) fail("einsum", "must provide at least one operand");
  const size_t arrow = eq.find("->");
  const std::string lhs = eq.substr(0, arrow);
  std::vector<Term> terms;
  for (size_t start = 0;;) {
    const size_t comma = lhs.find(',', start);
    terms.push_back(parse_term(std::string_view(lhs).substr(start, comma == std::string::npos ? std::string::npos : comma - start),
                               "operand " + std::to_string(terms.size())));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (terms.size() > tensors.size()) fail("einsum", "fewer operands were provided than specified in the equation");
  if (terms.size() < tensors.size()) fail("einsum", "more operands were provided than specified in the equation");

  // Dims per operand; the ellipsis covers what the letters leave.
  int64_t ell_rank = 0;
  std::vector<int64_t> ell_dims(terms.size(), 0);
  for (size_t i = 0; i < terms.size(); ++i) {
    const int64_t letters = static_cast<int64_t>(terms[i].letters.size()), dims = tensors[i].dim();
    const bool ell = terms[i].ellipsis_at >= 0;
    if (ell ? letters > dims : letters != dims)
      fail("einsum", "the number of subscripts in the equation ({}) {} the number of dimensions ({}) for operand {}{}",
           letters, ell ? "is more than" : "does not match", dims, i, ell ? "" : " and no ellipsis was given");
    if (ell) ell_dims[i] = dims - letters;
    ell_rank = std::max(ell_rank, ell_dims[i]);
  }
  std::vector<Operand> ops;
  std::vector<int> count(static_cast<size_t>(kLetters), 0);
  for (size_t i = 0; i < terms.size(); ++i) {
    ops.push_back({tensors[i], expand_term(terms[i], ell_dims[i], ell_rank)});
    for (int l : terms[i].letters) ++count[static_cast<size_t>(l)];
  }

  // The output's labels.
  std::vector<int> out;
  if (arrow != std::string::npos) {
    const Term t = parse_term(std::string_view(eq).substr(arrow + 2), "the output");
    for (int l : t.letters) {
      if (count[static_cast<size_t>(l)] == 0)
        fail("einsum", "output subscript {} does not appear in the equation for any input operand", label_char(l));
      if (std::count(t.letters.begin(), t.letters.end(), l) > 1)
        fail("einsum", "output subscript {} appears more than once in the output", label_char(l));
    }
    out = expand_term(t, t.ellipsis_at >= 0 ? ell_rank : 0, ell_rank);
  } else {
    for (int64_t k = 0; k < ell_rank; ++k) out.push_back(kLetters + static_cast<int>(k));
    for (int l = 0; l < kLetters; ++l)
      if (count[static_cast<size_t>(l)] == 1) out.push_back(l);
  }

  // Diagonals of repeated labels, then one size per label (size-1 dims broadcast).
  std::vector<int64_t> size_of(static_cast<size_t>(kLetters + ell_rank), 1);
  std::vector<bool> seen(size_of.size(), false);
  for (size_t i = 0; i < ops.size(); ++i) {
    Operand& o = ops[i];
    for (bool again = true; again;) {  // each diagonal moves the labels: look again from the start
      again = false;
      for (size_t d = 0; d < o.labels.size() && !again; ++d) {
        const size_t first = position(o.labels, o.labels[d]);
        if (first == d) continue;
        const int64_t a = static_cast<int64_t>(first), b = static_cast<int64_t>(d);
        if (o.t.size(a) != o.t.size(b))
          fail("einsum", "subscript {} is repeated for operand {} but the sizes don't match, {} != {}",
               label_char(o.labels[d]), i, o.t.size(a), o.t.size(b));
        const int l = o.labels[d];
        o.t = o.t.diagonal(0, a, b);  // the diagonal becomes the last dim
        o.labels.erase(o.labels.begin() + b);
        o.labels.erase(o.labels.begin() + a);
        o.labels.push_back(l);
        again = true;
      }
    }
    for (size_t d = 0; d < o.labels.size(); ++d) {
      const size_t l = static_cast<size_t>(o.labels[d]);
      const int64_t s = o.t.size(static_cast<int64_t>(d));
      if (seen[l] && s != size_of[l] && s != 1 && size_of[l] != 1)
        fail("einsum", "{} has size {} for operand {} which does not broadcast with previously seen size {}",
             o.labels[d] < kLetters ? "subscript " + std::string(1, label_char(o.labels[d])) : std::string("an ellipsis dim"),
             s, i, size_of[l]);
      if (!seen[l] || size_of[l] == 1) size_of[l] = s;
      seen[l] = true;
    }
  }

  // Sum what nothing later needs, contract left to right.
  auto used_after = [&](size_t i, int l) {
    if (contains(out, l)) return true;
    for (size_t j = i + 1; j < ops.size(); ++j)
      if (contains(ops[j].labels, l)) return true;
    return false;
  };
  for (size_t i = 0; i < ops.size(); ++i) {
    sum_unneeded(ops[i], [&](int l) {
      if (used_after(i, l)) return true;
      for (size_t j = 0; j < i; ++j)
        if (contains(ops[j].labels, l)) return true;
      return false;
    });
  }
  Operand acc = ops[0];
  for (size_t i = 1; i < ops.size(); ++i) acc = contract(acc, ops[i], [&](int l) { return used_after(i, l); }, size_of);
  sum_unneeded(acc, [&](int l) { return contains(out, l); });
  std::vector<int64_t> out_sizes;
  for (int l : out) out_sizes.push_back(size_of[static_cast<size_t>(l)]);
  return arrange(acc, out, out_sizes);
}


}  // namespace kiln
