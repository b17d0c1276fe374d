// kiln/test/test_support/main.cpp — GoogleTest entry point shared by every test executable.
//
// Tests never touch the user's compile cache: unless KILN_CACHE_DIR is set, each test process
// gets a fresh private one, removed when it exits.
#include "files.h"  // beside this file

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  std::string private_cache;
  if (std::getenv("KILN_CACHE_DIR") == nullptr) {
    private_cache = kiln::test::make_temp_dir("kiln-test-cache");
    ::setenv("KILN_CACHE_DIR", private_cache.c_str(), 1);
  }
  const int rc = RUN_ALL_TESTS();
  if (!private_cache.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(private_cache, ec);
  }
  return rc;
}
