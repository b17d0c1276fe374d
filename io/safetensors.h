// kiln/io/safetensors.h — tensors to and from safetensors files, the format PyTorch
// (safetensors.torch), JAX, MLX and Hugging Face checkpoints use.
//
// A file is an 8-byte little-endian header length, a JSON header naming each tensor's dtype,
// shape and byte range, then the tensors' bytes, little-endian and row-major. kiln reads files
// PyTorch wrote and writes files PyTorch loads (test/test_io_safetensors.cpp exchanges
// committed files with real PyTorch).
//
// save_safetensors writes atomically (base/atomic_file.h): a crash leaves the old file or the
// whole new one. Tensors on other devices, or not contiguous, are written from a contiguous
// host copy. Names are written in sorted order.
//
// load_safetensors checks everything before it trusts it: the header length against the
// file, the JSON, every dtype and shape, and that the byte ranges tile the data section
// without gaps or overlaps as the format requires. A truncated or inconsistent file is a
// kiln::Error naming the file and the tensor. Dtypes: BOOL, U8, I8, I16, I32, I64, F16, BF16,
// F32, F64.
#pragma once

#include "frontend/tensor.h"

#include <map>
#include <memory>
#include <string>
#include <string_view>

namespace kiln {

void save_safetensors(const std::map<std::string, Tensor>& tensors, const std::string& path,
                      const std::map<std::string, std::string>& metadata = {});

// The tensors, on `device` (default the cpu).
std::map<std::string, Tensor> load_safetensors(const std::string& path, Device device = Device());

// The same format in memory, with the same checks (an exported program's weights,
// runtime/export/package.h); `what` names the bytes in errors.
std::string safetensors_bytes(const std::map<std::string, Tensor>& tensors,
                              const std::map<std::string, std::string>& metadata = {});
std::map<std::string, Tensor> load_safetensors_bytes(std::string_view bytes, const std::string& what,
                                                     Device device = Device());

// The tensors of safetensors bytes, on the cpu, viewing `bytes` in place (each keeps `owner`,
// which keeps the bytes, alive) where their data is aligned to their element size, copied
// where not; the same checks as load_safetensors. The tensors are read-only by contract: an
// exported program's weights (runtime/export/export.cpp), which nothing writes.
std::map<std::string, Tensor> view_safetensors_bytes(std::string_view bytes, const std::string& what,
                                                     std::shared_ptr<const void> owner);

// The header's "__metadata__" (string to string; empty when the file has none).
std::map<std::string, std::string> load_safetensors_metadata(const std::string& path);

}  // namespace kiln
