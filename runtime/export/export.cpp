// kiln/runtime/export/export.cpp — export_program and load_program (export.h).
//
// A package's sections (docs/export.md):
//   manifest       what the package is: its format, the kiln that wrote it, the backend, the
//                  inputs, weights and outputs, the dynamic dims, and one line per x86-64
//                  level ("level x86-64-v4 <feature words>"), widest first; one line per
//                  weight (name, dtype, sizes) and where the weights come from
//   guards         the guard set (guards::GuardSet::serialize)
//   weights        the captured tensors by name (safetensors), when there are any and the
//                  package holds them (not ExportOptions::external_weights)
//   and per level L (base/cpu_level.h):
//   plan.L         the execution plan, kernels included (ExecPlan::str, read by ir::parse_plan),
//                  scheduled for L's vector registers
//   params.L       where each plan parameter comes from: an input's size or stride, or the draws
//   code.L         the kernels' object code for L, as compile_kernels bundles it
#include "runtime/export/export.h"

#include "base/error.h"
#include "base/cpu_level.h"
#include "base/host_cpu.h"
#include "base/object_store.h"
#include "codegen_cuda/driver.h"
#include "codegen_cpu/kernel_codegen.h"
#include "frontend/ops_factory.h"
#include "guards/guard_set.h"
#include "io/safetensors.h"
#include "ir/exec_plan.h"
#include "runtime/backend.h"
#include "runtime/cache/compile_cache.h"
#include "runtime/compile/compile_export.h"
#include "runtime/cuda/cuda_package.h"
#include "runtime/cuda/cuda_attention.h"
#include "runtime/cuda/cuda_sort.h"
#include "runtime/export/cuda_code.h"
#include "runtime/export/package.h"
#include "runtime/pipeline.h"
#include "runtime/program.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <optional>
#include <set>
#include <sstream>

namespace kiln {

namespace {

constexpr std::string_view kProgramFormat = "kiln-program 4";
constexpr std::string_view kLoad = "load_program";

// Passes lookups to the process's store (or none) and keeps the bundle a compilation saved or
// a lookup found: the object code of the exported kernels, whatever cache served it.
class CapturingStore final : public ObjectStore {
 public:
  explicit CapturingStore(ObjectStore* inner) : inner_(inner) {}
  std::optional<std::string> load(const std::string& key, CodeSource& from) override {
    std::optional<std::string> got = inner_ ? inner_->load(key, from) : std::nullopt;
    if (got) bundle = *got;
    return got;
  }
  void save(const std::string& key, std::string_view object) override {
    bundle = std::string(object);
    if (inner_) inner_->save(key, object);
  }
  void discard(const std::string& key, const std::string& why) override {
    bundle.reset();
    if (inner_) inner_->discard(key, why);
  }
  std::optional<std::string> bundle;

 private:
  ObjectStore* inner_;
};

const std::string kTensorKind = "tensor";

// A scalar argument's kind and value as the manifest writes them ("int64 4", "double 0.5", "bool true").
std::string scalar_kind(const ExportArg& a) {
  if (std::holds_alternative<int64_t>(a)) return "int64";
  if (std::holds_alternative<double>(a)) return "double";
  return "bool";
}
std::string scalar_text(const ExportArg& a) {
  if (const int64_t* v = std::get_if<int64_t>(&a)) return std::to_string(*v);
  if (const double* d = std::get_if<double>(&a)) return fmt::format("{}", *d);
  return std::get<bool>(a) ? "true" : "false";
}

std::string params_text(const ir::ExecPlan& plan, const std::vector<rt::ParamSource>& params) {
  std::string s;
  for (size_t i = 0; i < plan.params.size(); ++i) {
    const rt::ParamSource& p = params.at(i);
    if (p.random != rt::ParamSource::Random::None)
      s += fmt::format("{} random {}\n", plan.params[i], p.random == rt::ParamSource::Random::Seed ? "seed" : "base");
    else
      s += fmt::format("{} input {} {} {}\n", plan.params[i], p.input, p.stride ? "stride" : "size", p.dim);
  }
  return s;
}

// The levels asked for, known and distinct, widest first (the order load_program tries them).
std::vector<CpuLevel> export_levels(const std::vector<std::string>& names) {
  const std::vector<std::string> asked = names.empty() ? std::vector<std::string>{"x86-64-v4", "x86-64-v3"} : names;
  std::vector<CpuLevel> out;
  for (const std::string& name : asked) {
    std::optional<CpuLevel> l = find_cpu_level(name);
    if (!l)
      fail("export_program", "ExportOptions::cpu_levels names '{}'; the levels are {}", name,
           fmt::join(cpu_level_names(), ", "));
    for (const CpuLevel& o : out)
      if (o.name == l->name) fail("export_program", "ExportOptions::cpu_levels names '{}' twice", name);
    out.push_back(*l);
  }
  std::stable_sort(out.begin(), out.end(), [](const CpuLevel& a, const CpuLevel& b) {
    return a.vector_bits != b.vector_bits ? a.vector_bits > b.vector_bits : a.llvm_cpu.empty() > b.llvm_cpu.empty();
  });
  return out;
}

// The name of each captured tensor: the first of ExportOptions::weight_names that is the same
// tensor (or a view of the same memory, sizes and strides), else w<i>.
std::vector<std::string> weight_names(const std::vector<Tensor>& lifted, const ExportOptions& opts) {
  constexpr std::string_view op = "export_program";
  std::set<std::string> given;
  for (const auto& [name, t] : opts.weight_names) {
    if (name.empty() || std::any_of(name.begin(), name.end(), [](char c) { return std::isspace(static_cast<unsigned char>(c)); }))
      fail(op, "ExportOptions::weight_names has '{}': a weight's name is non-empty and has no spaces", name);
    if (!given.insert(name).second) fail(op, "ExportOptions::weight_names names '{}' twice", name);
    if (!t.defined()) fail(op, "ExportOptions::weight_names gives '{}' an undefined tensor", name);
  }
  auto same = [](const Tensor& a, const Tensor& b) {
    return a.impl() == b.impl() || (a.device() == b.device() && a.dtype() == b.dtype() && a.data_ptr() == b.data_ptr() &&
                                    a.sizes().vec() == b.sizes().vec() && a.strides().vec() == b.strides().vec());
  };
  std::vector<std::string> names;
  std::set<std::string> used;
  for (size_t i = 0; i < lifted.size(); ++i) {
    std::string name;
    for (const auto& [n, t] : opts.weight_names)
      if (same(t, lifted[i])) {
        name = n;
        break;
      }
    // Weights the caller passes by name must all have names the caller knows: with names given,
    // a captured tensor left out (a buffer, a constant) would fail only where the program is
    // loaded.
    if (name.empty() && opts.external_weights && !opts.weight_names.empty())
      fail(op, "fn captures a {}[{}] tensor (weight {}) that ExportOptions::weight_names does not name; with "
           "external_weights the caller passes every weight by name: name it too", dtype_short_name(lifted[i].dtype()),
           fmt::join(lifted[i].sizes().vec(), ", "), i);
    if (name.empty()) name = fmt::format("w{}", i);
    if (!used.insert(name).second)
      fail(op, "two captured tensors are named '{}' (ExportOptions::weight_names, or a default name w<i> given to "
           "another): name each weight once", name);
    names.push_back(std::move(name));
  }
  return names;
}

}  // namespace

void export_program(const ExportFn& fn, const std::vector<Tensor>& example_inputs, const ExportOptions& opts) {
  const ExportArgsFn tensors_only = [&fn](const std::vector<ExportArg>& a) {
    std::vector<Tensor> ts;
    ts.reserve(a.size());
    for (const ExportArg& v : a) ts.push_back(std::get<Tensor>(v));
    return fn(ts);
  };
  export_program(tensors_only, std::vector<ExportArg>(example_inputs.begin(), example_inputs.end()), opts);
}

void export_program(const ExportArgsFn& fn, const std::vector<ExportArg>& example_inputs, const ExportOptions& opts) {
  constexpr std::string_view op = "export_program";
  if (opts.path.empty()) fail(op, "ExportOptions::path is empty: name the package file to write");
  for (size_t i = 0; i < example_inputs.size(); ++i) {
    const Tensor* t = std::get_if<Tensor>(&example_inputs[i]);
    if (!t) continue;
    if (!t->defined()) fail(op, "example input {} is undefined", i);
    if (!t->device().is_cpu())
      fail(op, "example input {} is on {}; export traces host tensors (move the inputs with .cpu(); a package for the "
           "GPU is ExportOptions::backend \"cuda\")", i, t->device().str());
  }
  std::vector<std::pair<size_t, int64_t>> dims;
  for (const ExportDynamicDim& d : opts.dynamic) {
    if (d.input >= example_inputs.size())
      fail(op, "a dynamic dim names input {}, but there are {} example inputs", d.input, example_inputs.size());
    const Tensor* t = std::get_if<Tensor>(&example_inputs[d.input]);
    if (!t)
      fail(op, "a dynamic dim names input {}, which is a scalar ({}): only a tensor's dims can be dynamic", d.input,
           scalar_text(example_inputs[d.input]));
    if (d.dim < 0 || d.dim >= t->dim()) fail(op, "a dynamic dim names dim {} of input {}, which has {} dims", d.dim, d.input, t->dim());
    if (d.min < 2 || d.max < d.min)
      fail(op, "input {} dim {}: the range [{}, {}] is empty or starts below 2 (sizes 0 and 1 are always specialized)",
           d.input, d.dim, d.min, d.max);
    const int64_t size = t->size(d.dim);
    if (size < d.min || size > d.max)
      fail(op, "input {} dim {}: the example's size {} is outside its declared range [{}, {}]", d.input, d.dim, size, d.min, d.max);
    dims.emplace_back(d.input, d.dim);
  }
  const bool cuda = opts.backend == "cuda";
  if (!cuda && opts.backend != "cpu")
    fail(op, "ExportOptions::backend is '{}'; packages hold code for \"cpu\" or \"cuda\"", opts.backend);
  if (cuda && !opts.cpu_levels.empty())
    fail(op, "ExportOptions::cpu_levels names x86-64 levels, but the package is for the cuda backend");
  const std::vector<CpuLevel> levels = cuda ? std::vector<CpuLevel>{} : export_levels(opts.cpu_levels);
  CompileOptions co;
  co.name = opts.name;
  co.arg_names = opts.input_names;
  const std::vector<detail::ArgValue>& args = example_inputs;
  const detail::TraceFn trace = fn;

  // One plan per level (its kernels scheduled for the level's vector registers; the L1 size
  // stays the scheduler's default, which every x86-64 host has), and its object code: from
  // the process's caches where they have it, else compiled now.
  rt::Package p;
  std::string level_lines;
  std::optional<detail::CompiledForExport> first;
  for (const CpuLevel& level : levels) {
    passes::ScheduleTarget target;
    target.vector_bits = level.vector_bits;
    detail::CompiledForExport c = detail::compile_for_export(trace, args, co, dims, target);
    CapturingStore store(rt::compile_cache());
    cpu::CodegenOptions cg;
    cg.store = &store;
    cg.reuse_linked = false;
    cg.level = level;
    (void)cpu::compile_kernels(c.plan.kernels(), cg);
    if (!c.plan.kernels().empty() && !store.bundle) internal_fail("export_program: no object code was captured");
    if (first && (c.guards.serialize() != first->guards.serialize() || c.lifted.size() != first->lifted.size() ||
                  c.plan.outputs.size() != first->plan.outputs.size()))
      internal_fail("export_program: '{}' traced differently for {} than for {}", opts.name, level.name, levels[0].name);
    p.add("plan." + level.name, c.plan.str());
    p.add("params." + level.name, params_text(c.plan, c.params));
    p.add("code." + level.name, store.bundle.value_or(""));
    level_lines += fmt::format("level {} {}\n", level.name, level.feature_words);
    if (!first) first = std::move(c);
  }
  // A cuda package: the cuda backend's plan (no device needed), its kernels compiled by NVRTC
  // for each architecture (cuda_code.h), its guards expecting the inputs on the device.
  if (cuda) {
    detail::CompiledForExport c = detail::compile_for_export(trace, args, co, dims, passes::ScheduleTarget{}, "cuda");
    c.guards = c.guards.on_device(Device(kCUDA, 0));
    p.add("plan.cuda", c.plan.str());
    p.add("params.cuda", params_text(c.plan, c.params));
    for (auto& [name, bytes] : rt::cuda_code_sections(c.plan)) p.add(name, std::move(bytes));
    level_lines = "cuda-targets sm_80 sm_90 compute_90\n";
    first = std::move(c);
  }

  std::string manifest = std::string(kProgramFormat) + "\n";
  manifest += fmt::format("kiln {}\n", KILN_VERSION_STRING);
  manifest += fmt::format("name {}\n", opts.name);
  manifest += fmt::format("backend {}\n", opts.backend);
  manifest += level_lines;
  manifest += fmt::format("inputs {}\n", example_inputs.size());
  for (size_t i = 0; i < example_inputs.size(); ++i)
    if (!std::holds_alternative<Tensor>(example_inputs[i]))
      manifest += fmt::format("scalar {} {} {}\n", i, scalar_kind(example_inputs[i]), scalar_text(example_inputs[i]));
  manifest += fmt::format("weights {}\n", first->lifted.size());
  const std::vector<std::string> names = weight_names(first->lifted, opts);
  if (!first->lifted.empty()) manifest += fmt::format("weight-source {}\n", opts.external_weights ? "caller" : "package");
  for (size_t i = 0; i < names.size(); ++i)
    manifest += fmt::format("weight {} {}{}{}\n", names[i], dtype_short_name(first->lifted[i].dtype()),
                            first->lifted[i].dim() > 0 ? " " : "", fmt::join(first->lifted[i].sizes().vec(), " "));
  manifest += fmt::format("outputs {}\n", first->plan.outputs.size());
  for (const ExportDynamicDim& d : opts.dynamic) manifest += fmt::format("dynamic {} {} {} {}\n", d.input, d.dim, d.min, d.max);
  p.sections.insert(p.sections.begin(), {"manifest", std::move(manifest)});
  p.add("guards", first->guards.serialize());
  if (!first->lifted.empty() && !opts.external_weights) {
    std::map<std::string, Tensor> w;
    for (size_t i = 0; i < first->lifted.size(); ++i) w.emplace(names[i], first->lifted[i].cpu());
    p.add("weights", safetensors_bytes(w));
  }
  rt::write_package(p, opts.path, op);
}

// ---- loading ----------------------------------------------------------------------------

struct LoadedProgram::State {
  std::string path, name, manifest, level, target;  // level: the sections' suffix; target: the code's
  Device device;
  guards::GuardSet guards;
  std::vector<ExportDynamicDim> dynamic;
  std::vector<Tensor> weights;
  size_t inputs = 0;   // arguments, scalars included
  size_t tensors = 0;  // of which tensors: the program's first inputs, then the weights
  std::vector<std::string> kinds;  // per argument: "tensor", "int64", "double" or "bool"
  std::shared_ptr<const cpu::LinkedCode> code;  // declared before the program: outlives it
  std::unique_ptr<rt::Program> program;
};

namespace {

// The manifest's lines as (key, rest); the first line names the format.
std::multimap<std::string, std::string> read_manifest(const std::string& text, const std::string& path) {
  std::istringstream in(text);
  std::string line;
  if (!std::getline(in, line) || line != kProgramFormat)
    fail(kLoad, "{}: the manifest starts '{}', not '{}': a program of another format", path, line.substr(0, 40), kProgramFormat);
  std::multimap<std::string, std::string> out;
  while (std::getline(in, line)) {
    const size_t sp = line.find(' ');
    out.emplace(line.substr(0, sp), sp == std::string::npos ? "" : line.substr(sp + 1));
  }
  return out;
}

const std::string& one(const std::multimap<std::string, std::string>& m, const std::string& key, const std::string& path) {
  auto it = m.find(key);
  if (it == m.end()) fail(kLoad, "{}: the manifest has no '{}' line", path, key);
  return it->second;
}

int64_t number(const std::string& s, const std::string& what, const std::string& path) {
  try {
    size_t used = 0;
    const int64_t v = std::stoll(s, &used);
    if (used == s.size() && v >= 0) return v;
  } catch (const std::exception&) {
  }
  fail(kLoad, "{}: {} is '{}', not a count", path, what, s);
}

std::vector<rt::ParamSource> read_params(std::string_view text, const std::string& section, const ir::ExecPlan& plan,
                                         size_t inputs, const std::string& path) {
  std::istringstream in{std::string(text)};
  std::string line;
  std::vector<rt::ParamSource> out;
  while (std::getline(in, line)) {
    std::istringstream ls(line);
    std::string name, kind, what;
    ls >> name >> kind;
    if (out.size() >= plan.params.size() || name != plan.params[out.size()])
      fail(kLoad, "{}: section '{}' line '{}' does not match the plan's parameters", path, section, line);
    rt::ParamSource p;
    if (kind == "random" && (ls >> what) && (what == "seed" || what == "base")) {
      p.random = what == "seed" ? rt::ParamSource::Random::Seed : rt::ParamSource::Random::Base;
    } else if (kind == "input" && (ls >> p.input >> what >> p.dim) && (what == "size" || what == "stride") &&
               p.input >= 0 && static_cast<size_t>(p.input) < inputs && p.dim >= 0) {
      p.stride = what == "stride";
    } else {
      fail(kLoad, "{}: section '{}' has a malformed line '{}'", path, section, line);
    }
    out.push_back(p);
  }
  if (out.size() != plan.params.size())
    fail(kLoad, "{}: section '{}' gives {} of the plan's {} parameters", path, section, out.size(), plan.params.size());
  return out;
}

// A weight as the manifest describes it ("weight NAME DTYPE SIZE...").
struct WeightLine {
  std::string name;
  ScalarType dtype = ScalarType::Float;
  std::vector<int64_t> sizes;
  std::string str() const { return fmt::format("{}[{}]", dtype_short_name(dtype), fmt::join(sizes, ", ")); }
};

std::vector<WeightLine> weight_lines(const std::multimap<std::string, std::string>& m, size_t weights,
                                     const std::string& path) {
  std::vector<WeightLine> out;
  for (auto [it, end] = m.equal_range("weight"); it != end; ++it) {  // in the manifest's order
    std::istringstream ls(it->second);
    WeightLine w;
    std::string dtype;
    ls >> w.name >> dtype;
    const std::optional<ScalarType> t = dtype_from_short_name(dtype);
    if (w.name.empty() || !t) fail(kLoad, "{}: a malformed weight line '{}'", path, it->second);
    w.dtype = *t;
    for (int64_t d = 0; ls >> d;) w.sizes.push_back(d);
    if (!ls.eof()) fail(kLoad, "{}: a malformed weight line '{}'", path, it->second);
    out.push_back(std::move(w));
  }
  if (out.size() != weights) fail(kLoad, "{}: the manifest describes {} of its {} weights", path, out.size(), weights);
  return out;
}

// Weight t on the program's device, in the layout its plan reads input `index` with. A captured
// view (a transposed weight) was traced with its own strides, and safetensors stores every tensor
// contiguous, so a weight the plan reads in another layout is copied into that layout. A dim the
// plan reads with stride 0 was a broadcast (expand) when traced: its first slice is copied and
// expanded again; a caller's weight must be such a broadcast itself there.
// A caller's weight used in place is held through a handle of its own (detach): set_data on the
// caller's (nn::Module::to) then gives the caller's tensor other memory, dtype or device, and
// leaves the program's as it was loaded.
Tensor in_plan_layout(const Tensor& t, const ir::ExecPlan& plan, size_t index, Device device, const std::string& name,
                      bool external, const std::string& path) {
  Tensor x = t.device() == device ? t.detach() : t.to(device);
  for (const ir::PlanBuffer& b : plan.buffers) {
    if (b.role != ir::BufferRole::Input || b.input_index != static_cast<int>(index)) continue;
    std::vector<int64_t> want;
    for (const ir::Expr& e : b.strides) {
      const std::optional<int64_t> c = e.maybe_const();
      if (!c) fail(kLoad, "{}: the plan reads weight '{}' with symbolic strides", path, name);
      want.push_back(*c);
    }
    if (want.size() != static_cast<size_t>(x.dim()) || b.type.sizes.size() != want.size())
      fail(kLoad, "{}: the plan reads weight '{}' as a tensor of {} dims; the manifest gives it {}", path, name,
           want.size(), x.dim());
    bool same = true;
    for (int64_t d = 0; same && d < x.dim(); ++d) same = x.size(d) <= 1 || want[d] == x.stride(d);
    if (same) return x;
    Tensor src = x;
    for (int64_t d = 0; d < x.dim(); ++d) {
      if (want[d] != 0 || x.size(d) <= 1) continue;
      if (external && x.stride(d) != 0)
        fail(kLoad, "{}: weight '{}' was exported as a broadcast along dim {} (an expanded tensor); pass one that is, "
             "as the program reads only the first slice of that dim", path, name, d);
      src = src.narrow(d, 0, 1);
    }
    Tensor y = empty_strided(src.sizes(), want, TensorOptions(x.dtype()).device(device));
    y.copy_(src);
    return y.expand(x.sizes());
  }
  return x;
}

// The level whose code this process runs: `wanted` when named, else the first (widest) of the
// manifest's levels whose features this cpu has.
std::string pick_level(const std::multimap<std::string, std::string>& m, const std::string& wanted,
                       const std::string& path) {
  std::vector<std::string> names, lacks;
  for (auto [it, end] = m.equal_range("level"); it != end; ++it) {
    const size_t sp = it->second.find(' ');
    if (sp == std::string::npos) fail(kLoad, "{}: a malformed level line '{}'", path, it->second);
    const std::string name = it->second.substr(0, sp), missing = missing_host_features(it->second.substr(sp + 1));
    names.push_back(name);
    if (!wanted.empty() && name != wanted) continue;
    if (missing.empty()) return name;
    lacks.push_back(fmt::format("{} needs {}", name, missing));
  }
  if (names.empty()) fail(kLoad, "{}: the manifest names no cpu level", path);
  if (!wanted.empty() && lacks.empty())
    fail(kLoad, "{}: LoadOptions::cpu_level is '{}'; the package holds code for {}", path, wanted, fmt::join(names, ", "));
  fail(kLoad, "{}: this cpu cannot run the package's code: {}", path, fmt::join(lacks, "; "));
}

}  // namespace

LoadedProgram load_program(const std::string& path, const LoadOptions& opts) {
  // The weights' checksums are checked on the pool's threads while this thread parses and links
  // the rest (package.h verify_rest): an 8 MB MLP's load took 0.26 ms of checksums (two threads)
  // and then 0.35 ms of parsing and linking.
  rt::PackageView pkg = rt::read_package(path, kLoad, {"weights"});
  auto s = std::make_shared<LoadedProgram::State>();
  ir::ExecPlan plan;
  std::vector<rt::ParamSource> params;
  std::vector<WeightLine> lines;
  size_t weights = 0;
  bool cuda = false, external = false;
  std::vector<ir::KernelFn> fns;
  std::vector<ExternKernelFn> steps;
  auto section = [&](const char* name, auto&& read) {
    try {
      return read(pkg.at(name, kLoad, path));
    } catch (const Error& e) {
      fail(kLoad, "{}: section '{}': {}", path, name, e.what());
    }
  };
  pkg.verify_rest([&] {
    s->path = path;
    s->manifest = std::string(pkg.at("manifest", kLoad, path));
    const std::multimap<std::string, std::string> m = read_manifest(s->manifest, path);
    if (const std::string& v = one(m, "kiln", path); v != KILN_VERSION_STRING)
      fail(kLoad, "{}: exported by kiln {}; this is kiln {}, which loads the packages of its own version", path, v,
           KILN_VERSION_STRING);
    const std::string& backend = one(m, "backend", path);
    if (backend != "cpu" && backend != "cuda")
      fail(kLoad, "{}: a program for the {} backend; this kiln loads cpu and cuda programs", path, backend);
    cuda = backend == "cuda";
    Device device;  // the host
    if (cuda) {
      std::string why;
      if (!cuda::driver_available(&why)) fail(kLoad, "{}: a cuda program, and CUDA is not available here: {}", path, why);
      if (opts.cuda_device < 0 || opts.cuda_device >= cuda::driver_device_count())
        fail(kLoad, "{}: LoadOptions::cuda_device is {}; this host has {} cuda devices", path, opts.cuda_device,
             cuda::driver_device_count());
      device = Device(kCUDA, static_cast<int16_t>(opts.cuda_device));
    }
    s->device = device;
    s->level = cuda ? "cuda" : pick_level(m, opts.cpu_level, path);  // the sections' suffix
    s->target = s->level;
    s->name = one(m, "name", path);
    s->inputs = static_cast<size_t>(number(one(m, "inputs", path), "the input count", path));
    weights = static_cast<size_t>(number(one(m, "weights", path), "the weight count", path));
    s->kinds.assign(s->inputs, kTensorKind);
    for (auto [it, end] = m.equal_range("scalar"); it != end; ++it) {
      std::istringstream ls(it->second);
      size_t arg = 0;
      std::string kind, value;
      if (!(ls >> arg >> kind >> value) || arg >= s->inputs || s->kinds[arg] != kTensorKind ||
          (kind != "int64" && kind != "double" && kind != "bool"))
        fail(kLoad, "{}: a malformed scalar line '{}'", path, it->second);
      s->kinds[arg] = kind;
    }
    s->tensors = static_cast<size_t>(std::count(s->kinds.begin(), s->kinds.end(), kTensorKind));
    for (auto [it, end] = m.equal_range("dynamic"); it != end; ++it) {
      std::istringstream ls(it->second);
      ExportDynamicDim d;
      if (!(ls >> d.input >> d.dim >> d.min >> d.max) || d.input >= s->inputs || s->kinds[d.input] != kTensorKind)
        fail(kLoad, "{}: a malformed dynamic dim '{}'", path, it->second);
      s->dynamic.push_back(d);
    }

    const std::string plan_section = "plan." + s->level, params_section = "params." + s->level;
    plan = section(plan_section.c_str(), [](std::string_view t) { return ir::parse_plan(t); });
    s->guards = section("guards", [](std::string_view t) { return guards::GuardSet::deserialize(t); });
    if (cuda) s->guards = s->guards.on_device(device);
    if (s->guards.names().size() != s->inputs)
      fail(kLoad, "{}: the guards check {} inputs, the manifest says {}", path, s->guards.names().size(), s->inputs);
    params = read_params(pkg.at(params_section, kLoad, path), params_section, plan, s->tensors + weights, path);
    for (const ir::PlanBuffer& b : plan.buffers)
      if (b.role == ir::BufferRole::Input && (b.input_index < 0 || static_cast<size_t>(b.input_index) >= s->tensors + weights))
        fail(kLoad, "{}: the plan reads input {} of {}", path, b.input_index, s->tensors + weights);
    lines = weight_lines(m, weights, path);
    external = weights > 0 && one(m, "weight-source", path) == "caller";
    if (weights > 0 && !external && one(m, "weight-source", path) != "package")
      fail(kLoad, "{}: a malformed weight-source line '{}'", path, one(m, "weight-source", path));
    if (!external && !opts.weights.empty())
      fail(kLoad, "{}: the package holds its weights; LoadOptions::weights is for a package exported with "
           "ExportOptions::external_weights", path);
    if (!cuda) {  // the host code, linked, and the extern steps
      if (!plan.kernels().empty()) {
        std::string why;
        const std::string code_section = "code." + s->level;
        std::optional<cpu::CodegenResult> code = cpu::link_kernels(plan.kernels(), pkg.at(code_section, kLoad, path), &why);
        if (!code) fail(kLoad, "{}: section '{}' does not link: {}", path, code_section, why);
        for (const cpu::CompiledKernel& k : code->kernels) fns.push_back(k.fn);
        s->code = code->code;
      }
      steps = rt::plan_step_fns(plan, *rt::find_backend("cpu"), /*use_lowerings=*/true);
    }
  }, kLoad, path);
  // Held weights are tensors over the file's bytes (sections are 64-byte aligned): no copy.
  std::map<std::string, Tensor> held;
  if (weights > 0 && !external)
    held = section("weights", [&](std::string_view t) { return view_safetensors_bytes(t, path + " (weights)", pkg.owner); });
  for (size_t i = 0; i < weights; ++i) {
    const WeightLine& w = lines[i];
    const std::map<std::string, Tensor>& from = external ? opts.weights : held;
    auto it = from.find(w.name);
    if (it == from.end() && external)
      fail(kLoad, "{}: the program's weights come from the caller (it was exported with external_weights), and "
           "LoadOptions::weights has no '{}' ({})", path, w.name, w.str());
    if (it == from.end()) fail(kLoad, "{}: section 'weights' lacks '{}'", path, w.name);
    const Tensor& t = it->second;
    if (!t.defined() || t.dtype() != w.dtype || t.sizes().vec() != w.sizes)
      fail(kLoad, "{}: weight '{}' is {}; the program was exported for {}", path, w.name,
           t.defined() ? fmt::format("{}[{}]", dtype_short_name(t.dtype()), fmt::join(t.sizes().vec(), ", ")) : "undefined",
           w.str());
    s->weights.push_back(in_plan_layout(t, plan, s->tensors + i, s->device, w.name, external, path));
  }
  if (cuda) {  // the images for this device's architecture (cuda_code.h), loaded by the driver
    const int index = s->device.index;
    const std::vector<std::string> images =
        rt::cuda_images_for(cuda::compute_capability(index), plan.kernels().size(), pkg, path, &s->target);
    if (const std::vector<std::string> sorts = rt::cuda_sort_images_for(s->target, pkg, path); !sorts.empty())
      rt::use_sort_images(index, sorts);
    if (const auto attention = rt::cuda_attention_images_for(s->target, pkg, path); !attention.empty())
      rt::use_attention_images(index, attention);
    s->program = rt::cuda_package_program(std::move(plan), s->device, images, std::move(params));
    return LoadedProgram(std::move(s));
  }
  s->program = std::make_unique<rt::Program>(std::move(plan), std::move(fns), std::move(params), std::move(steps));
  return LoadedProgram(std::move(s));
}

std::vector<Tensor> LoadedProgram::operator()(const std::vector<Tensor>& inputs) const {
  return call(std::vector<ExportArg>(inputs.begin(), inputs.end()));
}

std::vector<Tensor> LoadedProgram::call(const std::vector<ExportArg>& inputs) const {
  const State& s = *s_;
  if (inputs.size() != s.inputs)
    fail(s.name, "the program takes {} arguments, got {} (it takes {}; {})", s.inputs, inputs.size(),
         fmt::join(s.kinds, ", "), s.path);
  std::vector<guards::GuardArg> args;
  args.reserve(inputs.size());
  std::vector<Tensor> tensors;
  tensors.reserve(s.tensors + s.weights.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (const Tensor* t = std::get_if<Tensor>(&inputs[i])) {
      if (!t->defined()) fail(s.name, "input {} is undefined", i);
      args.emplace_back(t->impl());
      tensors.push_back(*t);
    } else if (const int64_t* v = std::get_if<int64_t>(&inputs[i])) {
      args.emplace_back(*v);
    } else if (const double* d = std::get_if<double>(&inputs[i])) {
      args.emplace_back(*d);
    } else {
      args.emplace_back(std::get<bool>(inputs[i]));
    }
  }
  if (!s.guards.check(args)) {
    const std::optional<guards::GuardFailure> f = s.guards.first_failure(args);
    fail(s.name, "the inputs do not match the exported program ({}): {}", s.path, f ? f->str() : "a guard failed");
  }
  for (const ExportDynamicDim& d : s.dynamic) {
    const int64_t size = std::get<Tensor>(inputs[d.input]).size(d.dim);
    if (size < d.min || size > d.max)
      fail(s.name, "{}.size({}) is {}, outside the range [{}, {}] the program was exported for ({})",
           s.guards.names().at(d.input), d.dim, size, d.min, d.max, s.path);
  }
  tensors.insert(tensors.end(), s.weights.begin(), s.weights.end());
  return s.program->run(tensors);
}

size_t LoadedProgram::num_arguments() const { return s_->inputs; }

const std::string& LoadedProgram::argument_kind(size_t i) const {
  if (i >= s_->kinds.size())
    fail(s_->name, "argument_kind({}): the program takes {} arguments", i, s_->kinds.size());
  return s_->kinds[i];
}

std::string LoadedProgram::describe() const {
  return s_->manifest + "running: " + s_->target + "\nguards:\n" + s_->guards.str();
}

const std::string& LoadedProgram::path() const { return s_->path; }

const std::string& LoadedProgram::target() const { return s_->target; }

Device LoadedProgram::device() const { return s_->device; }

}  // namespace kiln
