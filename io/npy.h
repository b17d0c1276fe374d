// kiln/io/npy.h — NumPy's .npy and .npz files.
//
// load_npy reads format versions 1.0, 2.0 and 3.0: little- or big-endian (swapped on load),
// C or Fortran order (a Fortran-order array loads as the same values, row-major). Dtypes: bool,
// uint8, int8/16/32/64, float16/32/64; NumPy has no bfloat16, so saving one is an error.
// save_npy writes version 1.0 (2.0 for a header past 64 KiB), C order, as numpy.save does.
// An .npz is a zip of .npy files named by key: load_npz reads np.savez's stored entries and
// np.savez_compressed's deflated ones (libzip); save_npz stores them, as np.savez does. Both
// writers are atomic (base/atomic_file.h). A malformed or truncated file is a kiln::Error
// naming the file (and the entry).
#pragma once

#include "frontend/tensor.h"

#include <map>
#include <string>

namespace kiln {

Tensor load_npy(const std::string& path);
void save_npy(const Tensor& t, const std::string& path);

std::map<std::string, Tensor> load_npz(const std::string& path);
void save_npz(const std::map<std::string, Tensor>& tensors, const std::string& path);

}  // namespace kiln
