// kiln/tools/kiln_main.cpp — the `kiln` command-line tool.
//
//   kiln demo          trace a built-in program, print its IR, run it on the interpreter
//   kiln ops           list every registered op with its family, level and schema
//   kiln check FILE    parse a .kir graph, verify it and print it back
//   kiln check REPRO   replay a repro on its two backends and say whether they still differ
//   kiln run FILE.kir [INPUTS] [--backend cpu|interpreter]   run a graph, print its outputs
//   kiln minimize REPRO [OUT]   shrink a repro (docs/repro.md)
//   kiln opt FILE.kir [--backend B] [--level core|prim] [--passes a,b] [--emit-code]
//                      every compile stage of a graph (runtime/debug/opt.h)
//   kiln dot FILE.kir  the graph as Graphviz text
#include "kiln/kiln.h"
#include "ir/graph_dot.h"
#include "ir/shape_env.h"
#include "ir/text.h"
#include "runtime/interpreter/interpreter.h"
#include "runtime/debug/opt.h"
#include "runtime/debug/minimize.h"
#include "runtime/debug/repro.h"
#include "runtime/debug/run_graph.h"
#include "tools/run_package.h"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

namespace {

using namespace kiln;

int usage() {
  std::cerr << "usage: kiln <command>\n"
               "  demo          trace a built-in program, print its IR and the interpreter's results\n"
               "  ops           list the registered ops (family, level, schema)\n"
               "  check FILE    parse a .kir graph, verify it and print it back\n"
               "  check REPRO [INPUTS]\n"
               "                replay a repro (a directory with graph.kir, inputs.txt, repro.txt; or a\n"
               "                .kir file and an inputs file) on its two backends; exit 1 if they differ\n"
               "  run PACKAGE [INPUT.npy or SCALAR ...] [-o PREFIX] [--cpu-level LEVEL] [--weights FILE] [--stats]\n"
               "                run an exported program (kiln::export_program) on .npy inputs; print\n"
               "                its outputs' types, write them as PREFIX0.npy, ...; --cpu-level: run\n"
               "                that x86-64 level's code (default: the widest this cpu runs); --weights:\n"
               "                the weights of a package exported without them (.safetensors, by name);\n"
               "                --stats:\n"
               "                the code's target (x86-64 level or cuda architecture), load and\n"
               "                first-call times, and whether LLVM was loaded\n"
               "  run FILE.kir|REPRO [INPUTS] [--backend cpu|interpreter]\n"
               "                run a graph (inputs: INPUTS, else inputs.txt beside it, else small\n"
               "                default values) and print its outputs; default backend cpu\n"
               "  minimize REPRO [OUT]\n"
               "                shrink a repro whose backends differ; writes OUT (default REPRO_min)\n"
               "  opt FILE.kir [--backend B] [--level core|prim] [--passes a,b,...] [--emit-code]\n"
               "                run the compile driver and print the graph after every stage, then\n"
               "                the plan and its kernels (and with --emit-code the generated code)\n"
               "  dot FILE.kir  print the graph as Graphviz text (dot -Tsvg)\n";
  return 2;
}

// The built-in program: a scaled soft-sign feeding a numerically stable softmax over the
// last dim, plus a row-wise argmax — pointwise chains, broadcasting, a scalar, reductions.
std::vector<Tensor> program(const Tensor& x, const Tensor& scale) {
  Tensor y = x / (abs(x) + 1) * scale;
  Tensor shifted = y - amax(y, {-1}, /*keepdim=*/true);
  Tensor e = exp(shifted);
  Tensor probs = e / sum(e, {-1}, /*keepdim=*/true);
  return {probs, argmax(probs, -1)};
}

int demo() {
  manual_seed(0);
  Tensor x = arange(12, kFloat).reshape({3, 4}) / 4 - 1.5;
  Tensor scale = tensor({1.0f, 2.0f, 0.5f, -1.0f});

  std::cout << "== kiln demo: trace a program, print its IR, run it on the reference interpreter ==\n\n";
  std::cout << "x =\n" << x << "\n\nscale =\n" << scale << "\n\n";

  TracedProgram traced = trace([](const std::vector<Tensor>& in) { return program(in[0], in[1]); }, {x, scale});
  std::cout << "-- traced graph (" << traced.graph->num_nodes() << " prims) --\n" << traced.graph->str() << "\n";

  std::vector<Tensor> inputs = {x, scale};
  inputs.insert(inputs.end(), traced.lifted.begin(), traced.lifted.end());
  std::vector<Tensor> results = rt::interpret(*traced.graph, inputs);
  std::cout << "-- results from the interpreter --\nprobs =\n"
            << results[0] << "\n\nargmax =\n"
            << results[1] << "\n\n";

  std::vector<Tensor> eager = program(x, scale);
  bool same = allclose(results[0], eager[0]) && equal(results[1], eager[1]);
  std::cout << "eager execution of the same program agrees: " << (same ? "yes" : "NO") << "\n\n";

  // The same program through kiln::compile: fused into kernels, compiled by LLVM.
  std::cout << "== kiln::compile: the program fused into kernels and compiled to native code ==\n\n";
  CompileOptions opts;
  opts.name = "demo";
  auto f = compile(
      [](const Tensor& a, const Tensor& s) {
        std::vector<Tensor> r = program(a, s);
        return std::make_tuple(r[0], r[1]);
      },
      opts);
  auto [probs, am] = f(x, scale);
  const std::string ex = f.explain(x, scale);
  auto section = [&](const std::string& from, const std::string& to) {
    const size_t a = ex.find(from), b = ex.find(to, a == std::string::npos ? 0 : a);
    return a == std::string::npos ? std::string() : ex.substr(a, b == std::string::npos ? std::string::npos : b - a);
  };
  std::cout << section("--- guards", "--- traced") << "\n" << section("--- plan", "--- LLVM IR");
  // The optimized LLVM IR of the first kernel, up to its vectorized loop body.
  std::string ir = section("--- LLVM IR", "--- assembly");
  size_t def = ir.find("define void");
  size_t stop = ir.find("vector.body", def);
  if (stop != std::string::npos) stop = ir.find("\n\n", stop);
  std::cout << "--- LLVM IR (optimized, first kernel, excerpt) ---\n"
            << ir.substr(def, stop == std::string::npos ? 1500 : stop - def) << "\n  ...\n\n"
            << section("--- timings", "\n\n\n") << "\n";
  const CompileStats st = f.stats();
  const bool same_compiled = allclose(probs, eager[0], 1e-5, 1e-6) && equal(am, eager[1]);
  std::cout << fmt::format("compiled: {} kernels, {} trace, {} compile; results agree with eager: {}\n", st.kernels,
                           st.traces, st.compiles, same_compiled ? "yes" : "NO");

  // Changing batch sizes: static first, then one symbolic entry serves every later size.
  std::cout << "\n== dynamic shapes: the same function called with 3, 5, 9, 17 and 64 rows ==\n\n";
  opts.arg_names = {"x", "scale"};
  auto g = compile(
      [](const Tensor& a, const Tensor& s) {
        std::vector<Tensor> r = program(a, s);
        return std::make_tuple(r[0], r[1]);
      },
      opts);
  bool same_dynamic = true;
  for (int64_t rows : {3, 5, 9, 17, 64}) {
    Tensor xr = arange(rows * 4, kFloat).reshape({rows, 4}) / 8 - 2;
    auto [p, m] = g(xr, scale);
    std::vector<Tensor> want = program(xr, scale);
    same_dynamic = same_dynamic && allclose(p, want[0], 1e-5, 1e-6) && equal(m, want[1]);
  }
  const CompileStats gs = g.stats();
  const std::string gex = g.explain(arange(40, kFloat).reshape({10, 4}), scale);
  const size_t sym_at = gex.find("--- symbols"), graph_at = gex.find("--- traced");
  std::cout << gex.substr(sym_at, graph_at - sym_at);
  std::cout << fmt::format("{} calls, {} compiles (the first static, then x.size(0) symbolic), {} cache hits; "
                           "results agree with eager: {}\n",
                           gs.cache_hits + gs.cache_misses, gs.compiles, gs.cache_hits, same_dynamic ? "yes" : "NO");
  return same && same_compiled && same_dynamic && gs.compiles == 2 ? 0 : 1;
}

int list_ops() {
  for (int k = 0; k < ir::kNumOps; ++k) {
    const ir::OpInfo& info = ir::op_info(static_cast<ir::OpKind>(k));
    std::cout << fmt::format("{:<22} {:<12} {:<9} {}\n", info.name, ir::family_name(info.family),
                             ir::level_name(info.level), info.schema_text);
  }
  std::cout << ir::kNumOps << " ops\n";
  return 0;
}

// A repro from a directory, or a .kir file with an inputs file (or inputs.txt beside it).
rt::Repro load(const std::string& path, const std::string& inputs) {
  return rt::read_repro(path, inputs);
}

int replay(const std::string& path, const std::string& inputs) {
  rt::Repro r = load(path, inputs);
  std::cout << fmt::format("graph: {} nodes, {} inputs, {} outputs\n", r.graph->num_nodes(), r.graph->inputs().size(),
                           r.graph->outputs().size());
  if (!r.differs.empty()) std::cout << "recorded: " << r.differs << "\n";
  const rt::RunResult a = rt::run_graph(*r.graph, r.inputs, r.backend_a);
  const rt::RunResult b = rt::run_graph(*r.graph, r.inputs, r.backend_b);
  const std::string diff = rt::compare_runs(a, b);
  if (diff.empty()) {
    std::cout << fmt::format("{} and {} agree{}\n", r.backend_a, r.backend_b,
                             a.ok() ? "" : fmt::format(" (both fail: {})", a.message));
    return 0;
  }
  std::cout << fmt::format("{} and {} differ: {}\n", r.backend_a, r.backend_b, diff);
  return 1;
}

int run(const std::string& path, const std::string& inputs, const std::string& backend) {
  rt::Repro r = load(path, inputs);
  const rt::RunResult res = rt::run_graph(*r.graph, r.inputs, backend);
  if (!res.ok()) {
    std::cout << fmt::format("{} failed ({}): {}\n", backend,
                             res.status == rt::RunResult::Status::UserError ? "user error" : "internal error",
                             res.message);
    return 1;
  }
  for (size_t k = 0; k < res.outputs.size(); ++k) {
    const Tensor& t = res.outputs[k];
    std::cout << fmt::format("output {} : {}{} =\n", k, dtype_short_name(t.dtype()), shape_str(t.sizes())) << t
              << "\n";
  }
  return 0;
}

int minimize_repro(const std::string& path, std::string out) {
  rt::Repro r = rt::read_repro(path);
  if (out.empty()) {
    std::string base = path;
    while (base.size() > 1 && base.back() == '/') base.pop_back();
    out = base + "_min";
  }
  rt::FailurePredicate pred =
      rt::backends_differ(*r.graph, r.inputs, rt::backend_runner(r.backend_a), rt::backend_runner(r.backend_b));
  rt::MinimizeResult m = rt::minimize(*r.graph, r.inputs, pred);
  rt::Repro small = r;
  small.graph = m.graph;
  small.inputs = m.inputs;
  const std::string diff = rt::compare_runs(rt::run_graph(*m.graph, m.inputs, r.backend_a),
                                            rt::run_graph(*m.graph, m.inputs, r.backend_b));
  if (!diff.empty()) small.differs = diff;
  rt::write_repro(out, small);
  std::cout << fmt::format("minimized {} -> {} nodes ({} attempts, {} kept{}); wrote {}\n", m.nodes_before,
                           m.nodes_after, m.attempts, m.accepted, m.out_of_budget ? ", budget reached" : "", out);
  std::cout << ir::print_graph(*m.graph);
  return 0;
}

// The whole file, or a kiln::Error naming the command (a FIFO, a device or a huge file is
// refused before anything is read).
std::string read_text(const char* path, std::string_view cmd) { return rt::read_text_file(path, cmd); }

int check(const char* path) {
  ir::ShapeEnv env;
  std::unique_ptr<ir::Graph> g = ir::parse_graph(read_text(path, "check"), &env);
  std::cout << ir::print_graph(*g, &env);
  return 0;
}

int opt(int argc, char** argv) {
  rt::OptOptions o;
  for (int i = 3; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&](const char* flag) -> std::string {
      const std::string f = flag;
      if (a == f && i + 1 < argc) return argv[++i];
      if (a.rfind(f + "=", 0) == 0) return a.substr(f.size() + 1);
      return "";
    };
    if (std::string v = value("--backend"); !v.empty()) {
      o.backend = v;
    } else if (std::string v = value("--level"); !v.empty()) {
      o.level = rt::parse_level(v);
    } else if (std::string v = value("--passes"); !v.empty()) {
      for (size_t at = 0; at <= v.size();) {
        const size_t comma = std::min(v.find(',', at), v.size());
        if (comma > at) o.passes.push_back(v.substr(at, comma - at));
        at = comma + 1;
      }
    } else if (a == "--emit-code") {
      o.emit_code = true;
    } else {
      return usage();
    }
  }
  std::cout << rt::opt_report(read_text(argv[2], "opt"), o);
  return 0;
}

int dot(const char* path) {
  std::unique_ptr<ir::Graph> g = ir::parse_graph(read_text(path, "dot"));
  std::cout << ir::graph_dot(*g, std::filesystem::path(path).filename().string());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return usage();
  std::string cmd = argv[1];
  try {
    if (cmd == "demo") return demo();
    if (cmd == "ops") return list_ops();
    if (cmd == "check" && argc == 3 && std::filesystem::is_directory(argv[2])) return replay(argv[2], "");
    if (cmd == "check" && argc == 4) return replay(argv[2], argv[3]);
    if (cmd == "check" && argc == 3) return check(argv[2]);
    if (cmd == "opt" && argc >= 3) return opt(argc, argv);
    if (cmd == "dot" && argc == 3) return dot(argv[2]);
    if (cmd == "minimize" && (argc == 3 || argc == 4)) return minimize_repro(argv[2], argc == 4 ? argv[3] : "");
    if (cmd == "run" && argc >= 3 && tools::is_package(argv[2])) return tools::run_package(argc, argv);
    if (cmd == "run" && argc >= 3) {
      std::string backend = "cpu", inputs;
      for (int i = 3; i < argc; ++i) {
        std::string a = argv[i];
        if (a == "--backend" && i + 1 < argc) backend = argv[++i];
        else if (a.rfind("--backend=", 0) == 0) backend = a.substr(10);
        else if (inputs.empty() && a.rfind("--", 0) != 0) inputs = a;
        else return usage();
      }
      return run(argv[2], inputs, backend);
    }
  } catch (const kiln::Error& e) {
    std::cerr << "kiln: " << e.what() << "\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "kiln: " << e.what() << "\n";
    return 1;
  }
  return usage();
}
