// kiln/tools/run_package.h — `kiln run PACKAGE [INPUT.npy ...] [-o PREFIX] [--weights FILE] [--stats]`.
#pragma once

#include <string>

namespace kiln::tools {

// Whether the file starts as an exported program does ("KILNPKG").
bool is_package(const std::string& path);
// Loads the package, runs it on the .npy inputs, prints each output's dtype and shape (and
// writes PREFIX0.npy, PREFIX1.npy, ... with -o); --weights FILE.safetensors passes a package
// exported with ExportOptions::external_weights its weights by name; --stats adds the load and first-call times
// and whether LLVM was ever mapped into the process. f32 products run on kiln's own SGEMM unless
// KILN_SGEMM says otherwise. Returns the exit status.
int run_package(int argc, char** argv);

}  // namespace kiln::tools
