// kiln/test/test_support/sanitizer.h — whether this test build runs under AddressSanitizer
// (the asan preset), for tests whose budget or stack differs there (GCC defines
// __SANITIZE_ADDRESS__, Clang answers __has_feature).
#pragma once

namespace kiln::test {

#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kAddressSanitizer = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
inline constexpr bool kAddressSanitizer = true;
#else
inline constexpr bool kAddressSanitizer = false;
#endif
#else
inline constexpr bool kAddressSanitizer = false;
#endif

}  // namespace kiln::test
