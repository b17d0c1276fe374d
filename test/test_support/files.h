// kiln/test/test_support/files.h — reading and writing test files, listing a corpus folder,
// fresh private directories.
#pragma once

#include <stdlib.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace kiln::test {

inline std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline void write_file(const std::filesystem::path& p, const std::string& bytes) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out << bytes;
}

// A new directory <tmp>/<stem>-XXXXXX (mkdtemp: unique, mode 0700); the caller removes it.
inline std::string make_temp_dir(const std::string& stem) {
  std::string t = (std::filesystem::temp_directory_path() / (stem + "-XXXXXX")).string();
  if (::mkdtemp(t.data()) == nullptr) throw std::runtime_error("mkdtemp failed for " + t);
  return t;
}

// The files of `dir` with extension `ext` (".kir"), sorted by name.
inline std::vector<std::filesystem::path> files_with_extension(const std::filesystem::path& dir, const std::string& ext) {
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir))
    if (entry.path().extension() == ext) files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace kiln::test
