// kiln/codegen_cpu/object_bundle.h — several object files as one cache entry.
//
// A plan's kernels compile as one LLVM module, or as several compiled at once on the pool's
// threads (kernel_codegen.cpp). The compile cache stores one value per key, so the objects of
// one plan travel together: a single object is stored as it is (an ELF file, as before
// bundles existed); several as "kiln-objects 1\n", their count and sizes as decimal lines,
// then their bytes. Unpacking checks every size against the entry: a truncated or damaged
// entry is refused (null), never read past its end.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::cpu {

std::string pack_objects(const std::vector<std::string>& objects);

// The objects of an entry pack_objects made (views into `entry`), or nullopt when it is not
// one (the caller discards it as damaged).
std::optional<std::vector<std::string_view>> unpack_objects(std::string_view entry);

}  // namespace kiln::cpu
