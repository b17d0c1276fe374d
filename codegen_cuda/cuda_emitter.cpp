// kiln/codegen_cuda/cuda_emitter.cpp — prints an ir::Kernel as a CUDA C kernel (structure and loops).
//
// The emitter walks the kernel once: the signature (typed pointers, the params array, the
// grid size), the grid-stride loop over grid points (threads or blocks, by the launch schedule), and
// per stage its flattened loop nest, its scalar instructions (named v<id>, rendered by
// cuda_scalar.cpp) and, for a reduce stage, the per-thread accumulator and the block
// reduction. It decides nothing about the schedule: the launch kind is the kernel's
// KSchedule::launch (passes/schedule_launch.cpp). The IR text of the kernel is kept above it as a comment.
#include "codegen_cuda/cuda_emitter.h"

#include "codegen_cuda/cuda_scalar.h"
#include "base/error.h"
#include "ir/exec_plan.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <functional>
#include <limits>
#include <optional>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace kiln::cuda {

using namespace detail;

namespace {

// Names the kernel, its arguments and parameters become in C: identifiers that cannot clash
// with the emitter's own (kiln_*, v<id>, p<i>, r<i>, params, grid0).
void check_name(const ir::Kernel& k, const std::string& name, const char* what) {
  bool ok = !name.empty() && (std::isalpha(static_cast<unsigned char>(name[0])) || name[0] == '_');
  for (char c : name) ok = ok && (std::isalnum(static_cast<unsigned char>(c)) || c == '_');
  const bool digits_after_first =
      name.size() > 1 && name.find_first_not_of("0123456789", 1) == std::string::npos;
  if (!ok || name.rfind("kiln_", 0) == 0 || name == "params" || name == "grid0" ||
      (digits_after_first && (name[0] == 'v' || name[0] == 'p' || name[0] == 'r')))
    internal_fail("cuda: kernel {}: {} name '{}' cannot be a C identifier of the generated code", k.name, what, name);
}

// The reduction functor of the prelude, per ReductionOp.
const char* functor(ir::ReductionOp op) {
  switch (op) {
    case ir::ReductionOp::sum: return "KilnSum";
    case ir::ReductionOp::prod: return "KilnProd";
    case ir::ReductionOp::amax: return "KilnMax";
    case ir::ReductionOp::amin: return "KilnMin";
    case ir::ReductionOp::any: return "KilnAny";
    case ir::ReductionOp::all: return "KilnAll";
    case ir::ReductionOp::argmax: return "KilnArgMax";
    case ir::ReductionOp::argmin: return "KilnArgMin";
  }
  internal_fail("cuda: unknown reduction op {}", static_cast<int>(op));
}

bool is_arg_reduction(ir::ReductionOp op) {
  return op == ir::ReductionOp::argmax || op == ir::ReductionOp::argmin;
}

// The identity of a (non-arg) reduction in its accumulator's compute type.
std::string identity(ir::ReductionOp op, ScalarType acc) {
  switch (op) {
    case ir::ReductionOp::sum: return literal(Scalar(0), acc);
    case ir::ReductionOp::prod: return literal(Scalar(1), acc);
    case ir::ReductionOp::amax: return lowest_literal(acc);
    case ir::ReductionOp::amin: return highest_literal(acc);
    case ir::ReductionOp::any: return "false";
    case ir::ReductionOp::all: return "true";
    case ir::ReductionOp::argmax:
    case ir::ReductionOp::argmin: break;
  }
  internal_fail("cuda: {} has no scalar identity", ir::reduction_name(op));
}

ir::LaunchKind launch_of(const ir::Kernel& k) {
  if (k.schedule.launch.kind == ir::LaunchKind::None)
    internal_fail("cuda: kernel {} has no launch schedule (passes::schedule_launch runs before emitting)", k.name);
  return k.schedule.launch.kind;
}

struct Emitter {
  explicit Emitter(const ir::Kernel& kernel) : k(kernel) {}
  const ir::Kernel& k;
  bool block = launch_of(k) == ir::LaunchKind::BlockPerPoint;
  // A column sum whose rows are split among row_split threads per column (KLaunch::row_split):
  // a block is `cols` columns by row_split row groups.
  int64_t split = k.schedule.launch.row_split;
  int64_t cols = split > 1 ? k.schedule.launch.threads / split : 0;
  // A row kernel in unrolled items (KLaunch::row_items), the loads it keeps in registers, and
  // where the emitter is: the stage being printed, inside its items loop or not.
  int64_t items = block ? k.schedule.launch.row_items : 0;
  std::vector<ir::RowCachedLoad> cached =
      items > 0 && k.schedule.launch.row_cache ? ir::row_cached_loads(k) : std::vector<ir::RowCachedLoad>{};
  size_t cur_stage = 0;
  bool in_items = false;
  std::string out;
  int depth = 0;
  std::map<int, ScalarType> dtype_of;  // every SSA value emitted so far
  std::set<int> stored_args;           // args some earlier stage stores to
  int check_site = 0;                  // Check instructions so far (their fault site numbers)
  std::set<int> may_fail;              // InBounds checks with a kiln_ok<id> flag (a bound that may be 0)

  // "kiln_ok3 && kiln_ok7" for the checked positions of `index` whose checks may fail with no
  // position to fall back on, or "".
  std::string checked_positions_hold(const ir::Expr& index) const {
    if (may_fail.empty()) return "";
    std::vector<std::string> syms;
    index.collect_symbols(syms);
    std::string ok;
    for (const std::string& s : syms)
      if (const std::optional<int> id = ir::value_symbol_id(s); id && may_fail.count(*id))
        ok += fmt::format("{}kiln_ok{}", ok.empty() ? "" : " && ", *id);
    return ok;
  }

  void line(const std::string& s) {
    out.append(static_cast<size_t>(depth) * 2, ' ');
    out += s;
    out += '\n';
  }
  void open(const std::string& head) {
    line(head.empty() ? "{" : head + " {");
    ++depth;
  }
  void close() {
    --depth;
    line("}");
  }
  // A load's or store's index: in 32-bit arithmetic where every value it takes fits
  // (KLaunch::index32, decided by schedule_launch), else in 64 bits.
  std::string address(const ir::Expr& index) const {
    return k.schedule.launch.index32 ? render_expr32(index) : render_expr(index);
  }
  static std::string v(int id) { return fmt::format("v{}", id); }
  static std::string carry(int id) { return fmt::format("kiln_c{}", id); }
  ScalarType type_of(int id) const {
    auto it = dtype_of.find(id);
    if (it == dtype_of.end()) internal_fail("cuda: kernel {}: %{} has no dtype", k.name, id);
    return it->second;
  }

  // `const kiln_i64 <var(i)> = ...` for every dimension of the flat index `flat` over `extents`
  // (named by `extent`), row-major: the last dimension varies fastest.
  // The grid or stage variables of flat index `flat`, which is below `total` (a name; its value
  // `static_total` when known here). Every extent divides `total`, so when `total` fits 32 bits
  // the remainders and quotients are taken in 32 bits: a 64-bit division by a value known only
  // at run time is a long software sequence on the GPU, a 32-bit one a few instructions. A
  // kernel of symbolic sizes carries both and branches on `total` (uniform across threads).
  void delinearize(const std::string& flat, size_t n, std::string (*var)(size_t),
                   const std::function<std::string(size_t)>& extent, const std::string& total,
                   std::optional<int64_t> static_total) {
    if (n == 0) return;
    if (n == 1) return line(fmt::format("const kiln_i64 {} = {};", var(0), flat));
    const std::string rest = flat + "_rest";
    constexpr int64_t kU32Max = 0xFFFFFFFFLL;
    // One chain of remainders and quotients; `narrow`: in unsigned 32 bits; `declare`: the
    // variables are declared here (const), else assigned (declared before a branch).
    const auto chain = [&](bool narrow, bool declare) {
      const std::string decl = declare ? "const kiln_i64 " : "";
      if (narrow) line(fmt::format("unsigned {} = (unsigned){};", rest, flat));
      else line(fmt::format("kiln_i64 {} = {};", rest, flat));
      for (size_t d = n - 1; d > 0; --d) {
        const std::string e = narrow ? fmt::format("(unsigned){}", extent(d)) : extent(d);
        line(fmt::format("{}{} = {} % {};", decl, var(d), rest, e));
        line(fmt::format("{} /= {};", rest, e));
      }
      line(fmt::format("{}{} = {};", decl, var(0), rest));
    };
    if (static_total) return chain(*static_total <= kU32Max, /*declare=*/true);
    std::string names;
    for (size_t d = 0; d < n; ++d) names += (d ? ", " : "") + var(d);
    line(fmt::format("kiln_i64 {};", names));
    open(fmt::format("if ({} <= {}LL)", total, kU32Max));
    chain(/*narrow=*/true, /*declare=*/false);
    close();
    open("else");
    chain(/*narrow=*/false, /*declare=*/false);
    close();
  }

  // The product of `extents` when every one is a constant.
  static std::optional<int64_t> static_product(const std::vector<ir::Expr>& extents) {
    int64_t p = 1;
    for (const ir::Expr& e : extents) {
      const std::optional<int64_t> c = e.maybe_const();
      if (!c) return std::nullopt;
      if (*c != 0 && p > std::numeric_limits<int64_t>::max() / *c) return std::numeric_limits<int64_t>::max();
      p *= *c;
    }
    return p;
  }

  void inst(const ir::KInst& in) {
    switch (in.kind) {
      case ir::KOp::Load: {
        const ir::KernelArg& arg = k.args.at(static_cast<size_t>(in.arg));
        const int slot = in_items ? ir::row_cached_slot(cached, k.stages[cur_stage], in) : -1;
        const ir::RowCachedLoad* c = slot >= 0 ? &cached[static_cast<size_t>(slot)] : nullptr;
        if (c && (c->stored || c->first != cur_stage)) {  // read by an earlier stage, or stored
          line(fmt::format("const {} {} = kiln_row{}[kiln_i];", compute_type(in.dtype), v(in.id), slot));
          break;
        }
        const std::string elem = fmt::format("{}[{}]", arg.name, address(in.index));
        const std::string value = convert(load_value(elem, arg.dtype), arg.dtype, in.dtype);
        const std::string ok = checked_positions_hold(in.index);
        line(fmt::format("const {} {} = {};", compute_type(in.dtype), v(in.id),
                         ok.empty() ? value : fmt::format("{} ? {} : ({})0", ok, value, compute_type(in.dtype))));
        if (slot >= 0) line(fmt::format("kiln_row{}[kiln_i] = {};", slot, v(in.id)));
        break;
      }
      case ir::KOp::Store: {
        const ir::KernelArg& arg = k.args.at(static_cast<size_t>(in.arg));
        const int value = in.operands.at(0);
        const int slot = in_items ? ir::row_cached_slot(cached, k.stages[cur_stage], in) : -1;
        if (slot >= 0) {  // a stored row: the registers hold it, rounded as memory would; memory gets the last stage's stores
          line(fmt::format("kiln_row{}[kiln_i] = {};", slot, convert(v(value), ir::compute_dtype(arg.dtype), arg.dtype)));
          stored_args.insert(in.arg);
          if (cached[static_cast<size_t>(slot)].last_store != cur_stage) return;
        }
        const std::string ok = checked_positions_hold(in.index);
        line(fmt::format("{}{}[{}] = {};", ok.empty() ? "" : "if (" + ok + ") ", arg.name, address(in.index),
                         store_value(convert(v(value), type_of(value), arg.dtype), arg.dtype)));
        stored_args.insert(in.arg);
        return;
      }
      case ir::KOp::Const:
        line(fmt::format("const {} {} = {};", compute_type(in.dtype), v(in.id), literal(in.value, in.dtype)));
        break;
      case ir::KOp::Index:
        line(fmt::format("const {} {} = {};", compute_type(in.dtype), v(in.id),
                         convert(render_expr(in.index), ScalarType::Int64, in.dtype)));
        break;
      case ir::KOp::Check: {
        const int site = ++check_site;
        const ScalarType dt = type_of(in.operands.at(0));
        line(in.check == ir::CheckKind::NonZero
                 ? fmt::format("const {} {} = kiln_check_nonzero({}, kiln_fault, kiln_fault_kernel, {});",
                               compute_type(dt), v(in.id), v(in.operands.at(0)), site)
                 : fmt::format("const {} {} = kiln_check_bounds({}, {}, kiln_fault, kiln_fault_kernel, {});",
                               compute_type(dt), v(in.id), v(in.operands.at(0)), render_expr(in.index), site));
        // A bound that may be 0 leaves no position to fall back on: the accesses at this
        // position are skipped where the check fails (checked_positions_hold).
        if (const std::optional<int64_t> bound = in.index.maybe_const();
            in.check == ir::CheckKind::InBounds && !(bound && *bound >= 1)) {
          line(fmt::format("const bool kiln_ok{} = (kiln_i64){} >= 0 && (kiln_i64){} < {};", in.id, v(in.operands.at(0)),
                           v(in.operands.at(0)), render_expr(in.index)));
          may_fail.insert(in.id);
        }
        break;
      }
      case ir::KOp::Random:
        line(fmt::format("const {} {} = {};", compute_type(in.dtype), v(in.id),
                         random_value(in, v(in.operands[0]), v(in.operands[1]), v(in.operands[2]))));
        break;
      case ir::KOp::Carry:  // declared before the stage's loop (stage())
        line(fmt::format("const {} {} = {};", compute_type(in.dtype), v(in.id), carry(in.id)));
        break;
      case ir::KOp::Update: line(fmt::format("{} = {};", carry(in.operands.at(0)), v(in.operands.at(1)))); return;
      case ir::KOp::Compute: {
        std::vector<std::string> names;
        for (int op : in.operands) names.push_back(v(op));
        // where's condition is bool; the value operands carry the dtype.
        const bool is_where = in.op == ir::OpKind::where;
        const ScalarType dt = type_of(in.operands.at(is_where ? 1 : 0));
        line(fmt::format("const {} {} = {};", compute_type(in.dtype), v(in.id), render_compute(in, names, dt)));
        break;
      }
    }
    dtype_of[in.id] = in.dtype;
  }

  // A Random instruction's value in compute type (the prelude's kiln_uniform_* / kiln_normal_value).
  static std::string random_value(const ir::KInst& in, const std::string& index, const std::string& seed,
                                  const std::string& offset) {
    const double a = in.attrs.get<double>(0), b = in.attrs.get<double>(1);
    const auto d = [](double x) { return literal(Scalar(x), ScalarType::Double); };
    if (in.op == ir::OpKind::uniform) {
      const char* fn = in.dtype == ScalarType::Double  ? "kiln_uniform_f64"
                       : in.dtype == ScalarType::Half  ? "kiln_uniform_f16"
                       : in.dtype == ScalarType::BFloat16 ? "kiln_uniform_bf16"
                                                          : "kiln_uniform_f32";
      return fmt::format("{}({}, {}, {}, {}, {}, {})", fn, index, seed, offset, d(a), d(b - a), d(b));
    }
    const std::string n = fmt::format("kiln_normal_value({}, {}, {}, {}, {})", index, seed, offset, d(a), d(b));
    if (in.dtype == ScalarType::Double) return n;
    return convert(fmt::format("__double2float_rn({})", n), ScalarType::Float, in.dtype);
  }

  std::string nest_comment(const ir::KStage& st) const {
    std::string s = "[";
    for (size_t i = 0; i < st.extents.size(); ++i)
      s += fmt::format("{}{} < {}", i ? ", " : "", ir::stage_var(i), st.extents[i].str());
    return s + "]";
  }

  // Whether a load of `st` reads memory that an earlier stage stored (not a stored row, which
  // it reads from registers).
  bool loads_stored_arg(const ir::KStage& st) const {
    for (const ir::KInst& in : st.body) {
      if (in.kind != ir::KOp::Load || !stored_args.count(in.arg)) continue;
      const int slot = items > 0 && !st.extents.empty() ? ir::row_cached_slot(cached, st, in) : -1;
      if (slot < 0 || !cached[static_cast<size_t>(slot)].stored) return true;
    }
    return false;
  }

  ScalarType yield_dtype(const ir::KStage& st) const {
    const ir::KInst* y = ir::body_inst(st, st.yield);
    return y ? y->dtype : type_of(st.yield);
  }

  void stage(const ir::KStage& st, size_t s) {
    const bool reduce = st.kind == ir::StageKind::Reduce;
    if (block && loads_stored_arg(st)) line("__syncthreads();  // this stage reads what an earlier stage stored");
    // An amax that also folds the sum of exponentials (online softmax) keeps a (max, sum) pair.
    const bool sum_exp = reduce && st.sum_exp >= 0;
    if (sum_exp)
      line(fmt::format("// %{} = reduce amax {} : {} sum_exp %{} : {}", st.result, nest_comment(st),
                       dtype_short_name(st.acc_dtype), st.sum_exp, dtype_short_name(st.sum_exp_dtype)));
    else if (reduce)
      line(fmt::format("// %{} = reduce {} {} : {}", st.result, ir::reduction_name(st.reduce_op), nest_comment(st),
                       dtype_short_name(st.acc_dtype)));
    else
      line(fmt::format("// loop {}{}", st.ordered ? "ordered " : "", nest_comment(st)));

    // The accumulator: the acc dtype's compute type, or a (value, index) pair for arg ops.
    const bool arg_op = reduce && is_arg_reduction(st.reduce_op);
    std::string acc_type, ident;
    const std::string acc = fmt::format("kiln_acc{}", st.result);
    if (reduce) {
      const ScalarType ydt = yield_dtype(st);
      acc_type = arg_op ? fmt::format("KilnArg<{}>", compute_type(ydt)) : compute_type(st.acc_dtype);
      ident = arg_op ? fmt::format("{}{{{}, -1}}", acc_type, literal(Scalar(0), ydt)) : identity(st.reduce_op, st.acc_dtype);
      if (sum_exp) {
        acc_type = fmt::format("KilnMaxExp<{}, {}>", compute_type(st.acc_dtype), compute_type(st.sum_exp_dtype));
        ident = fmt::format("{}{{{}, {}}}", acc_type, ident, literal(Scalar(0), st.sum_exp_dtype));
      }
      line(fmt::format("{} {} = {};", acc_type, acc, ident));
    }

    // Carried values (an ordered stage's, so one thread runs its loop): a variable each.
    for (const ir::KInst& in : st.body)
      if (in.kind == ir::KOp::Carry)
        line(fmt::format("{} {} = {};", compute_type(in.dtype), carry(in.id), literal(in.value, in.dtype)));

    const std::string pre = fmt::format("kiln_s{}_", s);
    if (!st.extents.empty()) {
      std::string n;
      for (size_t d = 0; d < st.extents.size(); ++d) {
        line(fmt::format("const kiln_i64 {}e{} = {};", pre, d, render_expr(st.extents[d])));
        n += fmt::format("{}{}e{}", d ? " * " : "", pre, d);
      }
      line(fmt::format("const kiln_i64 {}n = {};", pre, n));
      const bool rows = split > 1 && reduce;
      const std::string start = block ? "(kiln_i64)threadIdx.x" : rows ? "kiln_g" : "0";
      const std::string step = block ? "(kiln_i64)blockDim.x" : rows ? fmt::format("{}", split) : "1";
      if (items > 0) {  // thread t takes t, t + threads, ...: constant trip count, loads issued together
        line("#pragma unroll");
        open(fmt::format("for (int kiln_i = 0; kiln_i < {}; ++kiln_i)", items));
        line(fmt::format("const kiln_i64 kiln_t = (kiln_i64)threadIdx.x + (kiln_i64)kiln_i * {};",
                         k.schedule.launch.threads));
        open(fmt::format("if (kiln_t < {}n)", pre));
        in_items = true;
      } else {
        open(fmt::format("for (kiln_i64 kiln_t = {0}; kiln_t < {1}n; kiln_t += {2})", start, pre, step));
      }
      delinearize("kiln_t", st.extents.size(), ir::stage_var, [&](size_t d) { return fmt::format("{}e{}", pre, d); },
                  pre + "n", static_product(st.extents));
    } else if (block && !reduce) {
      open("if (threadIdx.x == 0)");  // one point: one thread of the block does it
    } else if (split > 1 && !reduce) {
      open("if (kiln_g == 0 && kiln_valid)");  // the column's first row group stores it
    } else {
      open("");  // one point, evaluated by every thread that needs it
      if (arg_op) line("const kiln_i64 kiln_t = 0;");
    }
    std::map<int, ScalarType> outer = dtype_of;
    cur_stage = s;
    for (const ir::KInst& in : st.body) inst(in);
    if (reduce) {
      const ScalarType ydt = type_of(st.yield);
      const std::string x = arg_op ? fmt::format("{}{{{}, kiln_t}}", acc_type, v(st.yield))
                                   : convert(v(st.yield), ydt, ir::compute_dtype(st.acc_dtype));
      if (sum_exp) line(fmt::format("{0} = kiln_max_exp_add({0}, {1});", acc, x));
      else line(fmt::format("{0} = {1}()({0}, {2});", acc, functor(st.reduce_op), x));
    }
    if (in_items) close();  // the bound check of the items loop
    in_items = false;
    close();
    dtype_of = std::move(outer);  // values of a stage do not escape it

    if (reduce && split > 1 && !st.extents.empty()) {
      if (arg_op || sum_exp)
        internal_fail("cuda: kernel {}: an arg reduction or a sum_exp cannot split its rows", k.name);
      // The row groups' partials of each column, combined in a fixed order.
      const std::string part = fmt::format("kiln_part{}", st.result);
      line(fmt::format("__shared__ {} {}[{}][{}];", acc_type, part, split, cols));
      line(fmt::format("{}[kiln_g][kiln_lane] = {};", part, acc));
      line("__syncthreads();");
      line(fmt::format("{} = {}[0][kiln_lane];", acc, part));
      line(fmt::format("for (int kiln_j = 1; kiln_j < {}; ++kiln_j) {} = {}()({}, {}[kiln_j][kiln_lane]);", split, acc,
                       functor(st.reduce_op), acc, part));
      line(fmt::format("__syncthreads();  // the next tile writes {} again", part));
    }
    if (sum_exp) {
      std::string r = acc;
      if (block && !st.extents.empty()) r = fmt::format("kiln_block_reduce({}, KilnMaxExpJoin(), {})", acc, ident);
      line(fmt::format("const {} kiln_pair{} = {};", acc_type, st.result, r));
      line(fmt::format("const {} {} = kiln_pair{}.m;", compute_type(st.acc_dtype), v(st.result), st.result));
      line(fmt::format("const {} {} = kiln_max_exp_sum(kiln_pair{});", compute_type(st.sum_exp_dtype), v(st.sum_exp),
                       st.result));
      dtype_of[st.result] = st.acc_dtype;
      dtype_of[st.sum_exp] = st.sum_exp_dtype;
    } else if (reduce) {
      std::string r = acc;
      if (block && !st.extents.empty()) r = fmt::format("kiln_block_reduce({}, {}(), {})", acc, functor(st.reduce_op), ident);
      // An arg reduction's result is the i64 position (acc_dtype is the compared values' dtype).
      const ScalarType rdt = arg_op ? ScalarType::Int64 : st.acc_dtype;
      if (arg_op) r = fmt::format("(({}).i)", r);
      line(fmt::format("const {} {} = {};", compute_type(rdt), v(st.result), r));
      dtype_of[st.result] = rdt;
    }
  }

  // ---- vectorized pointwise kernels (KLaunch::vector > 1) ----
  // Each thread takes `lanes` consecutive points of the last grid dimension; every instruction
  // is printed once per lane (v<id>_<lane>), except that a contiguous load or store
  // (ir::lane_access) moves all lanes as one KilnVec.
  int64_t lanes = k.schedule.launch.vector;
  // Whether the accesses are classified on constants alone (ir::lanes_on_constants), as the
  // schedule classified them; else their run-time terms are tested before the vector path.
  bool lanes_constant = lanes > 1 && ir::lanes_on_constants(k, lanes);
  static std::string lv(int id, int64_t lane) { return fmt::format("v{}_{}", id, lane); }
  // Index `index` at lane `lane` (ir::at_lane), as a value; as the address of a load or store
  // (address()).
  std::string lane_index(const ir::Expr& index, int64_t lane) const { return render_expr(ir::at_lane(k, index, lane)); }
  std::string lane_address(const ir::Expr& index, int64_t lane) const { return address(ir::at_lane(k, index, lane)); }
  // Whether load or store `in` moves as one KilnVec; the run-time terms that requires are added
  // to `runtime` (vector_path tests them).
  bool contiguous(const ir::KInst& in, std::vector<ir::Expr>* runtime = nullptr) const {
    std::vector<ir::Expr> scratch;
    return ir::lane_access(k, in.index, lanes, lanes_constant ? nullptr : runtime ? runtime : &scratch) ==
           ir::LaneAccess::Contiguous;
  }

  void vector_inst(const ir::KInst& in) {
    const auto each = [&](const std::function<std::string(int64_t)>& f) {
      for (int64_t l = 0; l < lanes; ++l) line(f(l));
    };
    switch (in.kind) {
      case ir::KOp::Load: {
        const ir::KernelArg& arg = k.args.at(static_cast<size_t>(in.arg));
        if (contiguous(in)) {
          const std::string vec = fmt::format("KilnVec<{}, {}>", storage_type(arg.dtype), lanes);
          line(fmt::format("const {0} kiln_l{1} = *reinterpret_cast<const {0}*>(&{2}[{3}]);", vec, in.id, arg.name,
                           address(in.index)));
          each([&](int64_t l) {
            return fmt::format("const {} {} = {};", compute_type(in.dtype), lv(in.id, l),
                               convert(load_value(fmt::format("kiln_l{}.v[{}]", in.id, l), arg.dtype), arg.dtype, in.dtype));
          });
        } else {
          each([&](int64_t l) {
            const std::string elem = fmt::format("{}[{}]", arg.name, lane_address(in.index, l));
            return fmt::format("const {} {} = {};", compute_type(in.dtype), lv(in.id, l),
                               convert(load_value(elem, arg.dtype), arg.dtype, in.dtype));
          });
        }
        break;
      }
      case ir::KOp::Store: {
        const ir::KernelArg& arg = k.args.at(static_cast<size_t>(in.arg));
        const int value = in.operands.at(0);
        const auto stored = [&](int64_t l) { return store_value(convert(lv(value, l), type_of(value), arg.dtype), arg.dtype); };
        if (contiguous(in)) {
          const std::string vec = fmt::format("KilnVec<{}, {}>", storage_type(arg.dtype), lanes);
          open("");
          line(fmt::format("{} kiln_st;", vec));
          each([&](int64_t l) { return fmt::format("kiln_st.v[{}] = {};", l, stored(l)); });
          line(fmt::format("*reinterpret_cast<{}*>(&{}[{}]) = kiln_st;", vec, arg.name, address(in.index)));
          close();
        } else {
          each([&](int64_t l) { return fmt::format("{}[{}] = {};", arg.name, lane_address(in.index, l), stored(l)); });
        }
        return;
      }
      case ir::KOp::Const:
        each([&](int64_t l) {
          return fmt::format("const {} {} = {};", compute_type(in.dtype), lv(in.id, l), literal(in.value, in.dtype));
        });
        break;
      case ir::KOp::Index:
        each([&](int64_t l) {
          return fmt::format("const {} {} = {};", compute_type(in.dtype), lv(in.id, l),
                             convert(lane_index(in.index, l), ScalarType::Int64, in.dtype));
        });
        break;
      case ir::KOp::Check: internal_fail("cuda: kernel {}: a vectorized kernel has a check", k.name);
      case ir::KOp::Carry:
      case ir::KOp::Update: internal_fail("cuda: kernel {}: a vectorized kernel has a carried value", k.name);
      case ir::KOp::Random:
        each([&](int64_t l) {
          return fmt::format("const {} {} = {};", compute_type(in.dtype), lv(in.id, l),
                             random_value(in, lv(in.operands[0], l), lv(in.operands[1], l), lv(in.operands[2], l)));
        });
        break;
      case ir::KOp::Compute: {
        const bool is_where = in.op == ir::OpKind::where;
        const ScalarType dt = type_of(in.operands.at(is_where ? 1 : 0));
        each([&](int64_t l) {
          std::vector<std::string> names;
          for (int op : in.operands) names.push_back(lv(op, l));
          return fmt::format("const {} {} = {};", compute_type(in.dtype), lv(in.id, l), render_compute(in, names, dt));
        });
        break;
      }
    }
    dtype_of[in.id] = in.dtype;
  }

  // The vector path: taken when every buffer accessed contiguously is aligned for its KilnVec,
  // and a symbolic last extent and the symbolic strides and offsets of those accesses are
  // multiples of the lanes (ir::lane_access); otherwise the kernel falls through to the
  // one-point-per-thread loop below it.
  void vector_path() {
    std::set<int> vec_args;
    std::vector<std::string> multiples;  // each must be a multiple of the lanes
    for (const ir::KStage& st : k.stages)
      for (const ir::KInst& in : st.body) {
        std::vector<ir::Expr> runtime;
        if ((in.kind != ir::KOp::Load && in.kind != ir::KOp::Store) || !contiguous(in, &runtime)) continue;
        vec_args.insert(in.arg);
        for (const ir::Expr& e : runtime)
          if (const std::string r = render_expr(e); std::find(multiples.begin(), multiples.end(), r) == multiples.end())
            multiples.push_back(r);
      }
    std::string aligned;
    for (int a : vec_args) {
      const ir::KernelArg& arg = k.args.at(static_cast<size_t>(a));
      aligned += fmt::format("{}(reinterpret_cast<unsigned long long>({}) % {} == 0)", aligned.empty() ? "" : " && ",
                             arg.name, element_size(arg.dtype) * static_cast<size_t>(lanes));
    }
    // A symbolic last extent: the vector path needs a whole number of vectors a row.
    if (!k.grid.back().maybe_const())
      multiples.insert(multiples.begin(), k.grid.size() == 1 ? "grid0" : fmt::format("kiln_grid{}", k.grid.size() - 1));
    for (const std::string& m : multiples)
      aligned += fmt::format("{}({} % {} == 0)", aligned.empty() ? "" : " && ", m, lanes);
    open(fmt::format("if ({})", aligned.empty() ? "true" : aligned));
    open(fmt::format("for (kiln_i64 kiln_q = ((kiln_i64)blockIdx.x * blockDim.x + threadIdx.x) * {0}; kiln_q < grid0; "
                     "kiln_q += (kiln_i64)gridDim.x * blockDim.x * {0})", lanes));
    delinearize("kiln_q", k.grid.size(), ir::grid_var, [](size_t d) { return fmt::format("kiln_grid{}", d); }, "grid0",
                static_product(k.grid));
    for (const ir::KStage& st : k.stages) {
      line(fmt::format("// loop [] x {} lanes", lanes));
      open("");
      std::map<int, ScalarType> outer = dtype_of;
      for (const ir::KInst& in : st.body) vector_inst(in);
      dtype_of = std::move(outer);
      close();
    }
    close();
    line("return;");
    close();
  }

  void kernel() {
    check_name(k, k.name, "kernel");
    std::string sig;
    for (const ir::KernelArg& a : k.args) {
      check_name(k, a.name, "argument");
      sig += fmt::format("{}{}* {}, ", a.output ? "" : "const ", storage_type(a.dtype), a.name);
    }
    // A kernel with checks reports to the device's fault record, naming itself by the id the
    // launcher registered it under (ir/kernel_abi.h).
    if (ir::has_checks(k)) sig += "kiln_i64* kiln_fault, const kiln_i64 kiln_fault_kernel, ";
    // A kernel that draws random numbers may read its (seed, base) from the device (a CUDA graph's
    // replays move them, cuda_emitter.h).
    const bool rng = reads_rng_slot(k);
    if (rng) sig += "const kiln_i64* kiln_rng, ";
    // The parameters travel by value (cuLaunchKernel copies them), so a launch needs no upload.
    line(fmt::format("struct {}_params {{ kiln_i64 v[{}]; }};", k.name, std::max<size_t>(1, k.params.size())));
    // Blocks of up to 1024 threads: the bound keeps the compiler's register use launchable.
    line(fmt::format("extern \"C\" __global__ void {2}{0}({1}const {0}_params params, kiln_i64 grid0)", k.name, sig,
                     block ? "__launch_bounds__(1024) " : ""));
    open("");
    for (size_t i = 0; i < k.params.size(); ++i) {
      check_name(k, k.params[i], "parameter");
      const bool seed = k.params[i] == ir::kRandomSeedParam, base = k.params[i] == ir::kRandomBaseParam;
      if (rng && (seed || base))
        line(fmt::format("const kiln_i64 {0} = kiln_rng ? kiln_rng[{2}] : params.v[{1}];", k.params[i], i, seed ? 0 : 1));
      else
        line(fmt::format("const kiln_i64 {} = params.v[{}];", k.params[i], i));
    }
    for (size_t i = 1; i < k.grid.size(); ++i)  // the outermost extent is implied by grid0
      line(fmt::format("const kiln_i64 kiln_grid{} = {};", i, render_expr(k.grid[i])));
    if (lanes > 1) vector_path();
    if (split > 1) {
      line(fmt::format("const kiln_i64 kiln_lane = threadIdx.x % {0}, kiln_g = threadIdx.x / {0};", cols));
      open(fmt::format("for (kiln_i64 kiln_tile = blockIdx.x; kiln_tile * {0} < grid0; kiln_tile += gridDim.x)", cols));
      line(fmt::format("const bool kiln_valid = kiln_tile * {} + kiln_lane < grid0;", cols));
      // A lane past the last column computes column 0 (in bounds) and stores nothing.
      line(fmt::format("const kiln_i64 kiln_q = kiln_valid ? kiln_tile * {} + kiln_lane : 0;", cols));
      delinearize("kiln_q", k.grid.size(), ir::grid_var, [](size_t d) { return fmt::format("kiln_grid{}", d); }, "grid0",
                static_product(k.grid));
      for (size_t s = 0; s < k.stages.size(); ++s) stage(k.stages[s], s);
      close();
      close();
      return;
    }
    if (block)
      open("for (kiln_i64 kiln_q = blockIdx.x; kiln_q < grid0; kiln_q += gridDim.x)");
    else
      open("for (kiln_i64 kiln_q = (kiln_i64)blockIdx.x * blockDim.x + threadIdx.x; kiln_q < grid0; "
           "kiln_q += (kiln_i64)gridDim.x * blockDim.x)");
    delinearize("kiln_q", k.grid.size(), ir::grid_var, [](size_t d) { return fmt::format("kiln_grid{}", d); }, "grid0",
                static_product(k.grid));
    for (size_t i = 0; i < cached.size(); ++i)  // this thread's items of each cached load (registers)
      line(fmt::format("{} kiln_row{}[{}];", compute_type(cached[i].dtype), i, items));
    for (size_t s = 0; s < k.stages.size(); ++s) stage(k.stages[s], s);
    close();
    close();
  }
};

bool uses_dtype(const ir::Kernel& k, ScalarType t) {
  for (const ir::KernelArg& a : k.args)
    if (a.dtype == t) return true;
  for (const ir::KStage& st : k.stages) {
    if (st.kind == ir::StageKind::Reduce && (st.acc_dtype == t || (st.sum_exp >= 0 && st.sum_exp_dtype == t))) return true;
    for (const ir::KInst& in : st.body)
      if (in.dtype == t) return true;
  }
  return false;
}

}  // namespace

namespace {

// A kernel's banner (its launch and its IR as comments) and its code, without the prelude.
std::string kernel_text(const ir::Kernel& k) {
  ir::verify_kernel(k);
  Emitter e{k};
  e.kernel();
  std::string src = fmt::format("// kiln kernel {} - generated by codegen_cuda; launch: {}\n", k.name,
                                e.block ? "one block per grid point (blockDim.x a multiple of 32, <= 1024)"
                                        : "one thread per grid point (any 1-D launch)");
  std::string ir_text = k.str();
  for (size_t pos = 0; pos < ir_text.size();) {
    const size_t end = ir_text.find('\n', pos);
    src += "// " + ir_text.substr(pos, end - pos) + "\n";
    pos = end == std::string::npos ? ir_text.size() : end + 1;
  }
  return src + "\n" + e.out;
}

}  // namespace

bool reads_rng_slot(const ir::Kernel& k) {
  for (const std::string& p : k.params)
    if (p == ir::kRandomSeedParam || p == ir::kRandomBaseParam) return true;
  return false;
}

std::string emit_cuda(const ir::Kernel& k) {
  const std::string text = kernel_text(k);
  const size_t body = text.find("\n\n") + 1;  // the banner, the prelude, the code
  return text.substr(0, body) + prelude(uses_dtype(k, ScalarType::Half), uses_dtype(k, ScalarType::BFloat16)) +
         text.substr(body);
}

std::string emit_module(const ir::Kernel& k) {
  ir::Kernel named = k;
  named.name = kModuleEntry;
  return emit_cuda(named);
}

std::string module_entry(size_t i) { return fmt::format("k{}", i); }

std::string emit_program_module(const std::vector<const ir::Kernel*>& kernels) {
  bool half = false, bf16 = false;
  std::string code;
  for (size_t i = 0; i < kernels.size(); ++i) {
    ir::Kernel named = *kernels[i];
    named.name = module_entry(i);
    half = half || uses_dtype(named, ScalarType::Half);
    bf16 = bf16 || uses_dtype(named, ScalarType::BFloat16);
    code += "\n" + kernel_text(named);
  }
  return fmt::format("// kiln module of {} kernels - generated by codegen_cuda\n", kernels.size()) + prelude(half, bf16) +
         code;
}

}  // namespace kiln::cuda
