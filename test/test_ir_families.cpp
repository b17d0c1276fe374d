// kiln/test/test_ir_families.cpp — one family name finds every piece of an op.
//
// ir/ops.def puts each op in a family (ir/op.cpp family_name: "index", "softmax", "pool", ...).
// Every layer names its files after the family, so that one name finds an op's frontend
// function, decomposition, shape function, reference kernel and test entries
// (docs/adding_an_op.md):
//
//   frontend/ops_<family>[_*].cpp                   every family
//   frontend/decompositions_<family>.cpp, or a frontend/ops_<family>*.cpp holding
//     `namespace decomp`                            families with an op above Prim
//   ir/shape_fns_<family>.cpp                       families with an op not shaped by its
//                                                   decomposition (ShapeByDecomposition)
//   runtime/interpreter/interp_<family>.cpp         families with a Prim
//   test/test_support/opdb_<family>.cpp             every family
//
// and, the other way, every file with one of those prefixes is named after a family (or is one
// of the prefix's helpers: decompositions_detail, shape_fns_detail, interp_kernels,
// interp_math, opdb_models, extern_table/kernels/lines). A failure names the checklist.
#include "ir/op.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace kiln {
namespace {

namespace fs = std::filesystem;

const fs::path& root() {
  static const fs::path r = fs::path(KILN_TEST_DATA_DIR).parent_path();
  return r;
}

const char* const kChecklist = " (the checklist for an op's files: docs/adding_an_op.md)";

struct FamilyFacts {
  bool above_prim = false;    // an op with a decomposition
  bool has_prim = false;      // an op with a reference kernel
  bool shape_function = false;  // an op whose family shape function types it
};

std::map<std::string, FamilyFacts> families() {
  std::map<std::string, FamilyFacts> out;
  for (int k = 0; k < ir::kNumOps; ++k) {
    const ir::OpInfo& info = ir::op_info(static_cast<ir::OpKind>(k));
    FamilyFacts& f = out[std::string(ir::family_name(info.family))];
    f.above_prim |= info.level != ir::OpLevel::Prim;
    f.has_prim |= info.level == ir::OpLevel::Prim;
  }
  // Pool, Resample, Attention, Dropout and Rearrange have no shape function: infer_types shapes
  // each of their ops by its decomposition (ir/shape_fns_detail.h); ShapeByDecomposition marks
  // the other families' ops that are.
  for (int k = 0; k < ir::kNumOps; ++k) {
    const ir::OpInfo& info = ir::op_info(static_cast<ir::OpKind>(k));
    const ir::OpFamily fam = info.family;
    const bool decomposition_shaped = fam == ir::OpFamily::Pool || fam == ir::OpFamily::Resample ||
                                      fam == ir::OpFamily::Attention || fam == ir::OpFamily::Dropout ||
                                      fam == ir::OpFamily::Rearrange ||
                                      info.has(ir::traits::ShapeByDecomposition);
    if (!decomposition_shaped) out[std::string(ir::family_name(fam))].shape_function = true;
  }
  return out;
}

// The file names (no folder) in `dir` starting with `prefix` and ending with `ext`.
std::vector<std::string> files(const std::string& dir, const std::string& prefix, const std::string& ext) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(root() / dir)) {
    const std::string n = e.path().filename().string();
    if (n.rfind(prefix, 0) == 0 && n.size() > ext.size() && n.compare(n.size() - ext.size(), ext.size(), ext) == 0)
      out.push_back(n);
  }
  return out;
}

// The family a file is named after: the longest family name f with stem == f or stem starting
// with f + "_" ("index_scatter" -> "index").
std::string family_of(const std::string& stem, const std::map<std::string, FamilyFacts>& fams) {
  std::string best;
  for (const auto& [f, _] : fams)
    if ((stem == f || stem.rfind(f + "_", 0) == 0) && f.size() > best.size()) best = f;
  return best;
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(OpFamilies, EveryFamilyHasItsFileInEveryLayer) {
  const auto fams = families();
  ASSERT_GE(fams.size(), 25u);
  auto stems = [&](const std::string& dir, const std::string& prefix) {
    std::set<std::string> out;
    for (const std::string& n : files(dir, prefix, ".cpp")) out.insert(n.substr(prefix.size(), n.size() - prefix.size() - 4));
    return out;
  };
  const std::set<std::string> ops = stems("frontend", "ops_"), decomps = stems("frontend", "decompositions_"),
                              shapes = stems("ir", "shape_fns_"), interps = stems("runtime/interpreter", "interp_"),
                              opdb = stems("test/test_support", "opdb_");
  for (const auto& [f, facts] : fams) {
    if (f == "custom") continue;  // user ops: frontend/custom_op.cpp, ir/custom_ops.cpp
    SCOPED_TRACE("family " + f + kChecklist);
    std::vector<std::string> frontend;
    for (const std::string& s : ops)
      if (family_of(s, fams) == f) frontend.push_back(s);
    EXPECT_FALSE(frontend.empty()) << "no frontend/ops_" << f << ".cpp";
    if (facts.above_prim) {
      bool found = decomps.count(f) > 0;
      for (const std::string& s : frontend)
        found = found || slurp(root() / "frontend" / ("ops_" + s + ".cpp")).find("namespace decomp {") != std::string::npos;
      EXPECT_TRUE(found) << "no frontend/decompositions_" << f << ".cpp (or decompositions in frontend/ops_" << f
                         << "*.cpp)";
    }
    if (facts.shape_function) {
      EXPECT_TRUE(shapes.count(f)) << "no ir/shape_fns_" << f << ".cpp";
    }
    if (facts.has_prim) {
      EXPECT_TRUE(interps.count(f)) << "no runtime/interpreter/interp_" << f << ".cpp";
    }
    EXPECT_TRUE(opdb.count(f)) << "no test/test_support/opdb_" << f << ".cpp";
  }
}

TEST(OpFamilies, EveryFamilyFileIsNamedAfterAFamily) {
  const auto fams = families();
  const std::vector<std::tuple<std::string, std::string, std::set<std::string>>> layers = {
      {"frontend", "ops_", {}},
      {"frontend", "decompositions_", {"detail"}},
      {"ir", "shape_fns_", {"detail"}},
      {"runtime/interpreter", "interp_", {"kernels", "math"}},
      {"runtime/cpu", "extern_", {"table", "kernels", "lines"}},
      {"test/test_support", "opdb_", {"models"}},
  };
  for (const auto& [dir, prefix, helpers] : layers) {
    for (const std::string& ext : {std::string(".cpp"), std::string(".h")}) {
      for (const std::string& n : files(dir, prefix, ext)) {
        const std::string stem = n.substr(prefix.size(), n.size() - prefix.size() - ext.size());
        EXPECT_TRUE(helpers.count(stem) || !family_of(stem, fams).empty())
            << dir << "/" << n << " is not named after an op family" << kChecklist;
      }
    }
  }
}

// The three ops the architecture page follows: every piece found by the family name alone.
TEST(OpFamilies, GatherSoftmaxMaxPoolAreFoundByTheirFamily) {
  struct Piece {
    ir::OpKind op;
    std::vector<std::string> files;
  };
  const std::vector<Piece> pieces = {
      {ir::OpKind::gather,
       {"frontend/ops_index_scatter.cpp", "ir/shape_fns_index.cpp", "runtime/interpreter/interp_index.cpp",
        "runtime/cpu/extern_index.cpp", "test/test_support/opdb_index.cpp"}},
      {ir::OpKind::softmax,
       {"frontend/ops_softmax.cpp", "frontend/decompositions_softmax.cpp", "ir/shape_fns_softmax.cpp",
        "test/test_support/opdb_softmax.cpp"}},
      {ir::OpKind::max_pool2d_with_indices, {"frontend/ops_pool.cpp", "test/test_support/opdb_pool.cpp"}},
  };
  for (const Piece& p : pieces) {
    const std::string name(ir::op_name(p.op));
    const std::string fam(ir::family_name(ir::op_info(p.op).family));
    for (const std::string& f : p.files) {
      EXPECT_NE(f.find(fam), std::string::npos) << f << " for " << name;
      EXPECT_NE(slurp(root() / f).find(fam == "pool" ? "max_pool2d" : name), std::string::npos)
          << name << " is not in " << f << kChecklist;
    }
  }
}

}  // namespace
}  // namespace kiln
