// kiln/runtime/export/package.h — the file an exported program lives in: named sections, each
// with its CRC-32C.
//
//   "KILNPKG\n"                       8 bytes, the magic
//   u32 format version                kPackageFormat (little-endian, as every number here)
//   u32 section count
//   per section: u32 name length, the name, u64 size, 8 hex digits of its CRC-32C (base/crc32c.h)
//   8 hex digits: the CRC-32C of everything above (magic, version, count and the table)
//   the sections' bytes, in the order of the table, each starting at a multiple of 64 bytes
//   (zeros between), so that a loaded program's weights are tensors over the file's bytes
//
// read_package checks everything before it hands out a byte: the magic, the version, the
// table's checksum, every length against the file, that the sections with their padding exactly fill what follows the
// table (the padding zero), and each section's checksum. A truncated, damaged or edited file is an error naming the file and what
// failed, never a partial read. Asked to (`verify_later`), it leaves the checksums of the named
// sections of 2 MB or more (a model's weights) for PackageView::verify_rest, which checks them on
// the pool's threads while the caller parses the other sections: until then `at` refuses them.
// (The checksums find damage; they do not authenticate a
// package: its code runs in the loading process, so load only packages you trust.) The
// sections an exported program uses are listed in docs/export.md.
#pragma once

#include "runtime/thread_pool.h"

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kiln::rt {

// 3: a cuda kernel that draws random numbers takes the kiln_rng argument (codegen_cuda/cuda_emitter.h),
// which a format-2 package's cubins lack.
inline constexpr uint32_t kPackageFormat = 3;

struct Package {
  std::vector<std::pair<std::string, std::string>> sections;  // (name, bytes), names unique

  void add(std::string name, std::string bytes);
  // The section's bytes; kiln::Error "[op] path: the package has no section 'name'" when absent.
  const std::string& at(std::string_view name, std::string_view op, const std::string& path) const;
  bool has(std::string_view name) const;
};

inline constexpr uint64_t kSectionAlign = 64;

// The size from which a section named in read_package's `verify_later` is left unverified (a
// smaller one is checked at once: hashing it takes less than starting the pool's threads).
inline constexpr uint64_t kVerifyLaterBytes = uint64_t{2} << 20;

// A package read back: its sections are views into the file's bytes, which `owner` keeps
// alive (read_package maps the file: base/read_file.h MappedFile).
struct PackageView {
  // A section whose checksum is not checked yet (read_package's `verify_later`).
  struct Unverified {
    std::string name;
    std::string_view bytes;
    std::string hash;  // the table's
  };
  std::shared_ptr<const void> owner;
  std::vector<std::pair<std::string, std::string_view>> sections;
  std::vector<Unverified> unverified;

  // The section's bytes; kiln::Error when absent, and an internal error for an unverified one.
  std::string_view at(std::string_view name, std::string_view op, const std::string& path) const;
  bool has(std::string_view name) const;  // verified or not
  // Checks the unverified sections and makes them readable. Their 1 MB pieces are shared by the
  // pool's threads while `meanwhile` runs, and its thread then takes pieces too: a loaded
  // program parses its plan and links its code while its weights are checked, instead of after.
  // `meanwhile` runs inside that parallel region (on the calling thread, with kiln's pool): a
  // parallel_for it makes runs inline. It must not read an unverified section. Throws what
  // `meanwhile` throws (the other threads then stop hashing), else kiln::Error "[op] path:
  // section 'name' fails its checksum..." as read_package would have.
  void verify_rest(FunctionRef<void()> meanwhile, std::string_view op, const std::string& path);
};

// The package's bytes; written atomically by write_package.
std::string package_bytes(const Package& p);
void write_package(const Package& p, const std::string& path, std::string_view op);
// kiln::Error "[op] path: ..." for a file that is not a whole, intact package of this format.
// The sections named in `verify_later`, when of kVerifyLaterBytes or more, are checked by
// PackageView::verify_rest instead.
PackageView read_package(const std::string& path, std::string_view op, const std::vector<std::string>& verify_later = {});
PackageView view_package(std::shared_ptr<const void> owner, std::string_view bytes, std::string_view op,
                         const std::string& path, const std::vector<std::string>& verify_later = {});
// The same, its sections copied (to edit and write again).
Package parse_package(std::string_view bytes, std::string_view op, const std::string& path);

}  // namespace kiln::rt
