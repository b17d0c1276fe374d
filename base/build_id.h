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

}  // namespace kiln
