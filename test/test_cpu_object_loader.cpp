// kiln/test/test_cpu_object_loader.cpp — kiln's own linker for LLVM's object code
// (codegen_cpu/object_loader.h).
//
// Modules are built by hand, compiled to objects with the JIT's target machine and loaded
// without LLVM: calls into libm through a stub, constants and jump tables read PC-relative,
// a table of function pointers (absolute relocations), calls between two objects; then what
// must be refused with a message: an undefined symbol, a name no object defines, another
// machine, and every truncation and many damaged bytes of a real object (refused or loaded,
// never a crash; the loaded code is not run).
#include "codegen_cpu/jit.h"
#include "codegen_cpu/object_loader.h"

#include <gtest/gtest.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

#include <elf.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

namespace kiln::cpu {
namespace {

struct Mod {
  llvm::LLVMContext ctx;
  std::unique_ptr<llvm::Module> m;
  llvm::IRBuilder<> b{ctx};
  Mod() {
    m = std::make_unique<llvm::Module>("loader_test", ctx);
    m->setDataLayout(Jit::instance().data_layout());
    m->setTargetTriple(Jit::instance().target_triple());
  }
  llvm::Function* fn(const std::string& name, llvm::Type* ret, std::vector<llvm::Type*> params,
                     llvm::GlobalValue::LinkageTypes linkage = llvm::Function::ExternalLinkage) {
    auto* f = llvm::Function::Create(llvm::FunctionType::get(ret, params, false), linkage, name, *m);
    b.SetInsertPoint(llvm::BasicBlock::Create(ctx, "entry", f));
    return f;
  }
  std::string object() {
    Jit::instance().optimize(*m, false, nullptr, nullptr);
    return Jit::instance().emit_object(*m, false, nullptr);
  }
};

// double f(double x) { return cos(x) * 2; } — cos through a stub (libm).
std::string libm_object() {
  Mod md;
  llvm::Type* d = md.b.getDoubleTy();
  llvm::Function* f = md.fn("loader_cos", d, {d});
  llvm::FunctionCallee cosf = md.m->getOrInsertFunction("cos", llvm::FunctionType::get(d, {d}, false));
  llvm::Value* c = md.b.CreateCall(cosf, {f->getArg(0)});
  md.b.CreateRet(md.b.CreateFMul(c, llvm::ConstantFP::get(d, 2.0)));
  return md.object();
}

// int64 pick(int64 i): a switch over 8 cases (a jump table) of values from a constant array.
std::string table_object() {
  Mod md;
  llvm::Type* i64 = md.b.getInt64Ty();
  std::vector<llvm::Constant*> vals;
  for (int i = 0; i < 16; ++i) vals.push_back(md.b.getInt64(static_cast<uint64_t>(i * i * 7 + 3)));
  auto* at = llvm::ArrayType::get(i64, 16);
  auto* table = new llvm::GlobalVariable(*md.m, at, true, llvm::GlobalValue::InternalLinkage, llvm::ConstantArray::get(at, vals), "squares");
  llvm::Function* f = md.fn("loader_pick", i64, {i64});
  llvm::BasicBlock* dflt = llvm::BasicBlock::Create(md.ctx, "dflt", f);
  llvm::SwitchInst* sw = md.b.CreateSwitch(f->getArg(0), dflt, 8);
  for (int c = 0; c < 8; ++c) {
    llvm::BasicBlock* bb = llvm::BasicBlock::Create(md.ctx, "case", f);
    sw->addCase(md.b.getInt64(static_cast<uint64_t>(c)), bb);
    md.b.SetInsertPoint(bb);
    llvm::Value* p = md.b.CreateGEP(at, table, {md.b.getInt64(0), md.b.getInt64(static_cast<uint64_t>((c * 5) % 16))});
    md.b.CreateRet(md.b.CreateAdd(md.b.CreateLoad(i64, p), md.b.getInt64(static_cast<uint64_t>(c * 1000))));
  }
  md.b.SetInsertPoint(dflt);
  md.b.CreateRet(md.b.getInt64(static_cast<uint64_t>(-1)));
  return md.object();
}

int64_t pick_reference(int64_t i) { return i >= 0 && i < 8 ? ((i * 5) % 16) * ((i * 5) % 16) * 7 + 3 + i * 1000 : -1; }

// Two objects: `loader_twice` (object a) calls `loader_inc` (object b) through a table of
// function pointers in writable data (an absolute 64-bit relocation) and directly.
std::vector<std::string> two_objects() {
  std::vector<std::string> out;
  {
    Mod md;
    llvm::Type* i64 = md.b.getInt64Ty();
    llvm::Function* inc = llvm::Function::Create(llvm::FunctionType::get(i64, {i64}, false), llvm::Function::ExternalLinkage, "loader_inc", *md.m);
    auto* pt = llvm::ArrayType::get(md.b.getPtrTy(), 1);
    auto* ptrs = new llvm::GlobalVariable(*md.m, pt, false, llvm::GlobalValue::InternalLinkage, llvm::ConstantArray::get(pt, {inc}), "ptrs");
    llvm::Function* f = md.fn("loader_twice", i64, {i64});
    llvm::Value* once = md.b.CreateCall(inc, {f->getArg(0)});
    llvm::Value* fp = md.b.CreateLoad(md.b.getPtrTy(), md.b.CreateGEP(pt, ptrs, {md.b.getInt64(0), md.b.getInt64(0)}), /*isVolatile=*/true);
    md.b.CreateRet(md.b.CreateCall(llvm::FunctionType::get(i64, {i64}, false), fp, {once}));
    out.push_back(md.object());
  }
  {
    Mod md;
    llvm::Type* i64 = md.b.getInt64Ty();
    llvm::Function* f = md.fn("loader_inc", i64, {i64});
    md.b.CreateRet(md.b.CreateAdd(f->getArg(0), md.b.getInt64(1)));
    out.push_back(md.object());
  }
  return out;
}

TEST(ObjectLoader, CallsLibmThroughAStub) {
  const std::string obj = libm_object();
  std::string err;
  std::unique_ptr<LoadedCode> code = load_objects({obj}, {"loader_cos"}, &err);
  ASSERT_TRUE(code) << err;
  auto f = reinterpret_cast<double (*)(double)>(code->addrs().at(0));
  for (double x : {0.0, 0.5, 1.0, 3.0, -2.5}) EXPECT_DOUBLE_EQ(f(x), std::cos(x) * 2.0) << x;
  ASSERT_EQ(code->functions().size(), 1u);
  EXPECT_EQ(code->functions()[0].symbol, "loader_cos");
  EXPECT_EQ(code->functions()[0].address, reinterpret_cast<uint64_t>(code->addrs()[0]));
  EXPECT_GT(code->functions()[0].size, 0u);
}

TEST(ObjectLoader, ReadsConstantsAndJumpTables) {
  const std::string obj = table_object();
  std::string err;
  std::unique_ptr<LoadedCode> code = load_objects({obj}, {"loader_pick"}, &err);
  ASSERT_TRUE(code) << err;
  auto f = reinterpret_cast<int64_t (*)(int64_t)>(code->addrs().at(0));
  for (int64_t i = -2; i < 11; ++i) EXPECT_EQ(f(i), pick_reference(i)) << i;
}

TEST(ObjectLoader, LinksObjectsTogetherAndTablesOfFunctionPointers) {
  const std::vector<std::string> objs = two_objects();
  std::string err;
  std::unique_ptr<LoadedCode> code = load_objects({objs[0], objs[1]}, {"loader_twice", "loader_inc"}, &err);
  ASSERT_TRUE(code) << err;
  auto twice = reinterpret_cast<int64_t (*)(int64_t)>(code->addrs().at(0));
  auto inc = reinterpret_cast<int64_t (*)(int64_t)>(code->addrs().at(1));
  EXPECT_EQ(inc(41), 42);
  EXPECT_EQ(twice(40), 42);
  // Each load is a mapping of its own: loading again gives other addresses, both working.
  std::unique_ptr<LoadedCode> again = load_objects({objs[1], objs[0]}, {"loader_twice"}, &err);
  ASSERT_TRUE(again) << err;
  EXPECT_NE(again->addrs()[0], code->addrs()[0]);
  EXPECT_EQ(reinterpret_cast<int64_t (*)(int64_t)>(again->addrs()[0])(0), 2);
  code.reset();
  EXPECT_EQ(reinterpret_cast<int64_t (*)(int64_t)>(again->addrs()[0])(5), 7);
}

TEST(ObjectLoader, RefusesWhatItCannotLinkWithAMessage) {
  const std::vector<std::string> objs = two_objects();
  std::string err;
  // loader_inc is defined by no object and not by the process.
  EXPECT_FALSE(load_objects({objs[0]}, {"loader_twice"}, &err));
  EXPECT_NE(err.find("loader_inc"), std::string::npos) << err;
  EXPECT_FALSE(load_objects({objs[1]}, {"loader_nowhere"}, &err));
  EXPECT_NE(err.find("define no symbol loader_nowhere"), std::string::npos) << err;
  // Two strong definitions of one name.
  EXPECT_FALSE(load_objects({objs[1], objs[1]}, {"loader_inc"}, &err));
  EXPECT_NE(err.find("defined twice"), std::string::npos) << err;
  // Another machine.
  std::string arm = objs[1];
  const uint16_t aarch64 = EM_AARCH64;
  std::memcpy(arm.data() + offsetof(Elf64_Ehdr, e_machine), &aarch64, 2);
  EXPECT_FALSE(load_objects({arm}, {"loader_inc"}, &err));
  EXPECT_NE(err.find("not x86-64"), std::string::npos) << err;
  EXPECT_FALSE(load_objects({std::string("not an object")}, {}, &err));
  EXPECT_NE(err.find("past the end"), std::string::npos) << err;
}

TEST(ObjectLoader, DamagedObjectsAreRefusedOrLoadedNeverACrash) {
  const std::string obj = table_object();
  std::string err;
  size_t refused = 0;
  for (size_t n = 0; n < obj.size(); ++n)
    if (!load_objects({std::string_view(obj).substr(0, n)}, {"loader_pick"}, &err)) ++refused;
  // Every truncation loses the section headers at the end of the file (or part of them).
  EXPECT_EQ(refused, obj.size());
  uint64_t state = 12345;
  for (int i = 0; i < 3000; ++i) {
    std::string bad = obj;
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    bad[(state >> 33) % bad.size()] ^= static_cast<char>(1 + (state >> 20) % 255);
    (void)load_objects({bad}, {"loader_pick"}, &err);
  }
}

}  // namespace
}  // namespace kiln::cpu
