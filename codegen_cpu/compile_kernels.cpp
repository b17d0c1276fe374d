// kiln/codegen_cpu/compile_kernels.cpp — a plan's kernels to callable code (kernel_codegen.h):
// from this process's linked modules, from the persistent caches, or compiled by the LLVM half
// (codegen_cpu/module_compiler.h), opened only when nothing cached serves. No LLVM here.
#include "codegen_cpu/kernel_codegen.h"

#include "base/error.h"
#include "base/timing.h"
#include "codegen_cpu/module_cache.h"
#include "codegen_cpu/module_compiler.h"
#include "codegen_cpu/object_bundle.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <optional>
#include <unordered_map>

namespace kiln::cpu {

namespace {

// A plan's kernels as one module: kernels are named by position, so the module (and so its key)
// does not depend on which compilation built it; each module links into a mapping of its own.
// Identical kernels (a training step's bias gradients are often the same column sum) are
// compiled once: the module defines one function per distinct kernel, named by its first
// position. Each kernel is printed once: its text keys the module and tells identical kernels.
struct KernelSet {
  std::vector<std::string> texts;
  std::vector<size_t> code_of, distinct, text_size;
  std::vector<std::string> names, labels;

  KernelSet(const std::vector<const ir::Kernel*>& kernels, const std::string& perf_label) {
    for (const ir::Kernel* k : kernels) texts.push_back(anonymous_text(*k));
    code_of.resize(kernels.size());
    std::unordered_map<std::string_view, size_t> first;
    for (size_t i = 0; i < kernels.size(); ++i) {
      auto [it, fresh] = first.emplace(texts[i], i);
      code_of[i] = it->second;
      if (!fresh) continue;
      distinct.push_back(i);
      text_size.push_back(texts[i].size());
    }
    for (size_t i : distinct) names.push_back(fmt::format("kiln_k{}", i));
    if (!perf_label.empty())
      for (size_t i : distinct) {
        labels.push_back(perf_label + kernels[i]->name);
        for (size_t j = i + 1; j < kernels.size(); ++j)
          if (code_of[j] == i) labels.back() += "," + kernels[j]->name;
      }
  }
  const std::vector<std::string>* perf_labels() const { return labels.empty() ? nullptr : &labels; }

  // The result for linked code (the distinct kernels' addresses, in `names` order).
  void finish(CodegenResult& res, std::shared_ptr<const LinkedCode> code, CodeSource source) const {
    std::vector<void*> addr(code_of.size(), nullptr);
    for (size_t j = 0; j < distinct.size(); ++j) addr[distinct[j]] = code->addrs().at(j);
    for (size_t i = 0; i < code_of.size(); ++i)
      res.kernels.push_back({reinterpret_cast<KernelFn>(addr[code_of[i]]), fmt::format("kiln_k{}", code_of[i])});
    res.source = source;
    res.code = std::move(code);
  }
};

}  // namespace

std::optional<CodegenResult> link_kernels(const std::vector<const ir::Kernel*>& kernels, std::string_view bundle,
                                          std::string* why) {
  CodegenResult res;
  if (kernels.empty()) return res;
  const KernelSet set(kernels, "");
  const std::optional<std::vector<std::string_view>> objects = unpack_objects(bundle);
  if (!objects) {
    *why = "not a kiln object bundle";
    return std::nullopt;
  }
  std::shared_ptr<const LinkedCode> code = link_objects(*objects, set.names, why, nullptr);
  if (!code) return std::nullopt;
  set.finish(res, std::move(code), CodeSource::Disk);
  return res;
}

CodegenResult compile_kernels(const std::vector<const ir::Kernel*>& kernels, const CodegenOptions& opts) {
  CodegenResult res;
  if (kernels.empty()) return res;
  const auto t0 = std::chrono::steady_clock::now();
  const KernelSet set(kernels, opts.perf_label);
  res.key = module_key_of_texts(set.texts, opts.level);
  const std::vector<size_t>& distinct = set.distinct;
  const std::vector<std::string>& names = set.names;
  const std::vector<std::string>* perf_labels = set.perf_labels();
  auto finish = [&](std::shared_ptr<const LinkedCode> code, CodeSource source) {
    set.finish(res, std::move(code), source);
    return res;
  };

  // Inspection (explain) compiles afresh and leaves the caches alone.
  const bool inspect = opts.want_ir || opts.want_asm;
  if (!inspect) {
    if (std::shared_ptr<const LinkedCode> code = opts.reuse_linked ? linked_module(res.key) : nullptr) {
      res.lookup_ms = ms_since(t0);
      return finish(std::move(code), CodeSource::Memory);
    }
    CodeSource from = CodeSource::Disk;
    std::optional<std::string> entry = opts.store ? opts.store->load(res.key, from) : std::nullopt;
    res.lookup_ms = ms_since(t0);
    if (entry) {
      const auto t1 = std::chrono::steady_clock::now();
      std::string why = "not a kiln object bundle";
      std::shared_ptr<const LinkedCode> code;
      if (std::optional<std::vector<std::string_view>> objects = unpack_objects(*entry))
        code = link_objects(*objects, names, &why, perf_labels);
      res.codegen_ms = ms_since(t1);
      if (code) {
        remember_linked_module(res.key, code);
        return finish(std::move(code), from);
      }
      opts.store->discard(res.key, why);
    }
  }

  if (inspect) res.lookup_ms = ms_since(t0);
  // The distinct kernels in `parts` modules of about equal text (the largest kernel first
  // into the lightest part), compiled at once; each part's kernels keep their module names.
  const size_t parts = opts.parallel ? std::clamp<size_t>(distinct.size() / 2, 1, std::max<size_t>(opts.threads, 1)) : 1;
  std::vector<std::vector<size_t>> part(parts);  // positions in `distinct`
  {
    std::vector<size_t> order(distinct.size()), load(parts, 0);
    for (size_t j = 0; j < order.size(); ++j) order[j] = j;
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return set.text_size[a] > set.text_size[b]; });
    for (size_t j : order) {
      const size_t p = static_cast<size_t>(std::min_element(load.begin(), load.end()) - load.begin());
      part[p].push_back(j);
      load[p] += set.text_size[j];
    }
    for (std::vector<size_t>& p : part) std::sort(p.begin(), p.end());
  }
  const ModuleCompiler& compiler = module_compiler();  // LLVM: only now, past every cache
  std::vector<CompiledModule> mods(parts);
  auto compile_part = [&](size_t p) {
    std::vector<const ir::Kernel*> ks;
    std::vector<std::string> ns;
    for (size_t j : part[p]) {
      ks.push_back(kernels[distinct[j]]);
      ns.push_back(names[j]);
    }
    mods[p] = compiler.compile(ks, ns, opts.want_ir, opts.want_asm, &opts.diagnostics, opts.level);
  };
  if (parts > 1) opts.parallel(parts, compile_part);
  else compile_part(0);
  std::vector<std::string> objects;
  for (CompiledModule& m : mods) objects.push_back(std::move(m.object));

  const auto t_link = std::chrono::steady_clock::now();
  std::string why;
  std::shared_ptr<const LinkedCode> code =
      link_objects(std::vector<std::string_view>(objects.begin(), objects.end()), names, &why, perf_labels);
  if (!code) internal_fail("jit: linking generated kernels: {}", why);
  double emit_ms = 0;
  for (size_t p = 0; p < parts; ++p) {
    res.build_ms = std::max(res.build_ms, mods[p].build_ms);
    res.optimize_ms = std::max(res.optimize_ms, mods[p].optimize_ms);
    emit_ms = std::max(emit_ms, mods[p].emit_ms);
    const std::string header = parts > 1 ? fmt::format("; ---- module part {} of {} ----\n", p + 1, parts) : "";
    if (opts.want_ir) res.llvm_ir += header + mods[p].llvm_ir;
    if (opts.want_asm) res.assembly += header + mods[p].assembly;
  }
  res.codegen_ms = emit_ms + ms_since(t_link);
  if (!inspect) {
    remember_linked_module(res.key, code);
    if (opts.store) opts.store->save(res.key, pack_objects(objects));
  }
  return finish(std::move(code), CodeSource::Compiled);
}

std::string kernel_llvm_ir(const ir::Kernel& k) { return module_compiler().kernel_llvm_ir(k); }

}  // namespace kiln::cpu
