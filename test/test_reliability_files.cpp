// kiln/test/test_reliability_files.cpp — damaged and special files where kiln reads files.
//
// The disk cache's directory and any path given to the kiln tool may hold what a careless or
// hostile neighbour put there: a FIFO under an entry's name (an open would block every compile
// forever), a sparse file claiming 100 GB (its bytes would be allocated before the check), a
// link, a directory, /dev/zero. Each is refused or ignored at once, and a compile that meets
// one still gives the right result.
#include "base/read_file.h"
#include "codegen_cpu/module_cache.h"
#include "kiln/kiln.h"
#include "runtime/cache/compile_cache.h"
#include "runtime/config.h"
#include "test_support/check.h"
#include "test_support/files.h"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <future>
#include <string>

namespace kiln {
namespace {

namespace fs = std::filesystem;
using test::error_of;

const std::string kKey(64, 'c');

// Runs fn on another thread and fails the test (instead of hanging) past `seconds`.
template <typename Fn> void within(double seconds, Fn fn) {
  auto f = std::async(std::launch::async, fn);
  ASSERT_EQ(f.wait_for(std::chrono::duration<double>(seconds)), std::future_status::ready) << "it blocked";
  f.get();
}

TEST(ReliabilityFiles, SpecialFilesUnderAnEntrysNameAreIgnored) {
  const std::string dir = test::make_temp_dir("kiln-special");
  rt::DiskCache cache(dir, int64_t{1} << 30);
  ASSERT_TRUE(cache.usable());
  const std::string path = cache.path_of(kKey);
  // A FIFO: opened without blocking, refused as not a regular file, removed.
  ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0);
  within(5, [&] { EXPECT_FALSE(cache.load(kKey)); });
  EXPECT_FALSE(fs::exists(path));
  // A sparse file claiming 100 GB: refused by its size before anything is allocated.
  {
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT, 0600);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::ftruncate(fd, int64_t{100} << 30), 0);
    ::close(fd);
  }
  within(5, [&] { EXPECT_FALSE(cache.load(kKey)); });
  // A directory and a link.
  fs::create_directory(path);
  EXPECT_FALSE(cache.load(kKey));
  fs::remove_all(path);
  cache.save(std::string(64, 'd'), "real code");
  fs::create_symlink(cache.path_of(std::string(64, 'd')), path);
  EXPECT_FALSE(cache.load(kKey));  // a link is not an entry, even to a valid one
  // A header that claims more code than an entry can hold.
  std::string claim = rt::encode_cache_entry(kKey, "x");
  std::string why;
  const size_t size_at = 8 + 4 + 4 + kKey.size();
  const uint64_t huge = uint64_t{1} << 40;
  claim.replace(size_at, 8, reinterpret_cast<const char*>(&huge), 8);
  EXPECT_FALSE(rt::decode_cache_entry(claim, kKey, &why));
  EXPECT_NE(why.find("more than an entry holds"), std::string::npos) << why;
  fs::remove_all(dir);
}

TEST(ReliabilityFiles, ACompileThatMeetsAFifoStillCompiles) {
  const std::string dir = test::make_temp_dir("kiln-fifo");
  ::setenv("KILN_CACHE_DIR", dir.c_str(), 1);
  rt::reload_config_for_testing();
  cpu::forget_linked_modules_for_testing();
  auto fn = [](const Tensor& x) { return (x * 7 - 2).abs(); };
  const Tensor x = tensor(std::vector<float>{1, -2, 3});
  // Learn the module's entry name from a first compile, then plant a FIFO there.
  (void)compile(fn)(x);
  std::string entry;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".kobj") entry = e.path().string();
  ASSERT_FALSE(entry.empty());
  for (const auto& e : fs::directory_iterator(dir)) fs::remove(e.path());
  ASSERT_EQ(::mkfifo(entry.c_str(), 0600), 0);
  cpu::forget_linked_modules_for_testing();
  within(30, [&] { EXPECT_TRUE(equal(compile(fn)(x), (x * 7 - 2).abs())); });
  ::unsetenv("KILN_CACHE_DIR");
  rt::reload_config_for_testing();
  fs::remove_all(dir);
}

TEST(ReliabilityFiles, ReadingAFileRefusesDevicesFifosAndGiants) {
  within(5, [] {
    EXPECT_NE(error_of([] { (void)read_regular_file("/dev/zero", "check"); }).find("not a regular file"),
              std::string::npos);
  });
  const std::string dir = test::make_temp_dir("kiln-read");
  const std::string fifo = dir + "/fifo.kir";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  within(5, [&] { EXPECT_EQ(error_of([&] { (void)read_regular_file(fifo, "check"); }),
                            "[check] cannot read " + fifo + ": not a regular file"); });
  const std::string big = dir + "/big.kir";
  {
    const int fd = ::open(big.c_str(), O_WRONLY | O_CREAT, 0600);
    ASSERT_EQ(::ftruncate(fd, int64_t{100} << 30), 0);
    ::close(fd);
  }
  within(5, [&] { EXPECT_NE(error_of([&] { (void)read_regular_file(big, "check"); }).find("more than"), std::string::npos); });
  EXPECT_NE(error_of([&] { (void)read_regular_file(dir + "/missing.kir", "check"); }).find("No such file"),
            std::string::npos);
  test::write_file(dir + "/ok.kir", "hello");
  EXPECT_EQ(read_regular_file(dir + "/ok.kir", "check"), "hello");
  fs::remove_all(dir);
}

}  // namespace
}  // namespace kiln
