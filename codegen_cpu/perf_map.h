// kiln/codegen_cpu/perf_map.h — names for generated code in Linux perf's profiles.
//
// perf attributes samples in JIT code through /tmp/perf-<pid>.map, a text file with one line
// per function: "<start address hex> <size hex> <name>". When KILN_PERF_MAP is on, the JIT
// (codegen_cpu/jit.cpp) appends a line for every function it links, named by the caller's
// label ("kiln <function>/<kernel>", the kernel's name in KILN_DEBUG_DIR's plan dumps), so
// `perf report` shows which kernel of which compiled function the time went to instead of a
// bare address. Addresses and sizes are those the object loader reports for each function
// it linked (codegen_cpu/object_loader.h: the objects' symbol tables).
#pragma once

#include "codegen_cpu/object_loader.h"

#include <string>
#include <vector>

namespace kiln::cpu {

// Appends one line per function to /tmp/perf-<pid>.map: `labels[i]` names the function whose
// symbol is `symbols[i]`; a function with no label keeps its symbol's name. Failures to write
// are ignored (a profile without names, never an error in the program).
void append_perf_map(const std::vector<LoadedFunction>& functions, const std::vector<std::string>& symbols,
                     const std::vector<std::string>& labels);

}  // namespace kiln::cpu
