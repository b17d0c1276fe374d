// kiln/ir/exec_plan.h — the execution plan that lowering produces for a backend to run.
//
// An ExecPlan is the graph after fusion: a list of buffers (graph inputs, temporaries,
// outputs) and a sequence of steps, each a generated Kernel, an extern call (matmul
// through the BLAS library) or a fallback prim run by the reference interpreter (ops no
// backend lowers yet). Sizes and strides are Expr: constants when the plan is static,
// symbols bound from the inputs at run time otherwise. Memory planning assigns temporaries
// to reusable slots. runtime::Program executes a plan; backends compile its kernels.
#pragma once

#include "ir/attr.h"
#include "ir/kernel.h"
#include "ir/tensor_type.h"

#include <string>
#include <string_view>
#include <vector>

namespace kiln::ir {

enum class BufferRole : uint8_t {
  Input,   // graph input `input_index`, read through `strides`
  Temp,    // intermediate, contiguous, lives in memory slot `slot`
  Output,  // a fresh contiguous tensor handed to the caller
  View,    // a strided view of buffer `base` (an extern call reads a transposed operand in place)
};

struct PlanBuffer {
  BufferRole role = BufferRole::Temp;
  TensorType type;
  std::vector<Expr> strides;  // in elements
  int input_index = -1;           // Input only
  int slot = -1;                  // Temp only: memory slot (buffers with one slot are live at once only where a
                                  // pointwise kernel writes one over the other it reads: passes/plan.cpp)
  int base = -1;                  // View only: the viewed buffer (its strides are `strides`)
  // Output only: graph input whose memory the output may take (passes/donate.h); the kernel
  // that writes it reads that input through it.
  int donor_input = -1;
};

enum class StepKind : uint8_t {
  Kernel,    // a generated kernel; `buffers` are its args in order
  Extern,    // a library call (mm, bmm); `buffers` are inputs then the output
  Fallback,  // a prim run by the interpreter; `buffers` are inputs then outputs
};

struct PlanStep {
  StepKind kind = StepKind::Kernel;
  Kernel kernel;         // Kernel only
  OpKind op = OpKind::mm;  // Extern / Fallback
  AttrList attrs;        // Extern / Fallback
  std::vector<int> buffers;  // plan buffer ids
  // The graph nodes (positions in Graph::nodes()) this step computes: a kernel's fusion group
  // (a node recomputed by two kernels is in both), or an extern/fallback step's one node.
  std::vector<int> nodes;
  // Which implementation an Extern/Fallback step calls ("blas", "interpreter", "user
  // lowering 'name'", "custom op"), set by the backend that lowered it; shown by describe().
  std::string lowering;
  std::string describe() const;  // one line: "kernel k0(b0, b1 -> b2)", "extern mm [blas](b0, b1 -> b2)"
  std::vector<int> written() const;  // the buffers this step writes (kernel outputs, op results)
};

struct MemorySlot {
  Expr bytes;  // the largest buffer assigned to the slot
};

// A graph output is a plan buffer, or (alias) directly one of the inputs.
struct PlanOutput {
  int buffer = -1;
};

// A plan's random draws (uniform/normal nodes, numbered in graph order, as an eager run takes
// them) take their (seed, offset) per call from the default generator: the call reads the
// generator's seed and reserves `random_draws` consecutive offsets, the first of which is the
// parameter rng_base. Draw k is at offset rng_base + k: a kernel computing it reads the
// parameters kRandomSeedParam and kRandomBaseParam; an extern or fallback step carries k in
// its `offset` attribute, which the runtime adds to rng_base (runtime/program.cpp).
inline constexpr const char* kRandomSeedParam = "rng_seed";
inline constexpr const char* kRandomBaseParam = "rng_base";

struct ExecPlan {
  std::vector<PlanBuffer> buffers;
  std::vector<PlanStep> steps;
  std::vector<MemorySlot> slots;
  std::vector<PlanOutput> outputs;
  std::vector<std::string> params;  // symbols the plan reads at run time, bound from the inputs
  int64_t random_draws = 0;          // uniform/normal nodes the plan computes (see above)
  // Text form: buffers, slots, random draws, parameters, one line per step (an extern or
  // fallback step with its attributes), the outputs, then the kernels in full; parse_plan
  // reads it back (ir/exec_plan_text.cpp). A step's `nodes`, positions in the graph the plan
  // came from, are not part of it.
  std::string str() const;
  std::vector<const Kernel*> kernels() const;
};

// The plan ExecPlan::str printed: parse_plan(p.str()).str() == p.str(). Throws kiln::Error
// "[parse] line:col: ..." for text it did not print, naming what was expected; every buffer,
// slot and kernel a line refers to exists, and each kernel passes ir::verify_kernel.
ExecPlan parse_plan(std::string_view text);

}  // namespace kiln::ir
