// kiln/base/build_id.h — which build of kiln this process runs, for compile cache keys.
//
// Generated code depends on kiln's code generators, not only on the kernel they are given:
// two builds with the same version string but a changed emitter must not share cache
// entries. build_id() identifies the binary that holds kiln (libkiln.so, or the executable
// it is linked into) by its GNU build-id note, which the linker computes from the binary's
// contents (kiln links with --build-id). A binary without the note is identified by a hash
// of its file contents instead (read once). Either way a rebuilt kiln gets fresh cache keys.
#pragma once

#include <string>

namespace kiln {

// "build-id:<hex>", or "file-fnv1a:<hex>-<size>" without the note; computed once per process.
const std::string& build_id();

// The build-id note of an ELF shared library on disk ("build-id:<hex>"), read from its
// program headers without loading it; "" when the file is missing, not a 64-bit ELF file or
// without the note. libkiln keys compiled code by libkiln_llvm's too
// (codegen_cpu/module_compiler.h), which a cache hit never loads.
std::string file_build_id(const std::string& path);

}  // namespace kiln
