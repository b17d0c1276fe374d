// kiln/test/test_cache_remote.cpp — the shared compile cache on a real redis-server, which each
// test starts on a free loopback port and stops afterwards (scripts/test.sh installs it):
// entries shared between two local caches, a server that is down, one that is paused (DEBUG
// SLEEP) past the timeout, a corrupted value, and compile() loading its code from Redis.
#include "codegen_cpu/module_cache.h"
#include "frontend/kiln.h"
#include "runtime/compile_cache.h"
#include "runtime/config.h"
#include "runtime/log.h"
#include "runtime/remote_cache.h"
#include "test_support/files.h"
#include "test_support/local_redis.h"
#include "test_support/make.h"

#include <gtest/gtest.h>
#include <hiredis/hiredis.h>


#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>

namespace kiln {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

redisContext* client(int port) {
  const timeval tv{2, 0};
  redisContext* c = redisConnectWithTimeout("127.0.0.1", port, tv);
  if (c && c->err) {
    redisFree(c);
    return nullptr;
  }
  return c;
}

// Each test gets a redis-server of its own (test_support/local_redis.h).
class RedisTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!test::LocalRedis::binary()) GTEST_SKIP() << "redis-server is not installed (scripts/test.sh installs it): remote cache tests skipped";
    const std::string why = redis_.start();
    ASSERT_EQ(why, "");
  }
  std::string url() const { return redis_.url(); }
  void command(const std::string& cmd, const std::string& a = "", const std::string& b = "") {
    redisContext* c = client(redis_.port());
    ASSERT_NE(c, nullptr);
    void* r = b.empty() ? (a.empty() ? redisCommand(c, cmd.c_str()) : redisCommand(c, (cmd + " %b").c_str(), a.data(), a.size()))
                        : redisCommand(c, (cmd + " %b %b").c_str(), a.data(), a.size(), b.data(), b.size());
    if (r) freeReplyObject(r);
    redisFree(c);
  }

  test::LocalRedis redis_;
};

std::string temp_dir() { return test::make_temp_dir("kiln-remote"); }

rt::Config config_with(const std::string& dir, const std::string& remote) {
  rt::Config c;
  c.cache_dir = dir;
  c.remote_cache = remote;
  return c;
}

const std::string kKey(64, 'e');

TEST(RedisUrl, Parses) {
  auto a = rt::parse_redis_url("redis://cache.internal:7000/3");
  ASSERT_TRUE(a);
  EXPECT_EQ(a->host, "cache.internal");
  EXPECT_EQ(a->port, 7000);
  EXPECT_EQ(a->db, 3);
  a = rt::parse_redis_url("redis://[::1]:6380");
  ASSERT_TRUE(a);
  EXPECT_EQ(a->host, "::1");
  EXPECT_EQ(a->port, 6380);
  a = rt::parse_redis_url("redis://localhost");
  ASSERT_TRUE(a);
  EXPECT_EQ(a->port, 6379);
  EXPECT_FALSE(rt::parse_redis_url("http://localhost:6379"));
  EXPECT_FALSE(rt::parse_redis_url("redis://localhost:port"));
  EXPECT_FALSE(rt::parse_redis_url("redis://localhost:70000"));
}

TEST_F(RedisTest, AnEntryOneCacheSavedReachesAnother) {
  const std::string a = temp_dir(), b = temp_dir();
  rt::CompileCache first(config_with(a, url())), second(config_with(b, url()));
  first.save(kKey, "object code");
  CodeSource from = CodeSource::Compiled;
  EXPECT_EQ(second.load(kKey, from), "object code");
  EXPECT_EQ(from, CodeSource::Remote);
  // Copied to the second disk: read from there next time.
  EXPECT_TRUE(fs::exists(second.disk()->path_of(kKey)));
  EXPECT_EQ(second.load(kKey, from), "object code");
  EXPECT_EQ(from, CodeSource::Disk);
  fs::remove_all(a);
  fs::remove_all(b);
}

TEST_F(RedisTest, ACorruptedValueIsIgnoredAndRemoved) {
  const std::string dir = temp_dir();
  rt::CompileCache cache(config_with(dir, url()));
  cache.save(kKey, "object code");
  fs::remove(cache.disk()->path_of(kKey));
  std::string bad = rt::encode_cache_entry(kKey, "object code");
  bad[bad.size() - 2] ^= 1;
  command("SET", "kiln:obj:" + kKey, bad);
  CodeSource from = CodeSource::Compiled;
  EXPECT_FALSE(cache.load(kKey, from));
  EXPECT_FALSE(cache.remote()->down());  // a bad value is not an outage
  EXPECT_FALSE(cache.remote()->get(kKey));  // removed
  fs::remove_all(dir);
}

TEST_F(RedisTest, APausedServerTimesOutAndTheCacheGoesLocal) {
  rt::RemoteCache remote(url(), std::chrono::milliseconds(200));
  remote.set(kKey, "bytes");
  ASSERT_EQ(remote.get(kKey), "bytes");
  std::thread sleeper([this] { command("DEBUG SLEEP 2"); });
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // the server is asleep now
  std::string log;
  rt::set_log_sink_for_testing([&](std::string_view line) { log += line; });
  const auto t0 = Clock::now();
  EXPECT_FALSE(remote.get(kKey));
  const double waited = std::chrono::duration<double>(Clock::now() - t0).count();
  EXPECT_LT(waited, 1.0);  // the 200 ms timeout, not the 2 s pause
  EXPECT_TRUE(remote.down());
  EXPECT_FALSE(remote.get(kKey));  // no second wait
  rt::set_log_sink_for_testing({});
  EXPECT_NE(log.find("GET failed"), std::string::npos) << log;
  EXPECT_NE(log.find("local cache only"), std::string::npos) << log;
  sleeper.join();
}

TEST(RemoteCacheDown, NothingListeningNeverFailsACompile) {
  const std::string dir = temp_dir();
  const int port = test::free_loopback_port();
  ::setenv("KILN_CACHE_DIR", dir.c_str(), 1);
  ::setenv("KILN_REMOTE_CACHE", ("redis://127.0.0.1:" + std::to_string(port)).c_str(), 1);
  rt::reload_config_for_testing();
  std::string log;
  rt::set_log_sink_for_testing([&](std::string_view line) { log += line; });
  cpu::forget_linked_modules_for_testing();
  auto f = compile([](const Tensor& x) { return exp(x) + 1; });
  const Tensor y = f(test::mk<float>({0, 1}, {2}));
  rt::set_log_sink_for_testing({});
  ::unsetenv("KILN_REMOTE_CACHE");
  rt::reload_config_for_testing();
  EXPECT_NEAR(y.sum().item().to_double(), 2 + 1 + std::exp(1.0), 1e-5);
  EXPECT_NE(log.find("connecting to 127.0.0.1:" + std::to_string(port) + " failed"), std::string::npos) << log;
  fs::remove_all(dir);
}

TEST_F(RedisTest, CompileLoadsItsCodeFromRedisWithAnEmptyDirectory) {
  const std::string a = temp_dir(), b = temp_dir();
  ::setenv("KILN_REMOTE_CACHE", url().c_str(), 1);
  auto fn = [](const Tensor& x) { return softmax(x, -1) * 3; };
  const Tensor x = test::mk<float>({1, 2, 3, 4}, {2, 2});
  ::setenv("KILN_CACHE_DIR", a.c_str(), 1);
  rt::reload_config_for_testing();
  cpu::forget_linked_modules_for_testing();
  auto f1 = compile(fn);
  const Tensor r1 = f1(x);
  EXPECT_EQ(f1.stats().code_from_remote + f1.stats().code_from_disk, 0);
  // A "new worker": an empty local directory, the same Redis.
  ::setenv("KILN_CACHE_DIR", b.c_str(), 1);
  rt::reload_config_for_testing();
  cpu::forget_linked_modules_for_testing();
  auto f2 = compile(fn);
  const Tensor r2 = f2(x);
  ::unsetenv("KILN_REMOTE_CACHE");
  rt::reload_config_for_testing();
  EXPECT_EQ(f2.stats().code_from_remote, 1);
  EXPECT_TRUE(equal(r1, r2));
  fs::remove_all(a);
  fs::remove_all(b);
}

}  // namespace
}  // namespace kiln
