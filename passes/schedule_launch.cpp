// kiln/passes/schedule_launch.cpp — schedule_launch: how a GPU backend launches each kernel.
//
//   thread_per_point   kernels whose stages have no loop nest, tiled outer reductions (one
//                      thread per column walks its rows), and kernels with an ordered stage
//                      (a scatter: each thread walks its line of the index in order, so that
//                      repeated positions fold as on the CPU): 256 threads per block, grid-stride,
//                      at most 16 blocks per multiprocessor. A pointwise kernel whose accesses
//                      are contiguous along the last grid dimension gives each thread the
//                      consecutive points that fill a 16-byte vector (vector=N; 4 for f32),
//                      taken at run time where symbolic sizes, strides and offsets allow.
//                      A column sum whose columns cannot fill the device splits each
//                      column's rows among row_split threads (up to 8) of its block.
//   block_per_point    kernels with a stage loop (a row reduction, a softmax row): one block per
//                      grid point, its threads sharing the stage loops, about four iterations
//                      of the largest stage per thread (32..1024 threads, a whole number of
//                      warps; at launch when the work is symbolic), and as many blocks as keep
//                      every multiprocessor's 2048 threads busy four times over. With constant
//                      extents, each thread takes a fixed count of iterations (row_items, at
//                      most 32), unrolled, and a load that several stages repeat is read once and
//                      kept in registers (row_cache: ir::row_cached_loads, within 24 registers a
//                      thread); a kernel that keeps nothing takes blocks of at most 512 threads
//                      where its items fit. ScheduleTarget::row_threads and row_cache override
//                      the width and the caching (KILN_CUDA_ROW_THREADS, KILN_CUDA_ROW_CACHE).
// Either kind computes its loads' and stores' indices in 32-bit arithmetic (index32) where
// every value they take provably fits (ir::indices_fit_32_bits: constant extents and strides;
// a 64-bit multiply is several instructions on the GPU, a 32-bit one is one).
// ir::threads_for_work and ir::blocks_for state the rules; the launcher evaluates them.
#include "passes/schedule.h"

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace kiln::passes {

namespace {

constexpr int64_t kPointThreads = 256;

// The largest stage's iterations per grid point: the product of its extents, which may
// depend on the grid variables (evaluated at grid point 0). Only stages with a loop nest count
// (a BlockPerPoint kernel has one).
ir::Expr stage_work(const ir::Kernel& k) {
  std::map<std::string, ir::Expr> at0;
  for (size_t d = 0; d < k.grid.size(); ++d) at0[ir::grid_var(d)] = ir::Expr(0);
  std::optional<ir::Expr> most;
  for (const ir::KStage& st : k.stages) {
    if (st.extents.empty()) continue;
    ir::Expr w = 1;
    for (const ir::Expr& e : st.extents) w = w * e.substitute(at0);
    most = most ? ir::max(*most, w) : w;
  }
  return most.value_or(ir::Expr(1));
}

// A pointwise kernel's lanes per thread: as many consecutive points of the last grid dimension
// as fill a 16-byte vector of its widest contiguously accessed element (ir::lane_access), where
// that count divides the last extent, the kernel has no checks (a fault names one site) and
// some access is contiguous; else 1. A last extent of symbolic size, or accesses whose strides
// and offsets are symbolic (an eager op's kernel, flat or broadcast), take lanes too: the
// kernel takes the vector path when the size, strides and offsets are multiples at run time.
int64_t vector_lanes(const ir::Kernel& k) {
  if (k.grid.empty() || ir::has_checks(k)) return 1;
  const std::optional<int64_t> last = k.grid.back().maybe_const();
  for (const ir::KStage& st : k.stages)
    if (st.kind != ir::StageKind::Loop || !st.extents.empty()) return 1;
  for (int64_t lanes = 16; lanes >= 2; lanes /= 2) {
    if (last && *last % lanes != 0) continue;
    const bool constants = ir::lanes_on_constants(k, lanes);
    std::vector<ir::Expr> runtime;
    int64_t widest = 0;
    for (const ir::KStage& st : k.stages)
      for (const ir::KInst& in : st.body)
        if ((in.kind == ir::KOp::Load || in.kind == ir::KOp::Store) &&
            ir::lane_access(k, in.index, lanes, constants ? nullptr : &runtime) == ir::LaneAccess::Contiguous)
          widest = std::max<int64_t>(widest, static_cast<int64_t>(element_size(k.args.at(static_cast<size_t>(in.arg)).dtype)));
    if (widest > 0 && widest * lanes <= 16) return lanes;
  }
  return 1;
}

// A column sum with too few columns to fill the device with one thread each: the rows are
// split among up to kMaxRowSplit threads per column (a power of two), until the threads fill
// every multiprocessor's 2048 (sms known and the column count constant; else none).
constexpr int64_t kMaxRowSplit = kPointThreads / 32;
int64_t column_row_split(const ir::Kernel& k, int64_t sms) {
  if (sms <= 0 || !k.schedule.outer_reduction) return 1;
  std::optional<int64_t> points = 1;
  for (const ir::Expr& e : k.grid) {
    const std::optional<int64_t> c = e.maybe_const();
    points = c && points ? std::optional<int64_t>(*points * *c) : std::nullopt;
  }
  if (!points) return 1;
  int64_t split = 1;
  while (split < kMaxRowSplit && *points * split < sms * 2048) split *= 2;
  return split;
}

// A row kernel's unrolled items per thread (ir::KLaunch::row_items): with constant extents and
// threads, at most kMaxRowItems; else 0 (stage loops).
constexpr int64_t kMaxRowItems = 32;
int64_t row_items(const ir::Kernel& k, const ir::KLaunch& l) {
  const std::optional<int64_t> work = l.work.maybe_const();
  if (!work || *work <= 0 || l.threads <= 0) return 0;
  for (const ir::KStage& st : k.stages)
    for (const ir::Expr& e : st.extents)
      if (!e.maybe_const()) return 0;
  const int64_t items = (*work + l.threads - 1) / l.threads;
  return items <= kMaxRowItems ? items : 0;
}

// Whether a row_items kernel keeps its repeated loads in registers (ir::row_cached_loads): some
// load repeats, and they fit kRowCacheRegisters 32-bit registers a thread. An H200 sweep
// (bench/README.md, 2026-12-04) set the budget: layer_norm's three rows of 8 items (24) gained
// 1.5x; cross_entropy's one row of 32 items lost 1.5x (spills at 1024 threads).
constexpr int64_t kRowCacheRegisters = 24;
constexpr int64_t kUncachedRowThreads = 512;
bool row_cache(const ir::Kernel& k, int64_t items) {
  const std::vector<ir::RowCachedLoad> loads = ir::row_cached_loads(k);
  int64_t registers = 0;
  for (const ir::RowCachedLoad& c : loads) registers += items * (element_size(ir::compute_dtype(c.dtype)) > 4 ? 2 : 1);
  return !loads.empty() && registers <= kRowCacheRegisters;
}

}  // namespace

bool schedule_launch(ir::Kernel& k, const ScheduleTarget& t) {
  const ir::KLaunch before = k.schedule.launch;
  ir::KLaunch l;
  l.sms = t.sms;
  bool stage_loops = false, ordered = false;
  for (const ir::KStage& st : k.stages) {
    stage_loops |= !st.extents.empty();
    ordered |= st.ordered;
  }
  if (k.schedule.outer_reduction_tile > 0 || !stage_loops || ordered) {
    l.kind = ir::LaunchKind::ThreadPerPoint;
    l.threads = kPointThreads;
    if (k.schedule.outer_reduction_tile == 0) l.vector = vector_lanes(k);
    else l.row_split = column_row_split(k, t.sms);
  } else {
    l.kind = ir::LaunchKind::BlockPerPoint;
    l.work = stage_work(k);
    if (const std::optional<int64_t> w = l.work.maybe_const())
      l.threads = t.row_threads > 0 ? std::min(t.row_threads, ir::threads_for_work(*w)) : ir::threads_for_work(*w);
    l.row_items = row_items(k, l);
    l.row_cache = l.row_items > 0 && t.row_cache && row_cache(k, l.row_items);
    // Nothing kept in registers: blocks of kUncachedRowThreads, four rows in flight per SM
    // instead of two, where their items still fit (H200: a sum of rows of 8192, 76 -> 63 us).
    if (t.row_threads == 0 && !l.row_cache && l.threads > kUncachedRowThreads) {
      ir::KLaunch narrow = l;
      narrow.threads = kUncachedRowThreads;
      narrow.row_items = row_items(k, narrow);
      if (narrow.row_items > 0) l = narrow;
    }
  }
  k.schedule.launch = l;  // the lanes first: each lane's form of an index must fit too
  k.schedule.launch.index32 = ir::indices_fit_32_bits(k);
  return !(before == k.schedule.launch);
}

bool schedule_launch(ir::ExecPlan& plan, const ScheduleTarget& t) { return for_each_kernel(plan, t, schedule_launch); }

}  // namespace kiln::passes
