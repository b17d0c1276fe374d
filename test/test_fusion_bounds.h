// kiln/test/test_fusion_bounds.h — every memory access of a plan's kernels stays inside its buffer.
//
// Generated kernels are JIT-compiled, so AddressSanitizer does not see their loads and stores.
// check_plan_bounds evaluates, for given values of the size symbols, the index of every load
// and store of every kernel step at every point of its grid and stage loops, and checks it
// against the buffer it addresses: within [0, max offset] of the buffer's sizes and strides, and
// exactly 0 for an empty buffer (the allocator gives every buffer at least one 64-byte block;
// a discarded read of a cat/pad piece that is empty reads there). Exhaustive: meant for small
// sizes.
#pragma once

#include "ir/expr.h"
#include "ir/kernel.h"
#include "ir/exec_plan.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace kiln::test {

// "" when every access is in bounds, else the first violation.
inline std::string check_plan_bounds(const ir::ExecPlan& plan, const std::map<std::string, int64_t>& symbols) {
  for (const ir::PlanStep& st : plan.steps) {
    if (st.kind != ir::StepKind::Kernel) continue;
    const ir::Kernel& k = st.kernel;
    // The largest offset each argument may be addressed at (-1: nothing but index 0 of an
    // empty buffer is allowed).
    std::vector<int64_t> max_offset;
    for (size_t a = 0; a < k.args.size(); ++a) {
      const ir::PlanBuffer& b = plan.buffers.at(static_cast<size_t>(st.buffers.at(a)));
      int64_t off = 0;
      bool empty = false;
      for (size_t d = 0; d < b.type.sizes.size(); ++d) {
        const int64_t n = b.type.sizes[d].evaluate(symbols);
        if (n == 0) empty = true;
        else off += (n - 1) * b.strides.at(d).evaluate(symbols);
      }
      max_offset.push_back(empty ? -1 : off);
    }
    std::map<std::string, int64_t> env = symbols;
    std::string err;
    auto check_stage = [&](const ir::KStage& s) {
      std::function<void(size_t)> nest = [&](size_t i) {
        if (!err.empty()) return;
        if (i < s.extents.size()) {
          const int64_t n = s.extents[i].evaluate(env);
          for (int64_t r = 0; r < n && err.empty(); ++r) {
            env[ir::stage_var(i)] = r;
            nest(i + 1);
          }
          return;
        }
        std::map<std::string, int64_t> checked;  // v<id> of an InBounds check -> its bound
        for (const ir::KInst& in : s.body) {
          if (in.kind == ir::KOp::Check && in.check == ir::CheckKind::InBounds)
            checked[ir::value_expr(in.id).symbol_name()] = in.index.evaluate(env);
          if (in.kind != ir::KOp::Load && in.kind != ir::KOp::Store) continue;
          // A position read from data lies in [0, bound) after its check: the index is
          // checked at both ends of that range, for every such position it uses.
          std::vector<std::string> syms, data;
          in.index.collect_symbols(syms);
          for (const std::string& x : syms)
            if (checked.count(x)) data.push_back(x);
          int64_t idx = 0;
          for (size_t corner = 0; corner < (size_t{1} << data.size()) && err.empty(); ++corner) {
            for (size_t j = 0; j < data.size(); ++j)
              env[data[j]] = (corner >> j) & 1 ? std::max<int64_t>(checked[data[j]] - 1, 0) : 0;
            idx = in.index.evaluate(env);
            if (idx < 0 || idx > std::max<int64_t>(max_offset[static_cast<size_t>(in.arg)], 0)) break;
          }
          const int64_t hi = max_offset[static_cast<size_t>(in.arg)];
          if (idx < 0 || idx > std::max<int64_t>(hi, 0)) {
            std::string at;
            for (const auto& [name, v] : env) at += fmt::format(" {}={}", name, v);
            err = fmt::format("kernel {}: {} {}[{}] = {} outside [0, {}] at{}", k.name,
                              in.kind == ir::KOp::Load ? "load" : "store", k.args[static_cast<size_t>(in.arg)].name,
                              in.index.str(), idx, hi < 0 ? "0 (empty)" : std::to_string(hi), at);
            return;
          }
        }
      };
      nest(0);
    };
    std::function<void(size_t)> grid = [&](size_t d) {
      if (!err.empty()) return;
      if (d < k.grid.size()) {
        const int64_t n = k.grid[d].evaluate(env);
        for (int64_t p = 0; p < n && err.empty(); ++p) {
          env[ir::grid_var(d)] = p;
          grid(d + 1);
        }
        return;
      }
      for (const ir::KStage& s : k.stages) check_stage(s);
    };
    grid(0);
    if (!err.empty()) return err;
  }
  return "";
}

}  // namespace kiln::test
