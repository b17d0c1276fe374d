// kiln/runtime/export/package.cpp — the sectioned, checksummed package file (package.h).
#include "runtime/export/package.h"

#include "base/atomic_file.h"
#include "base/error.h"
#include "base/read_file.h"
#include "base/crc32c.h"
#include "runtime/thread_pool.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <limits>
#include <memory>
#include <set>
#include <vector>

namespace kiln::rt {

namespace {

constexpr std::string_view kMagic = "KILNPKG\n";
constexpr size_t kHashDigits = 8;  // CRC-32C in hex

uint64_t align_up(uint64_t n) { return (n + kSectionAlign - 1) / kSectionAlign * kSectionAlign; }

// CRC-32C in hex. A large section (a model's weights) is hashed in 1 MB pieces across the pool
// and the pieces' values joined: one core reads the page cache at about 9 GB/s on the test host,
// so 8 MB of weights took 1 ms of a package's load on one thread. This also starts the pool's
// workers, which the first call would otherwise start.
constexpr size_t kPiece = size_t{1} << 20;

std::string hex(uint32_t crc) { return fmt::format("{:08x}", crc); }

std::string checksum(std::string_view bytes) {
  const auto pieces = static_cast<int64_t>((bytes.size() + kPiece - 1) / kPiece);
  if (pieces < 2 || rt::num_threads() == 1) return hex(crc32c(bytes));
  std::vector<uint32_t> crcs(static_cast<size_t>(pieces));
  const auto piece = [&](int64_t i) { return bytes.substr(static_cast<size_t>(i) * kPiece, kPiece); };
  rt::parallel_for(pieces, 1, [&](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i) crcs[static_cast<size_t>(i)] = crc32c(piece(i));
  });
  uint32_t crc = crcs[0];
  for (int64_t i = 1; i < pieces; ++i) crc = crc32c_combine(crc, crcs[static_cast<size_t>(i)], piece(i).size());
  return hex(crc);
}

[[noreturn]] void fails_checksum(std::string_view op, const std::string& path, const std::string& name) {
  fail(op, "{}: section '{}' fails its checksum: the package is damaged or was changed after export", path, name);
}

template <typename T> void put(std::string& out, T v) {
  for (size_t i = 0; i < sizeof(T); ++i) out.push_back(static_cast<char>(static_cast<uint64_t>(v) >> (8 * i) & 0xff));
}

// Reads numbers and byte runs off the front of the file, each checked against what is left.
class Reader {
 public:
  Reader(std::string_view bytes, std::string_view op, const std::string& path) : rest_(bytes), op_(op), path_(path) {}
  template <typename T> T take(std::string_view what) {
    const std::string_view b = bytes(sizeof(T), what);
    uint64_t v = 0;
    for (size_t i = sizeof(T); i-- > 0;) v = v << 8 | static_cast<unsigned char>(b[i]);
    return static_cast<T>(v);
  }
  std::string_view bytes(uint64_t n, std::string_view what) {
    if (n > rest_.size())
      fail(op_, "{}: truncated: {} needs {} bytes, {} are left", path_, what, n, rest_.size());
    const std::string_view b = rest_.substr(0, static_cast<size_t>(n));
    rest_.remove_prefix(static_cast<size_t>(n));
    return b;
  }
  size_t left() const { return rest_.size(); }

 private:
  std::string_view rest_;
  std::string_view op_;
  const std::string& path_;
};

}  // namespace

void Package::add(std::string name, std::string bytes) {
  if (has(name)) internal_fail("package: section '{}' added twice", name);
  sections.emplace_back(std::move(name), std::move(bytes));
}

bool Package::has(std::string_view name) const {
  for (const auto& [n, _] : sections)
    if (n == name) return true;
  return false;
}

const std::string& Package::at(std::string_view name, std::string_view op, const std::string& path) const {
  for (const auto& [n, b] : sections)
    if (n == name) return b;
  fail(op, "{}: the package has no section '{}'", path, name);
}

std::string package_bytes(const Package& p) {
  std::string out(kMagic);
  put<uint32_t>(out, kPackageFormat);
  put<uint32_t>(out, static_cast<uint32_t>(p.sections.size()));
  for (const auto& [name, bytes] : p.sections) {
    put<uint32_t>(out, static_cast<uint32_t>(name.size()));
    out += name;
    put<uint64_t>(out, bytes.size());
    out += checksum(bytes);
  }
  out += checksum(out);  // the table's own: a section's name or size cannot change unseen
  for (const auto& [name, bytes] : p.sections) {
    out.append(align_up(out.size()) - out.size(), '\0');
    out += bytes;
  }
  return out;
}

void write_package(const Package& p, const std::string& path, std::string_view op) {
  AtomicFile f(path, op);
  f.write(package_bytes(p));
  f.commit();
}

PackageView view_package(std::shared_ptr<const void> owner, std::string_view bytes, std::string_view op,
                         const std::string& path, const std::vector<std::string>& verify_later) {
  Reader r(bytes, op, path);
  if (bytes.substr(0, kMagic.size()) != kMagic)
    fail(op, "{}: not a kiln package (it does not start with \"KILNPKG\")", path);
  r.bytes(kMagic.size(), "the magic");
  const uint32_t version = r.take<uint32_t>("the format version");
  if (version != kPackageFormat)
    fail(op, "{}: package format {} is not one this kiln reads (format {}); export it again with this kiln", path,
         version, kPackageFormat);
  const uint32_t count = r.take<uint32_t>("the section count");
  struct Row {
    std::string name;
    uint64_t size;
    std::string hash;
  };
  std::vector<Row> rows;
  std::set<std::string> names;
  for (uint32_t i = 0; i < count; ++i) {
    Row row;
    const uint32_t len = r.take<uint32_t>("a section name's length");
    if (len == 0 || len > 256) fail(op, "{}: section {} has a name of {} bytes", path, i, len);
    row.name = std::string(r.bytes(len, "a section name"));
    if (!names.insert(row.name).second) fail(op, "{}: section '{}' appears twice", path, row.name);
    row.size = r.take<uint64_t>("a section size");
    row.hash = std::string(r.bytes(kHashDigits, "a section checksum"));
    rows.push_back(std::move(row));
  }
  const std::string_view table = bytes.substr(0, bytes.size() - r.left());
  if (r.bytes(kHashDigits, "the table's checksum") != checksum(table))
    fail(op, "{}: the section table fails its checksum: the package is damaged or was changed after export", path);
  // Each section starts at the next multiple of kSectionAlign, zeros between: the layout
  // follows from the sizes, and the file must end where the last section does.
  uint64_t at = bytes.size() - r.left();
  std::vector<uint64_t> starts;
  for (const Row& row : rows) {
    const uint64_t start = align_up(at);
    if (start > bytes.size() || row.size > bytes.size() - start)
      fail(op, "{}: truncated: section '{}' needs bytes [{}, {}), the file has {}", path, row.name, start,
           start + row.size, bytes.size());
    starts.push_back(start);
    at = start + row.size;
  }
  if (at != bytes.size()) fail(op, "{}: {} trailing bytes after the last section", path, bytes.size() - at);
  uint64_t pad_from = bytes.size() - r.left();
  for (size_t i = 0; i < rows.size(); ++i) {
    for (uint64_t k = pad_from; k < starts[i]; ++k)
      if (bytes[k] != '\0') fail(op, "{}: byte {} between sections is not zero: the package is damaged", path, k);
    pad_from = starts[i] + rows[i].size;
  }
  PackageView v;
  for (size_t i = 0; i < rows.size(); ++i) {
    const std::string_view data = bytes.substr(starts[i], rows[i].size);
    if (data.size() >= kVerifyLaterBytes &&
        std::find(verify_later.begin(), verify_later.end(), rows[i].name) != verify_later.end()) {
      v.unverified.push_back({rows[i].name, data, rows[i].hash});
      continue;
    }
    if (checksum(data) != rows[i].hash) fails_checksum(op, path, rows[i].name);
    v.sections.emplace_back(rows[i].name, data);
  }
  v.owner = std::move(owner);
  return v;
}

Package parse_package(std::string_view bytes, std::string_view op, const std::string& path) {
  const PackageView v = view_package(nullptr, bytes, op, path);
  Package p;
  for (const auto& [name, data] : v.sections) p.sections.emplace_back(name, std::string(data));
  return p;
}

std::string_view PackageView::at(std::string_view name, std::string_view op, const std::string& path) const {
  for (const auto& [n, b] : sections)
    if (n == name) return b;
  for (const Unverified& u : unverified)
    if (u.name == name) internal_fail("{}: section '{}' read before its checksum was verified", path, name);
  fail(op, "{}: the package has no section '{}'", path, name);
}

bool PackageView::has(std::string_view name) const {
  for (const auto& [n, _] : sections)
    if (n == name) return true;
  for (const Unverified& u : unverified)
    if (u.name == name) return true;
  return false;
}

void PackageView::verify_rest(FunctionRef<void()> meanwhile, std::string_view op, const std::string& path) {
  struct Piece {
    size_t section;
    std::string_view bytes;
  };
  std::vector<Piece> pieces;
  for (size_t i = 0; i < unverified.size(); ++i)
    for (size_t at = 0; at < unverified[i].bytes.size(); at += kPiece)
      pieces.push_back({i, unverified[i].bytes.substr(at, kPiece)});
  std::vector<uint32_t> crcs(pieces.size());
  std::atomic<size_t> next{0};
  std::atomic<bool> failed{false};  // `meanwhile` threw: the checksums no longer matter
  const auto take_pieces = [&] {
    for (size_t i; !failed.load(std::memory_order_relaxed) && (i = next.fetch_add(1, std::memory_order_relaxed)) < pieces.size();)
      crcs[i] = crc32c(pieces[i].bytes);
  };
  // One chunk per thread (pieces permitting): chunk 0 runs `meanwhile` first. Run inline (one
  // thread, or inside a parallel_for), the chunks go in order: `meanwhile`, then every piece.
  const int64_t chunks = std::min<int64_t>(rt::num_threads(), static_cast<int64_t>(pieces.size()) + 1);
  rt::parallel_for(chunks, 1, [&](int64_t lo, int64_t hi) {
    for (int64_t c = lo; c < hi; ++c) {
      if (c == 0) {
        try {
          meanwhile();
        } catch (...) {
          failed = true;
          throw;
        }
      }
      take_pieces();
    }
  });
  for (size_t i = 0, p = 0; i < unverified.size(); ++i) {
    uint32_t crc = crcs[p++];
    for (; p < pieces.size() && pieces[p].section == i; ++p) crc = crc32c_combine(crc, crcs[p], pieces[p].bytes.size());
    if (hex(crc) != unverified[i].hash) fails_checksum(op, path, unverified[i].name);
  }
  for (Unverified& u : unverified) sections.emplace_back(std::move(u.name), u.bytes);
  unverified.clear();
}

PackageView read_package(const std::string& path, std::string_view op, const std::vector<std::string>& verify_later) {
  ReadOptions opts;
  opts.max_bytes = size_t{16} << 30;
  std::shared_ptr<const MappedFile> file = MappedFile::map(path, op, opts);
  const std::string_view bytes = file->bytes();
  return view_package(std::move(file), bytes, op, path, verify_later);
}

}  // namespace kiln::rt
