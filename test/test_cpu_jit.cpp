// kiln/test/test_cpu_jit.cpp — the process-wide JIT and linking its objects (codegen_cpu/jit.h, linked_code.h).
//
// Builds tiny KernelFn-shaped modules by hand and checks that add_module links them and
// returns working addresses, fills the IR/assembly artifacts and timings on request, reports
// verification and duplicate-symbol failures as kiln::InternalError, and accepts modules from
// several threads at once.
#include "codegen_cpu/jit.h"
#include "codegen_cpu/object_bundle.h"
#include "base/error.h"

#include <gtest/gtest.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace kiln::cpu {
namespace {

std::atomic<int> g_id{0};

struct Built {
  std::unique_ptr<llvm::LLVMContext> ctx;
  std::unique_ptr<llvm::Module> m;
  std::string name;
};

// void name(void* const* args, const int64_t* params, int64_t begin, int64_t end):
//   *(int64_t*)args[0] = params[0] * k + (end - begin)
// With `broken`, the entry block has no terminator (the verifier rejects it).
Built make_module(int64_t k, bool broken = false, std::string name = "") {
  Built r;
  r.ctx = std::make_unique<llvm::LLVMContext>();
  r.m = std::make_unique<llvm::Module>("jit_test", *r.ctx);
  r.m->setDataLayout(Jit::instance().data_layout());
  r.m->setTargetTriple(Jit::instance().target_triple());
  r.name = name.empty() ? "kiln_jit_test_" + std::to_string(g_id++) : name;
  llvm::IRBuilder<> b(*r.ctx);
  llvm::Type* ptr = b.getPtrTy();
  llvm::Type* i64 = b.getInt64Ty();
  auto* f = llvm::Function::Create(llvm::FunctionType::get(b.getVoidTy(), {ptr, ptr, i64, i64}, false),
                                   llvm::Function::ExternalLinkage, r.name, *r.m);
  b.SetInsertPoint(llvm::BasicBlock::Create(*r.ctx, "entry", f));
  llvm::Value* out = b.CreateLoad(ptr, f->getArg(0));
  llvm::Value* p0 = b.CreateLoad(i64, f->getArg(1));
  llvm::Value* v = b.CreateAdd(b.CreateMul(p0, b.getInt64(static_cast<uint64_t>(k))), b.CreateSub(f->getArg(3), f->getArg(2)));
  b.CreateStore(v, out);
  if (!broken) b.CreateRetVoid();
  return r;
}

int64_t call(void* fn, int64_t p0, int64_t begin, int64_t end) {
  int64_t out = 0;
  void* args[] = {&out};
  reinterpret_cast<KernelFn>(fn)(args, &p0, begin, end);
  return out;
}

TEST(CpuJit, LinksAndRuns) {
  Built a = make_module(3);
  const std::string name = a.name;
  JitTimings tm;
  JitArtifacts art;
  std::shared_ptr<const LinkedCode> code =
      Jit::instance().add_module(std::move(a.m), std::move(a.ctx), {name}, true, true, &art, &tm);
  ASSERT_EQ(code->addrs().size(), 1u);
  EXPECT_EQ(call(code->addrs()[0], 5, 10, 17), 5 * 3 + 7);
  EXPECT_NE(art.llvm_ir.find("define void @" + name), std::string::npos) << art.llvm_ir;
  EXPECT_NE(art.assembly.find(name + ":"), std::string::npos) << art.assembly;
  EXPECT_GT(tm.optimize_ms, 0.0);
  EXPECT_GT(tm.codegen_ms, 0.0);
  std::printf("[ perf ] tiny kernel: optimize %.2f ms, codegen+link %.2f ms (with asm)\n", tm.optimize_ms, tm.codegen_ms);
}

TEST(CpuJit, NoArtifactsUnlessAsked) {
  Built a = make_module(1);
  const std::string name = a.name;
  JitArtifacts art;
  Jit::instance().add_module(std::move(a.m), std::move(a.ctx), {name}, false, false, &art, nullptr);
  EXPECT_TRUE(art.llvm_ir.empty());
  EXPECT_TRUE(art.assembly.empty());
}

TEST(CpuJit, VerificationFailureIsInternalError) {
  Built a = make_module(1, /*broken=*/true);
  const std::string name = a.name;
  try {
    Jit::instance().add_module(std::move(a.m), std::move(a.ctx), {name}, false, false, nullptr, nullptr);
    FAIL() << "expected InternalError";
  } catch (const InternalError& e) {
    EXPECT_NE(std::string(e.what()).find("does not verify"), std::string::npos) << e.what();
  }
}

TEST(CpuJit, EachModuleHasItsOwnSymbols) {
  // Modules link into mappings of their own: the same name in two modules is two functions.
  Built a = make_module(1, false, "kiln_jit_test_same_name");
  Built b = make_module(2, false, "kiln_jit_test_same_name");
  std::shared_ptr<const LinkedCode> ca = Jit::instance().add_module(std::move(a.m), std::move(a.ctx),
                                                                    {"kiln_jit_test_same_name"}, false, false, nullptr, nullptr);
  std::shared_ptr<const LinkedCode> cb = Jit::instance().add_module(std::move(b.m), std::move(b.ctx),
                                                                    {"kiln_jit_test_same_name"}, false, false, nullptr, nullptr);
  void* fa = ca->addrs().at(0);
  void* fb = cb->addrs().at(0);
  EXPECT_NE(fa, fb);
  EXPECT_EQ(call(fa, 1, 0, 0), 1);
  EXPECT_EQ(call(fb, 1, 0, 0), 2);
}

TEST(CpuJit, ObjectCodeLinksAgainWithoutLlvmPasses) {
  // What the persistent cache relies on: emitted object code linked later (as in another
  // process) runs the same, and the same module always emits the same bytes.
  Built a = make_module(4, false, "kiln_jit_test_object");
  Built b = make_module(4, false, "kiln_jit_test_object");
  const std::string name = a.name;
  Jit& jit = Jit::instance();
  jit.optimize(*a.m, false, nullptr, nullptr);
  jit.optimize(*b.m, false, nullptr, nullptr);
  const std::string obj = jit.emit_object(*a.m, false, nullptr);
  EXPECT_EQ(jit.emit_object(*b.m, false, nullptr), obj);
  ASSERT_GT(obj.size(), 64u);
  EXPECT_EQ(obj.compare(0, 4, "\x7f" "ELF"), 0);
  std::string error;
  const int64_t live = live_linked_modules();
  std::shared_ptr<const LinkedCode> first = link_objects({obj}, {name}, &error);
  std::shared_ptr<const LinkedCode> second = link_objects({obj}, {name}, &error);
  ASSERT_TRUE(first && second) << error;
  ASSERT_EQ(first->addrs().size(), 1u);
  EXPECT_EQ(call(first->addrs()[0], 5, 10, 17), 5 * 4 + 7);
  EXPECT_EQ(call(second->addrs()[0], 5, 10, 17), 5 * 4 + 7);
  // Each link is its own module, unmapped when its last owner lets go.
  EXPECT_EQ(live_linked_modules(), live + 2);
  first.reset();
  EXPECT_EQ(live_linked_modules(), live + 1);
  EXPECT_EQ(call(second->addrs()[0], 2, 10, 17), 2 * 4 + 7);  // the other one still runs
  second.reset();
  EXPECT_EQ(live_linked_modules(), live);
}

// perf's map file: one "<start> <size> <name>" line (hex) per linked function, named by the
// caller's label; nothing when no labels are given.
TEST(CpuJit, LinkingWithLabelsNamesTheCodeForPerf) {
  Built a = make_module(3, false, "kiln_jit_test_perf");
  Jit& jit = Jit::instance();
  jit.optimize(*a.m, false, nullptr, nullptr);
  const std::string obj = jit.emit_object(*a.m, false, nullptr);
  const std::string map = "/tmp/perf-" + std::to_string(::getpid()) + ".map";
  auto lines_naming = [&](const std::string& label, uintptr_t* start, uintptr_t* size) {
    std::FILE* f = std::fopen(map.c_str(), "r");
    if (!f) return 0;
    int found = 0;
    char name[256];
    unsigned long long s = 0, n = 0;
    while (std::fscanf(f, "%llx %llx %255[^\n]", &s, &n, name) == 3)
      if (label == name) {
        ++found;
        *start = static_cast<uintptr_t>(s);
        *size = static_cast<uintptr_t>(n);
      }
    std::fclose(f);
    return found;
  };
  std::string error;
  const std::string label = "kiln jit test/perf " + std::to_string(g_id++);
  uintptr_t start = 0, size = 0;
  std::shared_ptr<const LinkedCode> plain = link_objects({obj}, {a.name}, &error);
  ASSERT_TRUE(plain) << error;
  EXPECT_EQ(lines_naming(label, &start, &size), 0);
  const std::vector<std::string> labels = {label};
  std::shared_ptr<const LinkedCode> named = link_objects({obj}, {a.name}, &error, &labels);
  ASSERT_TRUE(named) << error;
  ASSERT_EQ(lines_naming(label, &start, &size), 1) << map;
  EXPECT_EQ(start, reinterpret_cast<uintptr_t>(named->addrs()[0]));
  EXPECT_GT(size, 0u);
  EXPECT_LT(size, 4096u);  // the function's own bytes, not its section's
  EXPECT_EQ(call(named->addrs()[0], 2, 0, 5), 2 * 3 + 5);
  std::remove(map.c_str());  // a test leaves no map behind in /tmp
}

// A module compiled in parts: the objects travel as one bundle and link into one mapping;
// a single object is its own bundle; a damaged bundle is refused.
TEST(CpuJit, ObjectsOfOneModuleBundleAndLinkTogether) {
  Built a = make_module(2, false, "kiln_jit_test_part_a");
  Built b = make_module(5, false, "kiln_jit_test_part_b");
  Jit& jit = Jit::instance();
  jit.optimize(*a.m, false, nullptr, nullptr);
  jit.optimize(*b.m, false, nullptr, nullptr);
  const std::vector<std::string> objects = {jit.emit_object(*a.m, false, nullptr), jit.emit_object(*b.m, false, nullptr)};
  EXPECT_EQ(pack_objects({objects[0]}), objects[0]);
  EXPECT_EQ(unpack_objects(objects[0]), (std::vector<std::string_view>{objects[0]}));
  const std::string bundle = pack_objects(objects);
  const std::optional<std::vector<std::string_view>> parts = unpack_objects(bundle);
  ASSERT_TRUE(parts);
  ASSERT_EQ(parts->size(), 2u);
  EXPECT_EQ((*parts)[0], objects[0]);
  EXPECT_EQ((*parts)[1], objects[1]);
  std::string error;
  std::shared_ptr<const LinkedCode> code = link_objects(*parts, {b.name, a.name}, &error);
  ASSERT_TRUE(code) << error;
  EXPECT_EQ(call(code->addrs()[0], 3, 0, 1), 3 * 5 + 1);
  EXPECT_EQ(call(code->addrs()[1], 3, 0, 1), 3 * 2 + 1);
  // Truncated, extended, or with a size past its end: refused.
  EXPECT_FALSE(unpack_objects(bundle.substr(0, bundle.size() - 1)));
  EXPECT_FALSE(unpack_objects(bundle + "x"));
  std::string bad = bundle;
  bad.insert(bad.find('\n', bad.find('\n') + 1) + 1, "9");  // the first size, 10 times larger and more
  EXPECT_FALSE(unpack_objects(bad));
  EXPECT_FALSE(unpack_objects("kiln-objects 1\n1\n3\nabc"));
  EXPECT_FALSE(unpack_objects("kiln-objects 1\n"));
}

TEST(CpuJit, DamagedObjectCodeIsRefusedNotLinked) {
  Built a = make_module(3);
  const std::string name = a.name;
  Jit& jit = Jit::instance();
  jit.optimize(*a.m, false, nullptr, nullptr);
  const std::string obj = jit.emit_object(*a.m, false, nullptr);
  std::string error;
  const int64_t live = live_linked_modules();
  EXPECT_FALSE(link_objects({"not an object file"}, {name}, &error));
  EXPECT_FALSE(error.empty());
  error.clear();
  EXPECT_FALSE(link_objects({obj.substr(0, obj.size() / 2)}, {name}, &error));  // truncated
  EXPECT_FALSE(error.empty());
  error.clear();
  EXPECT_FALSE(link_objects({obj}, {"kiln_no_such_symbol"}, &error));
  EXPECT_NE(error.find("kiln_no_such_symbol"), std::string::npos) << error;
  EXPECT_EQ(live_linked_modules(), live);  // refused code is not left linked
}

TEST(CpuJit, AddModuleFromSeveralThreads) {
  constexpr int kThreads = 4, kPerThread = 6;
  std::vector<int64_t> results(kThreads * kPerThread, -1);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([t, &results] {
      for (int j = 0; j < kPerThread; ++j) {
        const int idx = t * kPerThread + j;
        Built a = make_module(idx);
        const std::string name = a.name;
        std::shared_ptr<const LinkedCode> code =
            Jit::instance().add_module(std::move(a.m), std::move(a.ctx), {name}, false, false, nullptr, nullptr);
        results[static_cast<size_t>(idx)] = call(code->addrs().at(0), 1, 0, 0);
      }
    });
  for (auto& th : threads) th.join();
  for (int i = 0; i < kThreads * kPerThread; ++i) EXPECT_EQ(results[static_cast<size_t>(i)], i);
}

}  // namespace
}  // namespace kiln::cpu
