// kiln/codegen_cpu/object_loader.cpp — x86-64 ELF relocatable objects into one mapping, without LLVM.
//
// The mapping holds, page-aligned apart: the executable sections of every object, then a stub
// per external function (`jmp *slot(%rip)`); the read-only sections, then the slots (the GOT
// the stubs and GOT-relative loads read); the writable sections. It is mapped read-write,
// filled, relocated, then each part is given its final protection.
#include "codegen_cpu/object_loader.h"

#include <fmt/format.h>

#include <dlfcn.h>
#include <elf.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <map>
#include <unordered_map>
#include <utility>

namespace kiln::cpu {

namespace {

struct LoadError {
  std::string message;
};

template <typename... Args>
[[noreturn]] void refuse(fmt::format_string<Args...> f, Args&&... args) {
  throw LoadError{fmt::format(f, std::forward<Args>(args)...)};
}

constexpr uint64_t kUnplaced = std::numeric_limits<uint64_t>::max();
constexpr uint64_t kMaxAlign = 4096;
constexpr size_t kStubBytes = 8;  // ff 25 <rel32>: jmp *slot(%rip), then two int3

// Reads a T at `offset` of `bytes` (objects need not be aligned in memory), checked.
template <typename T>
T read_at(std::string_view bytes, uint64_t offset, const char* what) {
  if (offset > bytes.size() || bytes.size() - offset < sizeof(T)) refuse("{} at offset {} is past the end of the object ({} bytes)", what, offset, bytes.size());
  T v;
  std::memcpy(&v, bytes.data() + offset, sizeof(T));
  return v;
}

bool within(std::string_view bytes, uint64_t offset, uint64_t size) { return offset <= bytes.size() && size <= bytes.size() - offset; }

uint64_t align_up(uint64_t v, uint64_t a) { return (v + a - 1) & ~(a - 1); }

// Where a placed section goes.
enum class Part : uint8_t { Text, ReadOnly, Writable };

struct Object {
  std::string_view bytes;
  std::vector<Elf64_Shdr> sections;
  std::vector<Part> part;
  std::vector<uint64_t> offset;  // within its part; kUnplaced when not allocated
  std::vector<Elf64_Sym> symbols;
  std::string_view strings;  // the symbol table's string table

  std::string_view symbol_name(const Elf64_Sym& s) const {
    if (s.st_name >= strings.size()) refuse("a symbol's name (offset {}) is past its string table", s.st_name);
    const size_t end = strings.find('\0', s.st_name);
    if (end == std::string_view::npos) refuse("a symbol's name is not terminated");
    return strings.substr(s.st_name, end - s.st_name);
  }
};

Object parse(std::string_view bytes, size_t which) {
  Object o;
  o.bytes = bytes;
  const auto eh = read_at<Elf64_Ehdr>(bytes, 0, "the ELF header");
  if (std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0) refuse("object {} is not an ELF file", which);
  if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != ELFDATA2LSB)
    refuse("object {} is not 64-bit little-endian ELF", which);
  if (eh.e_type != ET_REL) refuse("object {} is not relocatable (ELF type {})", which, eh.e_type);
  if (eh.e_machine != EM_X86_64) refuse("object {} is for machine {}, not x86-64", which, eh.e_machine);
  if (eh.e_shentsize != sizeof(Elf64_Shdr) || eh.e_shnum == 0 || eh.e_shnum >= SHN_LORESERVE)
    refuse("object {} has an unsupported section header table ({} entries of {} bytes)", which, eh.e_shnum, eh.e_shentsize);
  if (!within(bytes, eh.e_shoff, uint64_t{eh.e_shnum} * sizeof(Elf64_Shdr)))
    refuse("object {}'s section headers are past its end", which);
  const size_t n = eh.e_shnum;
  o.sections.resize(n);
  o.part.assign(n, Part::ReadOnly);
  o.offset.assign(n, kUnplaced);
  for (size_t i = 0; i < n; ++i) {
    o.sections[i] = read_at<Elf64_Shdr>(bytes, eh.e_shoff + i * sizeof(Elf64_Shdr), "a section header");
    const Elf64_Shdr& s = o.sections[i];
    if (s.sh_type != SHT_NOBITS && s.sh_type != SHT_NULL && !within(bytes, s.sh_offset, s.sh_size))
      refuse("object {}'s section {} ({} bytes at {}) is past its end", which, i, s.sh_size, s.sh_offset);
  }
  size_t symtab = 0;
  for (size_t i = 0; i < n; ++i)
    if (o.sections[i].sh_type == SHT_SYMTAB) {
      if (symtab != 0) refuse("object {} has two symbol tables", which);
      symtab = i;
    }
  if (symtab != 0) {
    const Elf64_Shdr& st = o.sections[symtab];
    if (st.sh_entsize != sizeof(Elf64_Sym) || st.sh_size % sizeof(Elf64_Sym) != 0)
      refuse("object {}'s symbol table has entries of {} bytes", which, st.sh_entsize);
    if (st.sh_link == 0 || st.sh_link >= n || o.sections[st.sh_link].sh_type != SHT_STRTAB)
      refuse("object {}'s symbol table names no string table", which);
    const Elf64_Shdr& strs = o.sections[st.sh_link];
    o.strings = bytes.substr(strs.sh_offset, strs.sh_size);
    for (uint64_t off = 0; off < st.sh_size; off += sizeof(Elf64_Sym))
      o.symbols.push_back(read_at<Elf64_Sym>(bytes, st.sh_offset + off, "a symbol"));
  }
  return o;
}

// The libraries an external symbol is looked up in, in order (then the whole process).
void* external_symbol(const std::string& name) {
  static void* const libmvec = dlopen("libmvec.so.1", RTLD_NOW | RTLD_LOCAL);
  static void* const libm = dlopen("libm.so.6", RTLD_NOW | RTLD_LOCAL);
  for (void* lib : {libmvec, libm})
    if (lib)
      if (void* p = dlsym(lib, name.c_str())) return p;
  return dlsym(RTLD_DEFAULT, name.c_str());
}

class Linker {
 public:
  explicit Linker(const std::vector<std::string_view>& objects) {
    for (size_t i = 0; i < objects.size(); ++i) objs_.push_back(parse(objects[i], i));
  }

  ~Linker() {
    if (mapping_) munmap(mapping_, mapped_);
  }

  // The mapping, now owned by the caller.
  std::pair<void*, size_t> release() { return {std::exchange(mapping_, nullptr), mapped_}; }

  void link(const std::vector<std::string>& names) {
    layout();
    define_globals();
    count_slots();
    map();
    for (auto& [name, def] : defs_) globals_.at(name).second = symbol_addr(def.first, def.second);
    for (size_t i = 0; i < objs_.size(); ++i) relocate(i);
    finish_slots();
    protect();
    for (const std::string& name : names) {
      auto it = globals_.find(name);
      if (it == globals_.end()) refuse("the objects define no symbol {}", name);
      addrs.push_back(reinterpret_cast<void*>(it->second.second));
    }
    collect_functions();
  }

  std::vector<void*> addrs;
  std::vector<LoadedFunction> functions;

 private:
  // Section placement: each allocated section at its alignment within its part.
  void layout() {
    for (Object& o : objs_)
      for (size_t i = 0; i < o.sections.size(); ++i) {
        const Elf64_Shdr& s = o.sections[i];
        if (!(s.sh_flags & SHF_ALLOC) || s.sh_size == 0) continue;
        if (s.sh_flags & SHF_TLS) refuse("thread-local sections are not supported");
        const uint64_t align = std::max<uint64_t>(s.sh_addralign, 1);
        if ((align & (align - 1)) != 0 || align > kMaxAlign) refuse("a section asks for an alignment of {}", align);
        const Part p = (s.sh_flags & SHF_EXECINSTR) ? Part::Text : (s.sh_flags & SHF_WRITE) ? Part::Writable : Part::ReadOnly;
        uint64_t& size = part_size_[static_cast<int>(p)];
        if (s.sh_size > (uint64_t{1} << 30)) refuse("a section of {} bytes is larger than the loader maps", s.sh_size);
        size = align_up(size, align);
        o.part[i] = p;
        o.offset[i] = size;
        size += s.sh_size;
        if (size > (uint64_t{1} << 30)) refuse("the objects' sections add up to more than the loader maps (1 GiB)");
      }
  }

  // Global definitions across the objects: one strong definition per name; a weak one yields.
  void define_globals() {
    for (size_t oi = 0; oi < objs_.size(); ++oi) {
      const Object& o = objs_[oi];
      for (size_t si = 1; si < o.symbols.size(); ++si) {
        const Elf64_Sym& s = o.symbols[si];
        const unsigned bind = ELF64_ST_BIND(s.st_info);
        if (ELF64_ST_TYPE(s.st_info) == STT_GNU_IFUNC || ELF64_ST_TYPE(s.st_info) == STT_TLS)
          refuse("symbol {} is an indirect function or thread-local, which the loader does not support", o.symbol_name(s));
        if (s.st_shndx == SHN_UNDEF || (bind != STB_GLOBAL && bind != STB_WEAK)) continue;
        const std::string name(o.symbol_name(s));
        auto [it, fresh] = globals_.try_emplace(name, bind == STB_WEAK, 0);
        if (!fresh && !it->second.first && bind == STB_GLOBAL) refuse("symbol {} is defined twice", name);
        if (fresh || (it->second.first && bind == STB_GLOBAL)) {
          it->second.first = bind == STB_WEAK;
          defs_[name] = {oi, si};
        }
      }
    }
  }

  // Slots (GOT entries) for GOT-relative relocations and for the stubs of external calls.
  void count_slots() {
    for (size_t oi = 0; oi < objs_.size(); ++oi)
      for_each_rela(oi, [&](const Elf64_Rela& r, size_t) {
        const uint32_t type = ELF64_R_TYPE(r.r_info);
        const size_t si = ELF64_R_SYM(r.r_info);
        if (type == R_X86_64_GOTPCREL || type == R_X86_64_GOTPCRELX || type == R_X86_64_REX_GOTPCRELX)
          slot_of_.try_emplace({oi, si}, slot_of_.size());
        if (type == R_X86_64_PLT32 && is_external(oi, si)) {
          stub_of_.try_emplace(std::string(objs_[oi].symbol_name(objs_[oi].symbols[si])), stub_of_.size());
        }
      });
  }

  void map() {
    const uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
    text_at_ = 0;
    const uint64_t text = part_size_[0] + stub_of_.size() * kStubBytes;
    ro_at_ = align_up(text, page);
    slots_at_ = align_up(ro_at_ + part_size_[1], 8);
    const uint64_t ro_end = slots_at_ + (slot_of_.size() + stub_of_.size()) * 8;
    rw_at_ = align_up(ro_end, page);
    const uint64_t total = std::max<uint64_t>(align_up(rw_at_ + part_size_[2], page), page);
    void* p = mmap(nullptr, total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) refuse("mapping {} bytes for the code failed: {}", total, std::strerror(errno));
    mapping_ = p;
    mapped_ = total;
    base_ = reinterpret_cast<uint64_t>(p);
    for (Object& o : objs_)
      for (size_t i = 0; i < o.sections.size(); ++i)
        if (o.offset[i] != kUnplaced && o.sections[i].sh_type != SHT_NOBITS)
          std::memcpy(reinterpret_cast<void*>(section_addr(o, i)), o.bytes.data() + o.sections[i].sh_offset, o.sections[i].sh_size);
  }

  uint64_t part_base(Part p) const { return base_ + (p == Part::Text ? text_at_ : p == Part::ReadOnly ? ro_at_ : rw_at_); }
  uint64_t section_addr(const Object& o, size_t i) const { return part_base(o.part[i]) + o.offset[i]; }

  bool is_external(size_t oi, size_t si) const {
    const Object& o = objs_[oi];
    if (si >= o.symbols.size()) refuse("a relocation names symbol {} of {}", si, o.symbols.size());
    const Elf64_Sym& s = o.symbols[si];
    return s.st_shndx == SHN_UNDEF && si != 0 && !defs_.count(std::string(o.symbol_name(s)));
  }

  // A symbol's address: a section of these objects, another object's global, or the process.
  uint64_t symbol_addr(size_t oi, size_t si) {
    const Object& o = objs_[oi];
    if (si >= o.symbols.size()) refuse("a relocation names symbol {} of {}", si, o.symbols.size());
    const Elf64_Sym& s = o.symbols[si];
    if (si == 0) return 0;
    if (s.st_shndx == SHN_UNDEF) {
      const std::string name(o.symbol_name(s));
      if (auto d = defs_.find(name); d != defs_.end()) return symbol_addr(d->second.first, d->second.second);
      if (auto it = external_.find(name); it != external_.end()) return it->second;
      void* p = external_symbol(name);
      if (!p && ELF64_ST_BIND(s.st_info) != STB_WEAK) refuse("symbol {} is not defined by the objects or the process", name);
      return external_[name] = reinterpret_cast<uint64_t>(p);
    }
    if (s.st_shndx == SHN_ABS) return s.st_value;
    if (s.st_shndx >= SHN_LORESERVE) refuse("symbol {} is in special section {:#x}", o.symbol_name(s), s.st_shndx);
    if (s.st_shndx >= o.sections.size() || o.offset[s.st_shndx] == kUnplaced)
      refuse("symbol {} is in a section that is not loaded", o.symbol_name(s));
    if (s.st_value > o.sections[s.st_shndx].sh_size) refuse("symbol {} is past the end of its section", o.symbol_name(s));
    return section_addr(o, s.st_shndx) + s.st_value;
  }

  template <typename F>
  void for_each_rela(size_t oi, F&& f) {
    const Object& o = objs_[oi];
    for (const Elf64_Shdr& rs : o.sections) {
      if (rs.sh_type == SHT_REL) refuse("REL relocations (without addends) are not supported");
      if (rs.sh_type != SHT_RELA) continue;
      if (rs.sh_info >= o.sections.size() || o.offset[rs.sh_info] == kUnplaced) continue;  // debug info and the like
      if (rs.sh_entsize != sizeof(Elf64_Rela) || rs.sh_size % sizeof(Elf64_Rela) != 0)
        refuse("a relocation section has entries of {} bytes", rs.sh_entsize);
      for (uint64_t off = 0; off < rs.sh_size; off += sizeof(Elf64_Rela))
        f(read_at<Elf64_Rela>(o.bytes, rs.sh_offset + off, "a relocation"), static_cast<size_t>(rs.sh_info));
    }
  }

  uint64_t slot_addr(size_t slot) const { return base_ + slots_at_ + slot * 8; }

  void relocate(size_t oi) {
    const Object& o = objs_[oi];
    for_each_rela(oi, [&](const Elf64_Rela& r, size_t target) {
      const uint32_t type = ELF64_R_TYPE(r.r_info);
      const size_t si = ELF64_R_SYM(r.r_info);
      const uint64_t size = o.sections[target].sh_size;
      const unsigned width = (type == R_X86_64_64 || type == R_X86_64_PC64) ? 8 : 4;
      if (type == R_X86_64_NONE) return;
      if (r.r_offset > size || size - r.r_offset < width) refuse("a relocation at {} is past its section", r.r_offset);
      const uint64_t P = section_addr(o, target) + r.r_offset;
      const int64_t A = r.r_addend;
      auto put32 = [&](int64_t v, bool is_signed) {
        const bool fits = is_signed ? (v >= std::numeric_limits<int32_t>::min() && v <= std::numeric_limits<int32_t>::max())
                                    : (v >= 0 && v <= std::numeric_limits<uint32_t>::max());
        if (!fits) refuse("relocation type {} against {} does not fit in 32 bits", type, o.symbol_name(o.symbols.at(si)));
        const uint32_t u = static_cast<uint32_t>(v);
        std::memcpy(reinterpret_cast<void*>(P), &u, 4);
      };
      auto put64 = [&](uint64_t v) { std::memcpy(reinterpret_cast<void*>(P), &v, 8); };
      switch (type) {
        case R_X86_64_64: put64(symbol_addr(oi, si) + static_cast<uint64_t>(A)); break;
        case R_X86_64_PC64: put64(symbol_addr(oi, si) + static_cast<uint64_t>(A) - P); break;
        case R_X86_64_PC32:
          put32(static_cast<int64_t>(symbol_addr(oi, si) + static_cast<uint64_t>(A) - P), true);
          break;
        case R_X86_64_PLT32: {
          uint64_t S;
          if (is_external(oi, si)) {
            const std::string name(o.symbol_name(o.symbols[si]));
            S = base_ + text_at_ + part_size_[0] + stub_of_.at(name) * kStubBytes;
            stub_target_[name] = symbol_addr(oi, si);
          } else {
            S = symbol_addr(oi, si);
          }
          put32(static_cast<int64_t>(S + static_cast<uint64_t>(A) - P), true);
          break;
        }
        case R_X86_64_GOTPCREL:
        case R_X86_64_GOTPCRELX:
        case R_X86_64_REX_GOTPCRELX: {
          const size_t slot = slot_of_.at({oi, si});
          const uint64_t v = symbol_addr(oi, si);
          std::memcpy(reinterpret_cast<void*>(slot_addr(slot)), &v, 8);
          put32(static_cast<int64_t>(slot_addr(slot) + static_cast<uint64_t>(A) - P), true);
          break;
        }
        case R_X86_64_32: put32(static_cast<int64_t>(symbol_addr(oi, si) + static_cast<uint64_t>(A)), false); break;
        case R_X86_64_32S: put32(static_cast<int64_t>(symbol_addr(oi, si) + static_cast<uint64_t>(A)), true); break;
        default: refuse("relocation type {} is not supported", type);
      }
    });
  }

  // Each stub jumps through its slot, which holds the external function's address.
  void finish_slots() {
    const uint64_t stubs = base_ + text_at_ + part_size_[0];
    for (const auto& [name, stub] : stub_of_) {
      const size_t slot = slot_of_.size() + stub;  // the stubs' slots follow the GOT's
      const uint64_t target = stub_target_.at(name);
      std::memcpy(reinterpret_cast<void*>(slot_addr(slot)), &target, 8);
      const uint64_t at = stubs + stub * kStubBytes;
      const int64_t disp = static_cast<int64_t>(slot_addr(slot) - (at + 6));
      const int32_t d32 = static_cast<int32_t>(disp);
      unsigned char code[kStubBytes] = {0xff, 0x25, 0, 0, 0, 0, 0xcc, 0xcc};
      std::memcpy(code + 2, &d32, 4);
      std::memcpy(reinterpret_cast<void*>(at), code, kStubBytes);
    }
  }

  void protect() {
    auto prot = [&](uint64_t from, uint64_t to, int flags) {
      if (to > from && mprotect(reinterpret_cast<void*>(base_ + from), to - from, flags) != 0)
        refuse("protecting the code failed: {}", std::strerror(errno));
    };
    prot(text_at_, ro_at_, PROT_READ | PROT_EXEC);
    prot(ro_at_, rw_at_, PROT_READ);
  }

  void collect_functions() {
    for (size_t oi = 0; oi < objs_.size(); ++oi) {
      const Object& o = objs_[oi];
      for (size_t si = 1; si < o.symbols.size(); ++si) {
        const Elf64_Sym& s = o.symbols[si];
        if (ELF64_ST_TYPE(s.st_info) != STT_FUNC || s.st_shndx == SHN_UNDEF || s.st_shndx >= o.sections.size() ||
            o.offset[s.st_shndx] == kUnplaced)
          continue;
        functions.push_back({std::string(o.symbol_name(s)), section_addr(o, s.st_shndx) + s.st_value, s.st_size});
      }
    }
  }

  std::vector<Object> objs_;
  uint64_t part_size_[3] = {0, 0, 0};
  std::unordered_map<std::string, std::pair<bool, uint64_t>> globals_;  // name -> (weak, address)
  std::unordered_map<std::string, std::pair<size_t, size_t>> defs_;     // name -> (object, symbol)
  std::map<std::pair<size_t, size_t>, size_t> slot_of_;                 // GOT slots by (object, symbol)
  std::map<std::string, size_t> stub_of_;                               // stubs by external name
  std::unordered_map<std::string, uint64_t> stub_target_, external_;
  void* mapping_ = nullptr;
  size_t mapped_ = 0;
  uint64_t base_ = 0, text_at_ = 0, ro_at_ = 0, slots_at_ = 0, rw_at_ = 0;
};

}  // namespace

LoadedCode::~LoadedCode() {
  if (base_) munmap(base_, size_);
}

std::unique_ptr<LoadedCode> load_objects(const std::vector<std::string_view>& objects,
                                         const std::vector<std::string>& names, std::string* error) {
  try {
    Linker linker(objects);
    linker.link(names);
    const auto [base, size] = linker.release();
    return std::unique_ptr<LoadedCode>(new LoadedCode(base, size, std::move(linker.addrs), std::move(linker.functions)));
  } catch (const LoadError& e) {
    if (error) *error = e.message;
    return nullptr;  // the linker unmaps whatever it mapped
  }
}

}  // namespace kiln::cpu
