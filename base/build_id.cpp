// kiln/base/build_id.cpp — the GNU build-id note of the ELF object holding this code.
#include "base/build_id.h"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>

#include <fmt/format.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <functional>
#include <sstream>

namespace kiln {

namespace {

struct Search {
  uintptr_t address = 0;  // of a function in this object
  std::string hex;
};

std::string to_hex(const unsigned char* p, size_t n) {
  std::string s;
  for (size_t i = 0; i < n; ++i) s += fmt::format("{:02x}", p[i]);
  return s;
}

// The build-id in one loaded object's PT_NOTE segments, when `address` lies in one of its
// PT_LOAD segments.
int visit(dl_phdr_info* info, size_t, void* data) {
  auto* s = static_cast<Search*>(data);
  bool mine = false;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    const uintptr_t lo = info->dlpi_addr + ph.p_vaddr;
    if (ph.p_type == PT_LOAD && s->address >= lo && s->address < lo + ph.p_memsz) mine = true;
  }
  if (!mine) return 0;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_NOTE) continue;
    const auto* p = reinterpret_cast<const unsigned char*>(info->dlpi_addr + ph.p_vaddr);
    const unsigned char* end = p + ph.p_memsz;
    auto align4 = [](size_t n) { return (n + 3) & ~size_t{3}; };
    while (p + sizeof(ElfW(Nhdr)) <= end) {
      ElfW(Nhdr) nh;
      std::memcpy(&nh, p, sizeof nh);
      const unsigned char* name = p + sizeof nh;
      const unsigned char* desc = name + align4(nh.n_namesz);
      if (desc + nh.n_descsz > end) break;
      if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 && std::memcmp(name, "GNU", 4) == 0) {
        s->hex = to_hex(desc, nh.n_descsz);
        return 1;
      }
      p = desc + align4(nh.n_descsz);
    }
  }
  return 1;  // found the object, without a note
}

// The fallback only has to tell builds of kiln apart, not resist forgery: a 64-bit FNV-1a of
// the file's bytes and its size.
std::string file_hash(const char* path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::string("unreadable:") + path;
  std::ostringstream ss;
  ss << in.rdbuf();
  const std::string bytes = ss.str();
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : bytes) h = (h ^ c) * 1099511628211ull;
  return fmt::format("{:016x}-{}", h, bytes.size());
}

std::string find_build_id() {
  Search s;
  s.address = reinterpret_cast<uintptr_t>(&find_build_id);
  dl_iterate_phdr(visit, &s);
  if (!s.hex.empty()) return "build-id:" + s.hex;
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&find_build_id), &info) != 0 && info.dli_fname != nullptr && info.dli_fname[0] != 0)
    return std::string("file-fnv1a:") + file_hash(info.dli_fname);
  return std::string("file-fnv1a:") + file_hash("/proc/self/exe");  // the main executable
}

}  // namespace

const std::string& build_id() {
  static const std::string id = find_build_id();
  return id;
}

}  // namespace kiln
