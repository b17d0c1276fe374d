// kiln/ir/fusion.cpp — fusion group labels and the graph printed with its groups.
#include "ir/fusion.h"

#include "ir/text.h"

#include <fmt/format.h>

#include <algorithm>

namespace kiln::ir {

int FusionGroup::kernels() const {
  switch (kind) {
    case GroupKind::Pointwise:
    case GroupKind::Row:
    case GroupKind::Scan:
    case GroupKind::Matmul: return 1;
    case GroupKind::SplitReduction: return 2;
    case GroupKind::Scatter: return copies_self ? (divides ? 3 : 2) : 1;
    case GroupKind::Concat:
      return static_cast<int>(std::max<size_t>(1, (node->inputs().size() + kConcatInputsPerKernel - 1) / kConcatInputsPerKernel));
    case GroupKind::Extern:
    case GroupKind::Fallback: return 0;
  }
  return 0;
}

std::vector<std::string> Fusion::labels() const {
  std::vector<std::string> out;
  int kernel = 0;
  for (const FusionGroup& g : groups) {
    switch (g.kind) {
      case GroupKind::Pointwise:
      case GroupKind::Row:
      case GroupKind::Scan:
      case GroupKind::Matmul: out.push_back(fmt::format("k{}", kernel++)); break;
      case GroupKind::SplitReduction:
      case GroupKind::Scatter: {
        const int n = g.kernels();
        std::string label = fmt::format("k{}", kernel);
        for (int i = 1; i < n; ++i) label += fmt::format(", k{}", kernel + i);
        out.push_back(label);
        kernel += n;
        break;
      }
      case GroupKind::Concat: {
        const int n = g.kernels();
        out.push_back(n == 1 ? fmt::format("k{}", kernel) : fmt::format("k{}..k{}", kernel, kernel + n - 1));
        kernel += n;
        break;
      }
      case GroupKind::Extern:
      case GroupKind::Fallback:
        out.push_back(fmt::format("{} {}", g.kind == GroupKind::Extern ? "extern" : "fallback", g.node->info().name));
        break;
    }
  }
  return out;
}

std::string print_fused_graph(const Graph& g, const Fusion& fusion, const ShapeEnv* env) {
  std::vector<std::string> marks(g.nodes().size());
  const std::vector<std::string> labels = fusion.labels();
  for (size_t i = 0; i < fusion.groups.size(); ++i)
    for (int n : fusion.groups[i].nodes) {
      std::string& m = marks.at(static_cast<size_t>(n));
      m += (m.empty() ? "" : ", ") + labels[i];
    }
  const std::string text = print_graph(g);
  // One line per node, after the `graph(` line (the printer's layout).
  std::string out = print_shape_header(env);
  size_t line = 0, at = 0;
  while (at < text.size()) {
    const size_t end = text.find('\n', at);
    std::string l = text.substr(at, end == std::string::npos ? std::string::npos : end - at);
    if (line >= 1 && line - 1 < marks.size() && !marks[line - 1].empty()) l += "  # " + marks[line - 1];
    out += l + "\n";
    ++line;
    if (end == std::string::npos) break;
    at = end + 1;
  }
  return out;
}

}  // namespace kiln::ir
