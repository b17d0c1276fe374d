// kiln/test/test_cache_remote.cpp — the shared compile cache on a real redis-server, which each
// test starts on a free loopback port and stops afterwards (scripts/test.sh installs it):
// entries shared between two local caches, a server that is down, one that is paused (DEBUG
// SLEEP) past the timeout, a corrupted value, compile() loading its code from Redis; and the
// threats of docs/security.md: entries forged by another Redis client (never linked, never
// copied to disk), no fleet key (no remote tier), key files others can read, Redis AUTH, and
// hostile servers (test_support/redis_stub.h): a reply dripped a byte at a time, a declared
// 4 GB reply, a real 100 MB value, a key of the wrong type, and an outage the tier recovers
// from.
#include "base/read_file.h"
#include "codegen_cpu/module_cache.h"
#include "kiln/kiln.h"
#include "runtime/cache/cache_auth.h"
#include "runtime/cache/compile_cache.h"
#include "runtime/config.h"
#include "runtime/log.h"
#include "runtime/cache/remote_cache.h"
#include "test_support/files.h"
#include "test_support/local_redis.h"
#include "test_support/make.h"
#include "test_support/redis_stub.h"

#include <gtest/gtest.h>
#include <hiredis/hiredis.h>

#include <sys/stat.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace kiln {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

const std::string kFleetKey = "a fleet key of thirty-two bytes!";

redisContext* client(int port) {
  const timeval tv{5, 0};
  redisContext* c = redisConnectWithTimeout("127.0.0.1", port, tv);
  if (c && c->err) {
    redisFree(c);
    return nullptr;
  }
  return c;
}

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// Log lines (warnings included) while the object lives.
class LogCapture {
 public:
  LogCapture() {
    rt::set_log_sink_for_testing([this](std::string_view line) { text_ += line; });
  }
  ~LogCapture() { rt::set_log_sink_for_testing({}); }
  const std::string& text() const { return text_; }

 private:
  std::string text_;
};

// Each test gets a redis-server of its own (test_support/local_redis.h).
class RedisTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!test::LocalRedis::binary()) GTEST_SKIP() << "redis-server is not installed (scripts/test.sh installs it): remote cache tests skipped";
    const std::string why = redis_.start(extra_args());
    ASSERT_EQ(why, "");
  }
  void TearDown() override {
    for (const char* v : {"KILN_REMOTE_CACHE", "KILN_REMOTE_CACHE_KEY", "KILN_REMOTE_CACHE_KEY_FILE", "KILN_CACHE_DIR",
                          "KILN_LOG"})
      ::unsetenv(v);
    rt::reload_config_for_testing();
  }
  virtual std::vector<std::string> extra_args() const { return {}; }
  std::string url() const { return redis_.url(); }
  // One command on a raw client; the reply's string (or its type when not a string).
  std::string command(const std::vector<std::string>& args) {
    redisContext* c = client(redis_.port());
    EXPECT_NE(c, nullptr);
    if (!c) return "";
    std::vector<const char*> argv;
    std::vector<size_t> lens;
    for (const std::string& a : args) {
      argv.push_back(a.data());
      lens.push_back(a.size());
    }
    auto* r = static_cast<redisReply*>(redisCommandArgv(c, static_cast<int>(args.size()), argv.data(), lens.data()));
    std::string out;
    if (r && r->str) out.assign(r->str, r->len);
    if (r && r->type == REDIS_REPLY_INTEGER) out = std::to_string(r->integer);
    if (r && r->type == REDIS_REPLY_NIL) out = "(nil)";
    if (r) freeReplyObject(r);
    redisFree(c);
    return out;
  }

  test::LocalRedis redis_;
};

std::string temp_dir() { return test::make_temp_dir("kiln-remote"); }

// The module keys of the entries in a cache directory.
std::set<std::string> entry_keys(const std::string& dir) {
  std::set<std::string> keys;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".kobj") keys.insert(e.path().stem().string());
  return keys;
}

// The one key in `after` but not in `before`.
std::string new_key(const std::set<std::string>& before, const std::set<std::string>& after) {
  std::vector<std::string> fresh;
  for (const std::string& k : after)
    if (!before.count(k)) fresh.push_back(k);
  EXPECT_EQ(fresh.size(), 1u);
  return fresh.empty() ? std::string() : fresh.front();
}

rt::Config config_with(const std::string& dir, const std::string& remote, const std::string& key = kFleetKey) {
  rt::Config c;
  c.cache_dir = dir;
  c.remote_cache = remote;
  c.remote_cache_key = key;
  return c;
}

const std::string kRemoteKey(64, 'e');

TEST(RedisUrl, Parses) {
  auto a = rt::parse_redis_url("redis://cache.internal:7000/3");
  ASSERT_TRUE(a);
  EXPECT_EQ(a->host, "cache.internal");
  EXPECT_EQ(a->port, 7000);
  EXPECT_EQ(a->db, 3);
  EXPECT_EQ(a->password, "");
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

TEST(RedisUrl, ParsesCredentials) {
  auto a = rt::parse_redis_url("redis://worker:s3cr%40t@cache:7000/2");  // %40 is '@'
  ASSERT_TRUE(a);
  EXPECT_EQ(a->user, "worker");
  EXPECT_EQ(a->password, "s3cr@t");
  EXPECT_EQ(a->host, "cache");
  EXPECT_EQ(a->db, 2);
  a = rt::parse_redis_url("redis://:only-a-password@cache");
  ASSERT_TRUE(a);
  EXPECT_EQ(a->user, "");
  EXPECT_EQ(a->password, "only-a-password");
  a = rt::parse_redis_url("redis://bare-password@cache");
  ASSERT_TRUE(a);
  EXPECT_EQ(a->password, "bare-password");
  EXPECT_FALSE(rt::parse_redis_url("redis://user:bad%4@cache"));
}

TEST(CacheAuth, SealsBindTheKeyAndTheName) {
  const std::string entry = rt::encode_cache_entry(kRemoteKey, "object code");
  const std::string sealed = rt::seal_remote_entry(kFleetKey, "kiln:obj:a", entry);
  std::string why;
  EXPECT_EQ(rt::open_remote_entry(kFleetKey, "kiln:obj:a", sealed, &why), entry);
  EXPECT_FALSE(rt::open_remote_entry(kFleetKey, "kiln:obj:b", sealed, &why));  // moved to another key
  EXPECT_FALSE(rt::open_remote_entry("another key of thirty-two bytes!", "kiln:obj:a", sealed, &why));
  std::string flipped = sealed;
  flipped.back() ^= 1;
  EXPECT_FALSE(rt::open_remote_entry(kFleetKey, "kiln:obj:a", flipped, &why));
  EXPECT_NE(why.find("MAC"), std::string::npos) << why;
  EXPECT_FALSE(rt::open_remote_entry(kFleetKey, "kiln:obj:a", entry, &why));  // unsealed
  // RFC 4231 test case 2.
  const std::string mac = rt::hmac_sha256("Jefe", "what do ya want for nothing?");
  std::string hex;
  for (unsigned char c : mac) hex += fmt::format("{:02x}", c);
  EXPECT_EQ(hex, "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
}

TEST(CacheAuth, KeyFilesMustBePrivateAndLongEnough) {
  const std::string dir = temp_dir();
  const std::string path = dir + "/fleet.key";
  std::ofstream(path) << kFleetKey << "\n";
  rt::Config c;
  c.remote_cache_key_file = path;
  std::string why;
  ::chmod(path.c_str(), 0644);
  EXPECT_FALSE(rt::load_fleet_key(c, &why));
  EXPECT_NE(why.find("chmod 600"), std::string::npos) << why;
  ::chmod(path.c_str(), 0600);
  EXPECT_EQ(rt::load_fleet_key(c, &why), kFleetKey);  // the newline dropped
  c.remote_cache_key_file.clear();
  c.remote_cache_key = "short";
  EXPECT_FALSE(rt::load_fleet_key(c, &why));
  EXPECT_NE(why.find("at least 16"), std::string::npos) << why;
  c.remote_cache_key.clear();
  EXPECT_FALSE(rt::load_fleet_key(c, &why));
  fs::remove_all(dir);
}

TEST_F(RedisTest, AnEntryOneCacheSavedReachesAnother) {
  const std::string a = temp_dir(), b = temp_dir();
  rt::CompileCache first(config_with(a, url())), second(config_with(b, url()));
  first.save(kRemoteKey, "object code");
  CodeSource from = CodeSource::Compiled;
  EXPECT_EQ(second.load(kRemoteKey, from), "object code");
  EXPECT_EQ(from, CodeSource::Remote);
  // Copied to the second disk: read from there next time.
  EXPECT_TRUE(fs::exists(second.disk()->path_of(kRemoteKey)));
  EXPECT_EQ(second.load(kRemoteKey, from), "object code");
  EXPECT_EQ(from, CodeSource::Disk);
  fs::remove_all(a);
  fs::remove_all(b);
}

TEST_F(RedisTest, ACorruptedValueIsIgnoredAndRemoved) {
  const std::string dir = temp_dir();
  rt::CompileCache cache(config_with(dir, url()));
  cache.save(kRemoteKey, "object code");
  fs::remove(cache.disk()->path_of(kRemoteKey));
  std::string bad = command({"GET", "kiln:obj:" + kRemoteKey});
  ASSERT_GT(bad.size(), 10u);
  bad[bad.size() - 2] ^= 1;
  command({"SET", "kiln:obj:" + kRemoteKey, bad});
  CodeSource from = CodeSource::Compiled;
  EXPECT_FALSE(cache.load(kRemoteKey, from));
  EXPECT_FALSE(cache.remote()->down());  // a bad value is not an outage
  EXPECT_EQ(command({"EXISTS", "kiln:obj:" + kRemoteKey}), "0");  // removed
  EXPECT_FALSE(fs::exists(cache.disk()->path_of(kRemoteKey)));
  fs::remove_all(dir);
}

TEST_F(RedisTest, APausedServerTimesOutAndTheCacheGoesLocal) {
  rt::RemoteCache remote(url(), kFleetKey, {.timeout = milliseconds(200)});
  remote.set(kRemoteKey, "bytes");
  ASSERT_EQ(remote.get(kRemoteKey), "bytes");
  std::thread sleeper([this] { command({"DEBUG", "SLEEP", "2"}); });
  std::this_thread::sleep_for(milliseconds(200));  // the server is asleep now
  LogCapture log;
  const auto t0 = Clock::now();
  EXPECT_FALSE(remote.get(kRemoteKey));
  EXPECT_LT(seconds_since(t0), 1.0);  // the 200 ms timeout, not the 2 s pause
  EXPECT_TRUE(remote.down());
  EXPECT_FALSE(remote.get(kRemoteKey));  // backing off: no second wait
  EXPECT_NE(log.text().find("GET failed"), std::string::npos) << log.text();
  EXPECT_NE(log.text().find("local cache only"), std::string::npos) << log.text();
  sleeper.join();
}

TEST(RemoteCacheDown, NothingListeningNeverFailsACompile) {
  const std::string dir = temp_dir();
  const int port = test::free_loopback_port();
  ::setenv("KILN_CACHE_DIR", dir.c_str(), 1);
  ::setenv("KILN_REMOTE_CACHE", ("redis://127.0.0.1:" + std::to_string(port)).c_str(), 1);
  ::setenv("KILN_REMOTE_CACHE_KEY", kFleetKey.c_str(), 1);
  rt::reload_config_for_testing();
  std::string log;
  {
    LogCapture capture;
    cpu::forget_linked_modules_for_testing();
    auto f = compile([](const Tensor& x) { return exp(x) + 1; });
    const Tensor y = f(test::mk<float>({0, 1}, {2}));
    EXPECT_NEAR(y.sum().item().to_double(), 2 + 1 + std::exp(1.0), 1e-5);
    log = capture.text();
  }
  for (const char* v : {"KILN_REMOTE_CACHE", "KILN_REMOTE_CACHE_KEY", "KILN_CACHE_DIR"}) ::unsetenv(v);
  rt::reload_config_for_testing();
  EXPECT_NE(log.find("connecting to 127.0.0.1:" + std::to_string(port) + " failed"), std::string::npos) << log;
  fs::remove_all(dir);
}

TEST_F(RedisTest, CompileLoadsItsCodeFromRedisWithAnEmptyDirectory) {
  const std::string a = temp_dir(), b = temp_dir();
  ::setenv("KILN_REMOTE_CACHE", url().c_str(), 1);
  ::setenv("KILN_REMOTE_CACHE_KEY", kFleetKey.c_str(), 1);
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
  EXPECT_EQ(f2.stats().code_from_remote, 1);
  EXPECT_TRUE(equal(r1, r2));
  fs::remove_all(a);
  fs::remove_all(b);
}

// The attack of issue 28: another client of the server takes the valid entry of (x*1+1).exp(),
// re-keys it as the entry of (x*2+1).exp() with a recomputed checksum, and SETs it. A fresh
// worker must compute (x*2+1).exp(), and must not copy the forgery to its disk.
TEST_F(RedisTest, AForgedEntryIsNeverLinkedNorCopiedToDisk) {
  const std::string a = temp_dir(), b = temp_dir();
  ::setenv("KILN_REMOTE_CACHE", url().c_str(), 1);
  ::setenv("KILN_REMOTE_CACHE_KEY", kFleetKey.c_str(), 1);
  ::setenv("KILN_CACHE_DIR", a.c_str(), 1);
  rt::reload_config_for_testing();
  cpu::forget_linked_modules_for_testing();
  const Tensor x = test::mk<float>({0.5f, 1.0f, 1.5f}, {3});
  auto two = [](const Tensor& t) { return (t * 2 + 1).exp(); };
  // Worker A compiles (x*1+1).exp(): its entry reaches Redis.
  std::set<std::string> before = entry_keys(a);
  auto one = compile([](const Tensor& t) { return (t * 1 + 1).exp(); });
  (void)one(x);
  const std::string one_key = new_key(before, entry_keys(a));
  // The attacker knows the second program's module key (keys are no secret: every worker's
  // cache directory lists them), learnt here from a compile with no remote tier.
  const std::string probe = temp_dir();
  ::unsetenv("KILN_REMOTE_CACHE");
  ::setenv("KILN_CACHE_DIR", probe.c_str(), 1);
  rt::reload_config_for_testing();
  cpu::forget_linked_modules_for_testing();
  before = entry_keys(probe);
  const Tensor want = compile(two)(x);
  const std::string two_key = new_key(before, entry_keys(probe));
  ASSERT_EQ(one_key.size(), 64u);
  ASSERT_EQ(two_key.size(), 64u);
  const std::string one_entry = read_regular_file(a + "/" + one_key + ".kobj", "test");
  std::string why;
  const std::optional<std::string> object = rt::decode_cache_entry(one_entry, one_key, &why);
  ASSERT_TRUE(object) << why;
  // Forgeries: the re-keyed entry bare, and sealed under a key the attacker made up.
  const std::string forged = rt::encode_cache_entry(two_key, *object);
  for (const std::string& value :
       {forged, rt::seal_remote_entry("the attacker's own key, 32 bytes", "kiln:obj:" + two_key, forged)}) {
    command({"SET", "kiln:obj:" + two_key, value});
    const std::string fresh = temp_dir();
    ::setenv("KILN_REMOTE_CACHE", url().c_str(), 1);
    ::setenv("KILN_CACHE_DIR", fresh.c_str(), 1);
    ::setenv("KILN_LOG", "cache", 1);  // the warning is once per key; the log line is not
    rt::reload_config_for_testing();
    cpu::forget_linked_modules_for_testing();
    LogCapture log;
    auto f = compile(two);
    const Tensor got = f(x);
    EXPECT_TRUE(allclose(got, want)) << got << " vs " << want;
    EXPECT_EQ(f.stats().code_from_remote, 0);
    EXPECT_NE(log.text().find("failed authentication"), std::string::npos) << log.text();
    // What the worker keeps on its disk is its own compile, not the forgery.
    const std::string kept = read_regular_file(fresh + "/" + two_key + ".kobj", "test");
    EXPECT_NE(rt::decode_cache_entry(kept, two_key, &why), object);
    fs::remove_all(fresh);
  }
  fs::remove_all(a);
  fs::remove_all(b);
  fs::remove_all(probe);
}

TEST_F(RedisTest, WithoutAFleetKeyTheRemoteTierIsOff) {
  const std::string dir = temp_dir();
  ::setenv("KILN_REMOTE_CACHE", url().c_str(), 1);
  ::setenv("KILN_CACHE_DIR", dir.c_str(), 1);
  rt::reload_config_for_testing();
  cpu::forget_linked_modules_for_testing();
  LogCapture log;
  rt::CompileCache cache(rt::config());
  EXPECT_EQ(cache.remote(), nullptr);
  EXPECT_NE(log.text().find("remote compile cache is off"), std::string::npos) << log.text();
  auto f = compile([](const Tensor& t) { return t * 3 - 1; });
  EXPECT_TRUE(equal(f(test::mk<float>({1, 2}, {2})), test::mk<float>({2, 5}, {2})));
  EXPECT_EQ(command({"DBSIZE"}), "0");  // nothing written
  fs::remove_all(dir);
}

TEST_F(RedisTest, AWrongTypeKeyIsAnHonestMiss) {
  rt::RemoteCache remote(url(), kFleetKey);
  command({"LPUSH", "kiln:obj:" + kRemoteKey, "x"});
  LogCapture log;
  EXPECT_FALSE(remote.get(kRemoteKey));
  EXPECT_FALSE(remote.down());
  EXPECT_NE(log.text().find("WRONGTYPE"), std::string::npos) << log.text();
  remote.set(kRemoteKey, "bytes");  // SET replaces the list
  EXPECT_EQ(remote.get(kRemoteKey), "bytes");
}

TEST_F(RedisTest, AHundredMegabyteValueIsRefusedUnread) {
  rt::RemoteCache remote(url(), kFleetKey, {.timeout = milliseconds(2000)});
  command({"SET", "kiln:obj:" + kRemoteKey, std::string(size_t{100} << 20, 'x')});
  LogCapture log;
  const auto t0 = Clock::now();
  EXPECT_FALSE(remote.get(kRemoteKey));
  EXPECT_LT(seconds_since(t0), 0.5);
  EXPECT_NE(log.text().find("declares 104857600 bytes"), std::string::npos) << log.text();
}

class RedisAuthTest : public RedisTest {
 protected:
  std::vector<std::string> extra_args() const override { return {"--requirepass", "hunter2-hunter2"}; }
  std::string url_with(const std::string& userinfo) const {
    return "redis://" + userinfo + "@127.0.0.1:" + std::to_string(redis_.port());
  }
};

TEST_F(RedisAuthTest, AuthenticatesWithThePasswordInTheUrl) {
  rt::RemoteCache good(url_with(":hunter2-hunter2"), kFleetKey);
  good.set(kRemoteKey, "bytes");
  EXPECT_EQ(good.get(kRemoteKey), "bytes");
  rt::RemoteCache named(url_with("default:hunter2-hunter2"), kFleetKey);  // Redis 6 ACL form
  EXPECT_EQ(named.get(kRemoteKey), "bytes");
  LogCapture log;
  rt::RemoteCache bad(url_with(":wrong"), kFleetKey);
  EXPECT_FALSE(bad.get(kRemoteKey));
  EXPECT_TRUE(bad.down());
  EXPECT_NE(log.text().find("AUTH failed"), std::string::npos) << log.text();
  EXPECT_EQ(log.text().find("hunter2"), std::string::npos) << "a password reached the log";
  rt::RemoteCache none(url(), kFleetKey);  // no password: the server refuses every command
  EXPECT_FALSE(none.get(kRemoteKey));
}

// ---- hostile servers -------------------------------------------------------------------------

TEST(RemoteCacheHostile, ASlowDripIsCutAtTheDeadlineAndBlocksNoOtherLookup) {
  // The first connection answers "$5\r\n" and then one byte every 100 ms; later ones answer
  // at once with a miss.
  test::RedisStub stub([](int fd, int connection) {
    for (;;) {
      const std::string cmd = test::RedisStub::read_command(fd);
      if (cmd.empty()) return;
      if (connection == 0) {
        test::RedisStub::send_all(fd, "$5\r\n");
        for (int i = 0; i < 50; ++i) {
          std::this_thread::sleep_for(milliseconds(100));
          if (!test::RedisStub::send_all(fd, "x")) return;
        }
        return;
      }
      test::RedisStub::send_all(fd, "$-1\r\n");
    }
  });
  rt::RemoteCache remote(stub.url(), kFleetKey, {.timeout = milliseconds(250), .first_backoff = milliseconds(0)});
  double other_took = -1;
  const auto t0 = Clock::now();
  std::thread other([&] {
    std::this_thread::sleep_for(milliseconds(50));  // while the first lookup is dripping
    const auto t1 = Clock::now();
    EXPECT_FALSE(remote.get(std::string(64, 'f')));
    other_took = seconds_since(t1);
  });
  LogCapture log;
  EXPECT_FALSE(remote.get(kRemoteKey));
  const double took = seconds_since(t0);
  other.join();
  EXPECT_LT(took, 1.0) << "the drip (5 s) outlived the deadline";
  EXPECT_GE(other_took, 0);
  EXPECT_LT(other_took, 0.2) << "a second lookup waited for the first";
  EXPECT_NE(log.text().find("timed out"), std::string::npos) << log.text();
}

TEST(RemoteCacheHostile, AFourGigabyteReplyIsRefusedAtItsHeader) {
  test::RedisStub stub([](int fd, int) {
    if (test::RedisStub::read_command(fd).empty()) return;
    test::RedisStub::send_all(fd, "$4000000000\r\n");
    std::string junk(1 << 20, 'j');
    for (int i = 0; i < 64 && test::RedisStub::send_all(fd, junk); ++i) {
    }
  });
  rt::RemoteCache remote(stub.url(), kFleetKey);
  LogCapture log;
  const auto t0 = Clock::now();
  EXPECT_FALSE(remote.get(kRemoteKey));
  EXPECT_LT(seconds_since(t0), 0.5);
  EXPECT_NE(log.text().find("declares 4000000000 bytes"), std::string::npos) << log.text();
}

TEST(RemoteCacheHostile, JunkIsAFailureNotACrash) {
  test::RedisStub stub([](int fd, int) {
    if (test::RedisStub::read_command(fd).empty()) return;
    test::RedisStub::send_all(fd, "?this is not RESP\r\n");
  });
  rt::RemoteCache remote(stub.url(), kFleetKey);
  LogCapture log;
  EXPECT_FALSE(remote.get(kRemoteKey));
  EXPECT_TRUE(remote.down());
  EXPECT_NE(log.text().find("malformed"), std::string::npos) << log.text();
}

TEST(RemoteCacheHostile, TheTierComesBackAfterAnOutage) {
  // Connections 0 and 1 are dropped at once; from the third on the server answers.
  test::RedisStub stub([](int fd, int connection) {
    if (connection < 2) return;
    for (std::string cmd; !(cmd = test::RedisStub::read_command(fd)).empty();)
      test::RedisStub::send_all(fd, "$-1\r\n");
  });
  rt::RemoteCache remote(stub.url(), kFleetKey, {.first_backoff = milliseconds(100)});
  LogCapture log;
  EXPECT_FALSE(remote.get(kRemoteKey));
  EXPECT_TRUE(remote.down());
  std::this_thread::sleep_for(milliseconds(150));
  EXPECT_FALSE(remote.down());
  EXPECT_FALSE(remote.get(kRemoteKey));  // the second outage: the back-off doubles
  EXPECT_TRUE(remote.down());
  std::this_thread::sleep_for(milliseconds(250));
  EXPECT_FALSE(remote.get(kRemoteKey));  // a real miss now
  EXPECT_FALSE(remote.down());
  EXPECT_EQ(stub.connections(), 3);
  // One warning for the first outage; the second only under KILN_LOG=cache.
  const std::string& t = log.text();
  EXPECT_EQ(t.find("[kiln:warning]", t.find("[kiln:warning]") + 1), std::string::npos) << t;
}

}  // namespace
}  // namespace kiln
