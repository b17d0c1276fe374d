// kiln/test/test_layering.cpp — the library's folders include each other one way only.
//
// Reads every `#include "folder/..."` of the library folders and checks it against the allowed
// edges of docs/decisions.md ("Layering is tested"): base below everything; ir on base; guards,
// frontend and passes on ir; the code generators on passes; runtime and tools on anything.
// The edges that still break the rule are listed one by one in kKnownExceptions with the
// reason; a new forbidden edge fails naming file and line, and an exception that no longer
// occurs fails too, so the list only shrinks as issue 10 removes them.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

const std::map<std::string, std::set<std::string>>& allowed_edges() {
  static const std::map<std::string, std::set<std::string>> edges = {
      {"base", {}},
      {"ir", {"base"}},
      {"guards", {"ir", "base"}},
      {"frontend", {"ir", "base"}},
      {"passes", {"ir", "base"}},
      {"codegen_cpu", {"passes", "ir", "base"}},
      {"codegen_cuda", {"passes", "ir", "base"}},
      {"runtime", {"base", "ir", "guards", "frontend", "passes", "codegen_cpu", "codegen_cuda"}},
      {"tools", {"base", "ir", "guards", "frontend", "passes", "codegen_cpu", "codegen_cuda", "runtime"}},
  };
  return edges;
}

// "file -> included folder" edges that break the rule today, each with why it is still there.
const std::map<std::string, std::string>& known_exceptions() {
  static const std::map<std::string, std::string> ex = {
      // The umbrella header includes compile() for users.
      {"frontend/kiln.h -> runtime", "the umbrella header exposes kiln::compile"},
  };
  return ex;
}

fs::path source_root() { return fs::path(KILN_TEST_DATA_DIR).parent_path(); }

// The folder of `#include "folder/file"` on this line, or "" (no std::regex: GCC 12 warns
// falsely inside it under -O2 with the sanitizers).
std::string included_folder(const std::string& line) {
  size_t i = line.find_first_not_of(" \t");
  if (i == std::string::npos || line[i] != '#') return "";
  i = line.find_first_not_of(" \t", i + 1);
  if (i == std::string::npos || line.compare(i, 7, "include") != 0) return "";
  i = line.find_first_not_of(" \t", i + 7);
  if (i == std::string::npos || line[i] != '"') return "";
  const size_t slash = line.find('/', i + 1), quote = line.find('"', i + 1);
  if (slash == std::string::npos || quote == std::string::npos || slash > quote) return "";
  return line.substr(i + 1, slash - i - 1);
}

TEST(Layering, IncludesPointOneWay) {
  std::set<std::string> seen_exceptions;
  int files = 0;
  for (const auto& [folder, allowed] : allowed_edges()) {
    const fs::path dir = source_root() / folder;
    ASSERT_TRUE(fs::is_directory(dir)) << dir;
    for (const auto& entry : fs::directory_iterator(dir)) {
      const std::string ext = entry.path().extension().string();
      if (ext != ".h" && ext != ".cpp" && ext != ".def") continue;
      ++files;
      const std::string rel = folder + "/" + entry.path().filename().string();
      std::ifstream in(entry.path());
      std::string line;
      for (int no = 1; std::getline(in, line); ++no) {
        const std::string target = included_folder(line);
        if (target.empty() || target == folder || !allowed_edges().count(target) || allowed.count(target)) continue;
        const std::string edge = rel + " -> " + target;
        if (known_exceptions().count(edge)) {
          seen_exceptions.insert(edge);
          continue;
        }
        ADD_FAILURE() << rel << ":" << no << ": " << folder << "/ may not include " << target << "/ (" << line
                      << "); allowed: see docs/decisions.md, \"Layering is tested\"";
      }
    }
  }
  EXPECT_GT(files, 100);
  for (const auto& [edge, why] : known_exceptions())
    EXPECT_TRUE(seen_exceptions.count(edge)) << "known exception no longer occurs, delete it: " << edge << " (" << why << ")";
}

}  // namespace
