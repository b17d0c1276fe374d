// kiln/base/build_id.cpp — the GNU build-id note of the ELF object holding this code.
#include "base/build_id.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <unistd.h>
#include <elf.h>
#include <link.h>

#include <fmt/format.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <functional>
#include <sstream>
#include <vector>

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

// The GNU build-id note among the notes in [p, end), as hex, or "".
std::string gnu_build_id(const unsigned char* p, const unsigned char* end) {
  auto align4 = [](size_t n) { return (n + 3) & ~size_t{3}; };
  while (p + sizeof(ElfW(Nhdr)) <= end) {
    ElfW(Nhdr) nh;
    std::memcpy(&nh, p, sizeof nh);
    const unsigned char* name = p + sizeof nh;
    if (align4(nh.n_namesz) > static_cast<size_t>(end - name)) break;
    const unsigned char* desc = name + align4(nh.n_namesz);
    if (nh.n_descsz > static_cast<size_t>(end - desc)) break;
    if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 && std::memcmp(name, "GNU", 4) == 0) return to_hex(desc, nh.n_descsz);
    if (align4(nh.n_descsz) > static_cast<size_t>(end - desc)) break;
    p = desc + align4(nh.n_descsz);
  }
  return "";
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
    s->hex = gnu_build_id(p, p + ph.p_memsz);
    if (!s->hex.empty()) return 1;
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

std::string file_build_id(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return "";
  std::string id;
  ElfW(Ehdr) eh{};
  const bool elf = ::pread(fd, &eh, sizeof eh, 0) == static_cast<ssize_t>(sizeof eh) &&
                   std::memcmp(eh.e_ident, ELFMAG, SELFMAG) == 0 && eh.e_ident[EI_CLASS] == ELFCLASS64 &&
                   eh.e_phentsize == sizeof(ElfW(Phdr)) && eh.e_phnum < 256;
  for (int i = 0; elf && id.empty() && i < eh.e_phnum; ++i) {
    ElfW(Phdr) ph{};
    if (::pread(fd, &ph, sizeof ph, static_cast<off_t>(eh.e_phoff + i * sizeof ph)) != static_cast<ssize_t>(sizeof ph)) break;
    if (ph.p_type != PT_NOTE || ph.p_filesz > (1u << 16)) continue;
    std::vector<unsigned char> notes(ph.p_filesz);
    if (::pread(fd, notes.data(), notes.size(), static_cast<off_t>(ph.p_offset)) != static_cast<ssize_t>(notes.size())) break;
    id = gnu_build_id(notes.data(), notes.data() + notes.size());
  }
  ::close(fd);
  return id.empty() ? "" : "build-id:" + id;
}

}  // namespace kiln
