// kiln/ir/kernel_text.h — the text format of Kernels (`.kk` files): printing and parsing.
//
// Kernel::str() prints one kernel; a file holds any number of them, separated by one blank
// line (print_kernels). The grammar, as Kernel::str writes it:
//
//   kernel k0(in0: f32, out0: out f32) params(rng_base, rng_seed, s0) grid[p0 < s0] outer_reduction_tile(32) {
//     %0 = reduce sum [r0 < 1024] {                 # stage vars r0.., grid vars p0..
//       %1 = load in0[1024*p0 + r0] : f32
//       yield %1
//     } : f32                                       # the accumulator dtype
//     loop [] {
//       %2 = const 0.5 : f32                        # true, -3, 2.5, inf, -inf, nan
//       %3 = index p0 < 7 : bool
//       %4 = div %0, %2 {rounding_mode="floor"} : f32   # elementwise prim, attrs by name
//       store out0[p0], %4                          # stores the operand's dtype
//       %5 = index p0 : i64
//       %6 = index rng_seed : i64
//       %7 = index rng_base + 2 : i64
//       %8 = random uniform(0, 1) %5, %6, %7 : f32  # element p0 of the call's third draw
//     }
//     loop ordered [r0 < 16] {                      # in order, in one thread
//       %9 = carry 0 : f64                          # 0 first, then what the last update gave
//       %10 = load in0[16*p0 + r0] : f32
//       %11 = convert_element_type %10 {dtype=f64} : f64
//       %12 = add %9, %11 : f64
//       update %9, %12                              # what %9 reads in the next iteration
//       %13 = convert_element_type %12 {dtype=f32} : f32
//       store out0[16*p0 + r0], %13
//     }
//   }
//
// `params(...)` and the schedule (ir/kernel.h's KSchedule: `outer_reduction` or
// `outer_reduction_tile(N)`, `tile_rows(N)`, `vector_bits(N)`, `launch(thread_per_point |
// block_per_point, threads=N, work=EXPR, sms=N)` on the header, `vectorize(interleave=N,
// lanes=N, masked_tail, partials=N)` after a stage's nest, `ordered` before a loop stage's nest) appear
// only when set; an empty nest prints as `[]`. A Compute instruction's `{attrs}` is either absent (no attributes stored)
// or names every attribute of the op's schema, in any order when parsed. Expressions use
// the grammar of ir::parse_expr. '#' starts a comment to the end of a line.
//
// Parsing is exact: parse_kernels(print_kernels(ks)) == ks and print_kernels(parse_kernels(t))
// == t for any text print_kernels wrote (the fields a KOp does not use keep their defaults,
// and a store's dtype is its operand's). Syntax errors throw kiln::Error
// "[parse] line:col: ..."; every parsed kernel then goes through ir::verify_kernel, whose
// failures become "[parse] line:col: kernel <name>: ..." located at the kernel's header.
#pragma once

#include "ir/kernel.h"

#include <string>
#include <string_view>
#include <vector>

namespace kiln::ir {

// All kernels of a file, in order (an empty or comment-only text gives none).
std::vector<Kernel> parse_kernels(std::string_view text);
// Exactly one kernel.
Kernel parse_kernel(std::string_view text);
// Each kernel's str(), separated by a blank line; "" for none.
std::string print_kernels(const std::vector<Kernel>& kernels);

}  // namespace kiln::ir
