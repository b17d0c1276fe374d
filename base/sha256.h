// kiln/base/sha256.h — SHA-256 of bytes, as lower-case hex: the keys of compiled code.
//
// The compile caches key modules and cubins by SHA-256 (codegen_cpu/module_cache.h,
// runtime/cuda/backend_cuda.cpp). It lives here, over OpenSSL's libcrypto, so that code that
// only looks compiled code up needs neither LLVM nor the CUDA toolkit.
#pragma once

#include <string>
#include <string_view>

namespace kiln {

// 64 lower-case hex digits.
std::string sha256_hex(std::string_view bytes);

}  // namespace kiln
