// kiln/test/test_cache_disk.cpp — the persistent compile cache on disk: module keys, the entry format, a
// damaged entry of every kind, directory ownership and permissions, eviction by last use,
// compile() counting where its code came from, and fresh processes (kiln_cache_probe) that
// load what an earlier one compiled, also two of them at once into one directory.
#include "base/build_id.h"
#include "codegen_cpu/module_cache.h"
#include "codegen_cpu/module_compiler.h"
#include "codegen_cuda/nvrtc.h"
#include "kiln/kiln.h"
#include "ir/kernel_text.h"
#include "runtime/cache/compile_cache.h"
#include "runtime/config.h"
#include "runtime/log.h"
#include "runtime/thread_pool.h"
#include "test_support/check.h"
#include "test_support/files.h"
#include "test_support/make.h"

#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

namespace kiln {
namespace {

namespace fs = std::filesystem;
using rt::decode_cache_entry;
using rt::DiskCache;
using rt::encode_cache_entry;

using test::make_temp_dir;
using test::read_file;
using test::write_file;

std::string temp_dir(const std::string& stem) { return make_temp_dir(stem); }

// Captures warnings and log lines while alive.
struct Captured {
  std::string text;
  Captured() {
    rt::set_log_sink_for_testing([this](std::string_view line) { text += line; });
  }
  ~Captured() { rt::set_log_sink_for_testing({}); }
};

// Sets environment variables for one test and restores the configuration afterwards.
struct Env {
  std::map<std::string, std::optional<std::string>> saved;
  void set(const std::string& k, const std::string& v) {
    if (!saved.count(k)) {
      const char* old = std::getenv(k.c_str());
      saved[k] = old ? std::optional<std::string>(old) : std::nullopt;
    }
    ::setenv(k.c_str(), v.c_str(), 1);
    rt::reload_config_for_testing();
  }
  ~Env() {
    for (const auto& [k, v] : saved) v ? ::setenv(k.c_str(), v->c_str(), 1) : ::unsetenv(k.c_str());
    rt::reload_config_for_testing();
  }
};

const std::string kKey(64, 'a');

TEST(CacheEntry, RoundTripsAndRejectsEveryDamage) {
  const std::string obj = "\x7f" "ELF object code \x00\x01\x02 with bytes";
  const std::string e = encode_cache_entry(kKey, obj);
  std::string why;
  ASSERT_EQ(decode_cache_entry(e, kKey, &why), obj) << why;
  EXPECT_FALSE(decode_cache_entry(e, std::string(64, 'b'), &why));
  EXPECT_NE(why.find("another key"), std::string::npos) << why;
  for (size_t n : {size_t{0}, size_t{5}, size_t{12}, size_t{40}, e.size() - 1}) {
    EXPECT_FALSE(decode_cache_entry(e.substr(0, n), kKey, &why)) << "truncated to " << n;
  }
  std::string flipped = e;
  flipped.back() ^= 0x20;
  EXPECT_FALSE(decode_cache_entry(flipped, kKey, &why));
  EXPECT_EQ(why, "checksum mismatch");
  std::string version = e;
  version[8] = 7;  // the format version follows the 8-byte magic
  EXPECT_FALSE(decode_cache_entry(version, kKey, &why));
  EXPECT_NE(why.find("entry format 7"), std::string::npos) << why;
  EXPECT_FALSE(decode_cache_entry("#!/bin/sh\necho hi\n", kKey, &why));
  EXPECT_EQ(why, "not a kiln cache entry");
  EXPECT_FALSE(decode_cache_entry(e + "trailing", kKey, &why));
}

TEST(DiskCache, CreatesAPrivateDirectoryAndRoundTrips) {
  const std::string root = temp_dir("kiln-disk");
  const std::string dir = root + "/nested/cache";
  DiskCache d(dir, 1 << 20);
  ASSERT_TRUE(d.usable());
  struct stat st {};
  ASSERT_EQ(::stat(dir.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  EXPECT_FALSE(d.load(kKey));
  d.save(kKey, "object bytes");
  EXPECT_EQ(d.load(kKey), "object bytes");
  ASSERT_EQ(::stat(d.path_of(kKey).c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  // No temporary file is left behind.
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator{}), 1);
  fs::remove_all(root);
}

TEST(DiskCache, DamagedEntriesAreIgnoredLoggedAndRemoved) {
  const std::string dir = temp_dir("kiln-disk");
  DiskCache d(dir, 1 << 20);
  Env env;
  env.set("KILN_LOG", "cache");
  const std::string path = d.path_of(kKey);
  auto damaged = [&](const std::string& bytes, const std::string& reason) {
    write_file(path, bytes);
    Captured log;
    EXPECT_FALSE(d.load(kKey)) << reason;
    EXPECT_NE(log.text.find("ignored (" + reason), std::string::npos) << log.text;
    EXPECT_FALSE(fs::exists(path)) << reason;
  };
  const std::string good = encode_cache_entry(kKey, "object bytes");
  damaged(good.substr(0, good.size() - 3), "9 bytes of object code where the header says 12");
  std::string corrupt = good;
  corrupt[corrupt.size() - 4] ^= 1;
  damaged(corrupt, "checksum mismatch");
  std::string version = good;
  version[8] = 9;
  damaged(version, "entry format 9");
  damaged(encode_cache_entry(std::string(64, 'c'), "object bytes"), "saved under another key");
  damaged("", "not a kiln cache entry");
  fs::remove_all(dir);
}

TEST(DiskCache, EntriesOfAnotherUserAndUnsafeDirectoriesAreRefused) {
  if (::geteuid() != 0) GTEST_SKIP() << "changing file owners needs root";
  const uid_t other = 54321;
  {  // an entry owned by someone else is never read
    const std::string dir = temp_dir("kiln-disk");
    DiskCache d(dir, 1 << 20);
    d.save(kKey, "object bytes");
    ASSERT_EQ(::chown(d.path_of(kKey).c_str(), other, other), 0);
    EXPECT_FALSE(d.load(kKey));
    fs::remove_all(dir);
  }
  {  // a directory owned by someone else
    const std::string dir = temp_dir("kiln-disk");
    ASSERT_EQ(::chown(dir.c_str(), other, other), 0);
    Captured log;
    DiskCache d(dir, 1 << 20);
    EXPECT_FALSE(d.usable());
    EXPECT_NE(log.text.find("is owned by uid 54321"), std::string::npos) << log.text;
    d.save(kKey, "x");  // a refused cache neither writes nor reads
    EXPECT_FALSE(fs::exists(d.path_of(kKey)));
    fs::remove_all(dir);
  }
  {  // a directory others can write to
    const std::string dir = temp_dir("kiln-disk");
    ASSERT_EQ(::chmod(dir.c_str(), 0777), 0);
    Captured log;
    DiskCache d(dir, 1 << 20);
    EXPECT_FALSE(d.usable());
    EXPECT_NE(log.text.find("others can write"), std::string::npos) << log.text;
    fs::remove_all(dir);
  }
}

TEST(DiskCache, EvictsTheLeastRecentlyUsedPastTheBound) {
  const std::string dir = temp_dir("kiln-disk");
  const std::string object(1000, 'x');
  const int64_t entry = static_cast<int64_t>(encode_cache_entry(kKey, object).size());
  DiskCache d(dir, 3 * entry);
  auto key = [](int i) { return std::string(63, 'k') + std::to_string(i); };
  auto age = [&](int i, int seconds_ago) {
    const auto t = fs::file_time_type::clock::now() - std::chrono::seconds(seconds_ago);
    fs::last_write_time(d.path_of(key(i)), t);
  };
  for (int i = 0; i < 3; ++i) {
    d.save(key(i), object);
    age(i, 100 - i * 10);  // 0 is the oldest
  }
  ASSERT_EQ(d.load(key(0)), object);  // a hit makes 0 the most recently used
  d.save(key(3), object);             // one entry over: 1, now the oldest, goes
  EXPECT_TRUE(fs::exists(d.path_of(key(0))));
  EXPECT_FALSE(fs::exists(d.path_of(key(1))));
  EXPECT_TRUE(fs::exists(d.path_of(key(2))));
  EXPECT_TRUE(fs::exists(d.path_of(key(3))));
  fs::remove_all(dir);
}

TEST(DiskCache, TemporaryFilesOfKilledWritersAreCollected) {
  const std::string dir = temp_dir("kiln-disk");
  DiskCache d(dir, 1 << 20);
  const std::string old_tmp = dir + "/.tmp-1-2-killed", new_tmp = dir + "/.tmp-3-4-writing";
  write_file(old_tmp, "half an entry");
  write_file(new_tmp, "being written");
  fs::last_write_time(old_tmp, fs::file_time_type::clock::now() - std::chrono::hours(2));
  d.save(kKey, "object bytes");  // every save sweeps
  EXPECT_FALSE(fs::exists(old_tmp));
  EXPECT_TRUE(fs::exists(new_tmp));  // may still be renamed by its writer
  EXPECT_EQ(d.load(kKey), "object bytes");
  fs::remove_all(dir);
}

// ---- module keys ----

const char* kKernel =
    "kernel k0(in0: f32, out0: out f32) grid[p0 < 8] {\n"
    "  loop [] {\n"
    "    %0 = load in0[p0] : f32\n"
    "    %1 = const 2 : f32\n"
    "    %2 = mul %0, %1 : f32\n"
    "    store out0[p0], %2\n"
    "  }\n"
    "}\n";

std::string key_of(const std::vector<std::string>& texts) {
  std::vector<ir::Kernel> ks;
  for (const std::string& t : texts) ks.push_back(ir::parse_kernel(t));
  std::vector<const ir::Kernel*> ptrs;
  for (const ir::Kernel& k : ks) ptrs.push_back(&k);
  return cpu::module_key(ptrs);
}

std::string replaced(std::string s, const std::string& from, const std::string& to) {
  const size_t at = s.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return s.replace(at, from.size(), to);
}

TEST(ModuleKey, KernelNamesDoNotCountEveryOtherFieldDoes) {
  const std::string base = key_of({kKernel});
  EXPECT_EQ(base.size(), 64u);
  EXPECT_EQ(key_of({replaced(kKernel, "k0", "fn7_k3")}), base);
  for (const auto& [from, to] : std::vector<std::pair<std::string, std::string>>{
           {"const 2", "const 3"}, {"p0 < 8", "p0 < 9"}, {"mul", "add"}, {"in0[p0]", "in0[2*p0]"}})
    EXPECT_NE(key_of({replaced(kKernel, from, to)}), base) << from;
  std::string f64 = kKernel;
  for (size_t at; (at = f64.find("f32")) != std::string::npos;) f64.replace(at, 3, "f64");
  EXPECT_NE(key_of({f64}), base);
  // Two kernels: their order is part of the module (kiln_k0, kiln_k1).
  const std::string other = replaced(kKernel, "const 2", "const 5");
  EXPECT_NE(key_of({kKernel, other}), key_of({other, kKernel}));
}

TEST(ModuleKey, TheBuildOfKilnIsIdentifiedByItsBuildIdNote) {
  // kiln links with --build-id (CMakeLists.txt): a rebuilt emitter gets fresh keys.
  const std::string& id = build_id();
  ASSERT_EQ(id.rfind("build-id:", 0), 0u) << id;
  EXPECT_EQ(id.size(), 9u + 40u) << id;  // sha1
  EXPECT_EQ(id.find_first_not_of("0123456789abcdef", 9), std::string::npos) << id;
  EXPECT_EQ(&build_id(), &id);
}

// The code generator is a library of its own (libkiln_llvm); its build-id, read from the file
// without loading it, is in every module key, so a rebuilt generator beside an unchanged
// libkiln is not served the old one's code.
TEST(ModuleKey, TheCodeGeneratorIsIdentifiedByItsFilesBuildId) {
  const std::string& id = cpu::module_compiler_id();
  ASSERT_EQ(id.rfind("llvm-half build-id:", 0), 0u) << id;
  EXPECT_EQ(id.size(), 19u + 40u) << id;
  EXPECT_NE(id.substr(10), build_id()) << "libkiln_llvm's id is its own, not libkiln's";
  EXPECT_EQ(file_build_id("/nonexistent/libx.so"), "");
  const std::string not_elf = temp_dir("kiln-bid") + "/not_elf.so";
  std::ofstream(not_elf) << "not an ELF file";
  EXPECT_EQ(file_build_id(not_elf), "");
}

// ---- through compile() ----

Tensor softmax_fn(const Tensor& x) { return softmax(x * 2, -1); }

TEST(CompileCache, CompileCountsWhereItsCodeCameFrom) {
  const std::string dir = temp_dir("kiln-cc");
  Env env;
  env.set("KILN_CACHE_DIR", dir);
  const Tensor x = test::mk<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  auto f1 = compile(softmax_fn);
  const Tensor r1 = f1(x);
  EXPECT_EQ(f1.stats().compiles, 1);
  // The same function compiled again in this process links the same module.
  auto f2 = compile(softmax_fn);
  f2(x);
  EXPECT_EQ(f2.stats().code_from_memory, 1);
  // As if in a new process: the module comes from disk, with the same results.
  cpu::forget_linked_modules_for_testing();
  auto f3 = compile(softmax_fn);
  const Tensor r3 = f3(x);
  EXPECT_EQ(f3.stats().code_from_disk, 1);
  EXPECT_TRUE(equal(r3, r1));
  // A damaged entry is rebuilt: every entry of the directory corrupted, then compiled again.
  for (const auto& e : fs::directory_iterator(dir)) {
    std::string bytes = read_file(e.path());
    bytes[bytes.size() / 2] ^= 0x55;
    write_file(e.path(), bytes);
  }
  cpu::forget_linked_modules_for_testing();
  auto f4 = compile(softmax_fn);
  EXPECT_TRUE(equal(f4(x), r1));
  EXPECT_EQ(f4.stats().code_from_disk, 0);
  cpu::forget_linked_modules_for_testing();
  auto f5 = compile(softmax_fn);
  f5(x);
  EXPECT_EQ(f5.stats().code_from_disk, 1);  // the rebuilt entry
  // KILN_DISABLE_CACHE: compiled every time, nothing read.
  env.set("KILN_DISABLE_CACHE", "1");
  auto f6 = compile(softmax_fn);
  f6(x);
  EXPECT_EQ(f6.stats().code_from_disk + f6.stats().code_from_memory, 0);
  fs::remove_all(dir);
}

// Eight kernels of different text (four of them twice): the plan compiles as modules on two
// threads at once, linked together, and identical kernels once. The parts travel as one disk
// entry (codegen_cpu/object_bundle.h) and link again from it whole.
TEST(CompileCache, AModuleCompiledInPartsIsOneEntryAndIdenticalKernelsOneFunction) {
  // The inputs first: an eager randn is a kernel of its own, which must not count here.
  const Tensor x = randn({30, 40}), y = randn({30, 40});
  const std::string dir = temp_dir("kiln-parts");
  Env env;
  env.set("KILN_CACHE_DIR", dir);
  struct Threads {
    int old = rt::num_threads();
    Threads() { rt::set_num_threads(2); }
    ~Threads() { rt::set_num_threads(old); }
  } two;
  auto fn = [](const Tensor& x, const Tensor& y) {
    return std::make_tuple(x.sum({0}), y.sum({0}), x.amax({1}), y.amax({1}), softmax(x, 1), softmax(y, 1), x.exp().sum({1}),
                           x.var({0}), (x * y).amin({0}), y.abs().mean({1}), x.sin() + y, x.cos() * y);
  };
  CompileOptions ref_opts;
  ref_opts.backend = "interpreter";
  const auto want = compile(fn, ref_opts)(x, y);
  auto check = [&](const auto& got) {
    [&]<size_t... I>(std::index_sequence<I...>) {
      (test::expect_close(std::get<I>(got), test::doubles(std::get<I>(want)), 1e-5, 1e-5), ...);
    }(std::make_index_sequence<12>{});
  };
  auto f1 = compile(fn);
  check(f1(x, y));
  EXPECT_EQ(f1.stats().compiles, 1);
  const std::string code = f1.explain(x, y);
  EXPECT_NE(code.find("; ---- module part 2 of 2 ----"), std::string::npos) << code;
  auto count = [&](const std::string& what) {
    size_t n = 0;
    for (size_t at = code.find(what); at != std::string::npos; at = code.find(what, at + 1)) ++n;
    return n;
  };
  const size_t kernels = count("out0: out "), defines = count("define void @kiln_k");  // one out0 per kernel header
  EXPECT_LT(defines, kernels) << "identical kernels (x.sum(0), y.sum(0), ...) are one function each";
  EXPECT_GE(defines, 4u);
  size_t entries = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir)) ++entries;
  EXPECT_EQ(entries, 1u);
  cpu::forget_linked_modules_for_testing();
  auto f2 = compile(fn);
  check(f2(x, y));
  EXPECT_EQ(f2.stats().code_from_disk, 1);
  fs::remove_all(dir);
}

// ---- fresh processes ----

struct ProbeLine {
  std::string code, sum;
};

// Starts kiln_cache_probe with `env` prefixed; returns the stream to read its output from.
FILE* start_probe(const std::string& env, const std::string& args) {
  const std::string cmd = env + " '" KILN_CACHE_PROBE "' " + args + " 2>&1";
  return ::popen(cmd.c_str(), "r");
}
std::map<std::string, ProbeLine> finish_probe(FILE* p) {
  std::map<std::string, ProbeLine> out;
  char buf[512];
  std::string all;
  while (std::fgets(buf, sizeof buf, p)) {
    all += buf;
    std::istringstream ls(buf);
    std::string name, code, first_ms, second_ms, sum;
    ls >> name >> code >> first_ms >> second_ms >> sum;
    if (code.rfind("code=", 0) == 0) out[name] = {code.substr(5), sum};
    if (name == "llvm" && code.rfind("compiler_started=", 0) == 0) out[name] = {code.substr(17), ""};
  }
  EXPECT_EQ(::pclose(p), 0) << all;
  return out;
}
std::map<std::string, ProbeLine> run_probe(const std::string& env, const std::string& args) {
  return finish_probe(start_probe(env, args));
}

TEST(CompileCacheProcesses, ASecondProcessLoadsFromDisk) {
  const std::string dir = temp_dir("kiln-proc");
  const std::string env = "KILN_CACHE_DIR='" + dir + "'";
  auto first = run_probe(env, "softmax mlp chain20");
  auto second = run_probe(env, "softmax mlp chain20");
  ASSERT_EQ(first.size(), 4u);
  ASSERT_EQ(second.size(), 4u);
  // The second process never loads LLVM: its kernels, the probe's eager checksums' included,
  // are all linked from disk by kiln's own loader (libkiln does not link libLLVM).
  EXPECT_EQ(first["llvm"].code, "1");
  EXPECT_EQ(second["llvm"].code, "0");
  first.erase("llvm");
  for (const auto& [name, line] : first) {
    // The MLP is two library calls with their bias and relu (no kernel to compile or load).
    const bool calls_only = name == "mlp";
    EXPECT_EQ(line.code, calls_only ? "none" : "compiled") << name;
    EXPECT_EQ(second[name].code, calls_only ? "none" : "disk") << name;
    EXPECT_EQ(second[name].sum, line.sum) << name;
  }
  fs::remove_all(dir);
}

TEST(CompileCacheProcesses, TwoProcessesShareOneDirectoryAtOnce) {
  const std::string dir = temp_dir("kiln-proc");
  const std::string env = "KILN_CACHE_DIR='" + dir + "'";
  FILE* a = start_probe(env, "softmax mlp chain20 eager10");
  FILE* b = start_probe(env, "softmax mlp chain20 eager10");
  auto ra = finish_probe(a), rb = finish_probe(b);
  ASSERT_EQ(ra.size(), 5u);  // four workloads and the llvm line
  ASSERT_EQ(rb.size(), 5u);
  for (const auto& [name, line] : ra) EXPECT_EQ(rb[name].sum, line.sum) << name;
  // Every entry is whole, and a third process compiles nothing.
  int entries = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    ASSERT_EQ(e.path().extension(), ".kobj") << e.path();  // no temporary file left
    const std::string key = e.path().stem().string();
    std::string why;
    EXPECT_TRUE(decode_cache_entry(read_file(e.path()), key, &why)) << e.path() << ": " << why;
    ++entries;
  }
  EXPECT_GE(entries, 4);
  auto third = run_probe(env, "softmax mlp chain20");
  EXPECT_EQ(third["llvm"].code, "0");
  third.erase("llvm");
  for (const auto& [name, line] : third) {
    EXPECT_EQ(line.code, name == "mlp" ? "none" : "disk") << name;
    EXPECT_EQ(line.sum, ra[name].sum) << name;
  }
  fs::remove_all(dir);
}

// A process whose cubins would all be on disk never loads NVRTC just to key them: the disk
// cache remembers NVRTC's version by the loader's candidate files (runtime/cuda/cubin_key.h).
TEST(CompileCacheProcesses, CubinKeysNeedNoNvrtcOnceItsVersionIsRecorded) {
  if (std::string why; !cuda::nvrtc_available(&why)) GTEST_SKIP() << why;
  const std::string dir = temp_dir("kiln-nvrtc");
  const auto probe = [&](const std::string& env, const char* mode = "cubin_key") {
    FILE* p = start_probe(env, mode);
    std::string all, key, loaded;
    char buf[512];
    while (std::fgets(buf, sizeof buf, p)) {
      all += buf;
      std::istringstream ls(buf);
      std::string name, k, l;
      ls >> name >> k >> l;
      if (name == "cubin_key") key = k.substr(4), loaded = l.substr(13);
    }
    EXPECT_EQ(::pclose(p), 0) << all;
    EXPECT_EQ(key.size(), 64u) << all;
    return std::make_pair(key, loaded);
  };
  const std::string env = "KILN_CACHE_DIR='" + dir + "'";
  const auto first = probe(env), second = probe(env);
  EXPECT_EQ(first.second, "1");   // no record yet: NVRTC is loaded, and its version recorded
  EXPECT_EQ(second.second, "0");  // from the record
  EXPECT_EQ(second.first, first.first);
  // Another LD_LIBRARY_PATH may name another NVRTC: loaded again, recorded apart.
  const std::string other = temp_dir("kiln-nvrtc-lib");
  EXPECT_EQ(probe(env + " LD_LIBRARY_PATH='" + other + "'").second, "1");
  EXPECT_EQ(probe(env + " LD_LIBRARY_PATH='" + other + "'").second, "0");
  // Without a cache the version comes from NVRTC itself, and the key is the same.
  const auto uncached = probe("KILN_DISABLE_CACHE=1");
  EXPECT_EQ(uncached.second, "1");
  EXPECT_EQ(uncached.first, first.first);
  // A damaged record is ignored: NVRTC is loaded and the record written again.
  for (const auto& e : fs::directory_iterator(dir)) {
    std::ofstream(e.path(), std::ios::binary | std::ios::trunc) << "not a cache entry";
  }
  EXPECT_EQ(probe(env), first);
  EXPECT_EQ(probe(env), second);
  // A record whose version is not the NVRTC's (another copy loaded first by some library) is
  // trusted by lookups, but a compilation confirms the version it keys with and rewrites it.
  rt::DiskCache disk(dir, int64_t{1} << 30);
  int forged_records = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string key = e.path().stem().string();
    const std::optional<std::string> record = disk.load(key);
    if (!record) continue;  // the other LD_LIBRARY_PATH's record, still damaged
    disk.save(key, "99.9" + record->substr(record->find('\n')));
    ++forged_records;
  }
  ASSERT_EQ(forged_records, 1);
  const auto forged = probe(env);
  EXPECT_EQ(forged.second, "0");
  EXPECT_NE(forged.first, first.first);
  EXPECT_EQ(probe(env, "cubin_confirm").first, first.first);
  EXPECT_EQ(probe(env), second);  // the record is right again
  fs::remove_all(dir);
  fs::remove_all(other);
}

}  // namespace
}  // namespace kiln
