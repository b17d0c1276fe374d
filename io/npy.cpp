// kiln/io/npy.cpp — the .npy reader and writer, and .npz archives of them through libzip (opened on first use)
// (io/npy.h).
#include "io/npy.h"

#include "base/atomic_file.h"
#include "base/dl_symbol.h"
#include "base/error.h"
#include "base/read_file.h"
#include "frontend/ops_factory.h"
#include "frontend/ops_view.h"

#include <zip.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <vector>

namespace kiln {

namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicBytes = 6;

// What a header says.
struct NpyHeader {
  ScalarType dtype = ScalarType::Float;
  bool swap = false;  // big-endian data
  bool fortran = false;
  std::vector<int64_t> shape;
};

// A Python dict literal as numpy writes it: {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
class DictParser {
 public:
  DictParser(std::string_view text, std::string_view op, const std::string& where)
      : s_(text), op_(op), where_(where) {}

  NpyHeader parse() {
    NpyHeader h;
    bool descr = false, order = false, shape = false;
    expect('{');
    while (true) {
      skip();
      if (peek() == '}') break;
      const std::string key = string();
      expect(':');
      skip();
      if (key == "descr") {
        std::string d = string();
        if (!dtype(d, h)) bad("dtype '" + d + "', which kiln does not read (bool, uint8, int8-64, float16/32/64)");
        descr = true;
      } else if (key == "fortran_order") {
        h.fortran = boolean();
        order = true;
      } else if (key == "shape") {
        h.shape = tuple();
        shape = true;
      } else {
        bad("an unknown key '" + key + "'");
      }
      skip();
      if (peek() == ',') ++i_;
    }
    if (!descr || !order || !shape) bad("a header without all of descr, fortran_order and shape");
    return h;
  }

 private:
  [[noreturn]] void bad(const std::string& what) { fail(op_, "{}: the .npy header has {}", where_, what); }
  char peek() const { return i_ < s_.size() ? s_[i_] : '\0'; }
  void skip() {
    while (i_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[i_]))) ++i_;
  }
  void expect(char c) {
    skip();
    if (peek() != c) bad(fmt::format("'{}' where '{}' was expected (at byte {})", peek(), c, i_));
    ++i_;
  }
  std::string string() {
    skip();
    const char q = peek();
    if (q != '\'' && q != '"') bad(fmt::format("no string at byte {}", i_));
    const size_t end = s_.find(q, i_ + 1);
    if (end == std::string_view::npos) bad("an unterminated string");
    std::string out(s_.substr(i_ + 1, end - i_ - 1));
    i_ = end + 1;
    return out;
  }
  bool boolean() {
    if (s_.substr(i_, 4) == "True") return i_ += 4, true;
    if (s_.substr(i_, 5) == "False") return i_ += 5, false;
    bad(fmt::format("no True or False at byte {}", i_));
  }
  std::vector<int64_t> tuple() {
    expect('(');
    std::vector<int64_t> out;
    while (true) {
      skip();
      if (peek() == ')') break;
      if (!std::isdigit(static_cast<unsigned char>(peek()))) bad(fmt::format("a shape with '{}' at byte {}", peek(), i_));
      int64_t v = 0;
      while (std::isdigit(static_cast<unsigned char>(peek()))) {
        if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, peek() - '0', &v)) bad("a dimension past int64");
        ++i_;
      }
      out.push_back(v);
      skip();
      if (peek() == ',') ++i_;
    }
    ++i_;
    return out;
  }
  static bool dtype(const std::string& d, NpyHeader& h) {
    if (d.size() < 3) return false;
    const char order = d[0];
    const std::string kind = d.substr(1);
    const std::pair<const char*, ScalarType> types[] = {
        {"b1", ScalarType::Bool}, {"u1", ScalarType::UInt8}, {"i1", ScalarType::Int8},  {"i2", ScalarType::Int16},
        {"i4", ScalarType::Int32}, {"i8", ScalarType::Int64}, {"f2", ScalarType::Half}, {"f4", ScalarType::Float},
        {"f8", ScalarType::Double}};
    for (const auto& [name, type] : types)
      if (kind == name) {
        const bool one_byte = element_size(type) == 1;
        if (order == '|' || (one_byte && (order == '<' || order == '>' || order == '='))) {
          h.dtype = type;
          return true;
        }
        if (order == '<' || order == '>') {
          h.dtype = type;
          h.swap = order == '>';
          return true;
        }
        return false;
      }
    return false;
  }

  std::string_view s_;
  size_t i_ = 0;
  std::string_view op_;
  const std::string& where_;
};

// The header of the .npy bytes at the front of `bytes`; sets `data_at` to where the data starts.
// Where the header's dict ends (the data starts), from the first 12 bytes of the file or fewer.
size_t header_end(std::string_view bytes, std::string_view op, const std::string& where, size_t* dict_start = nullptr) {
  if (bytes.size() < kMagicBytes + 4 || bytes.substr(0, kMagicBytes) != std::string_view(kMagic, kMagicBytes))
    fail(op, "{}: not a .npy file (no \\x93NUMPY magic)", where);
  const int major = static_cast<unsigned char>(bytes[6]);
  const auto byte = [&](size_t i) { return static_cast<size_t>(static_cast<unsigned char>(bytes[i])); };
  size_t len = 0, start = 0;
  if (major == 1) {
    len = byte(8) | byte(9) << 8;
    start = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) fail(op, "{}: the .npy header is truncated", where);
    len = byte(8) | byte(9) << 8 | byte(10) << 16 | byte(11) << 24;
    start = 12;
  } else {
    fail(op, "{}: .npy format version {}.{}, expected 1.0, 2.0 or 3.0", where, major, byte(7));
  }
  if (dict_start) *dict_start = start;
  return start + len;
}

// The header at the front of `bytes`, which must hold all of it; sets `data_at` to where the data starts.
NpyHeader parse_header(std::string_view bytes, std::string_view op, const std::string& where, size_t& data_at) {
  size_t start = 0;
  data_at = header_end(bytes, op, where, &start);
  if (data_at > bytes.size()) fail(op, "{}: the .npy header runs past the end of the file (truncated?)", where);
  return DictParser(bytes.substr(start, data_at - start), op, where).parse();
}

// The tensor a header describes, from `available` data bytes that read(dst, n) copies out.
Tensor make_tensor(const NpyHeader& h, size_t available, const std::function<void(char*, size_t)>& read,
                   std::string_view op, const std::string& where) {
  std::vector<int64_t> shape = h.shape;
  if (h.fortran) std::reverse(shape.begin(), shape.end());
  Tensor t = empty(shape, TensorOptions(h.dtype));
  const size_t nbytes = static_cast<size_t>(t.numel()) * element_size(h.dtype);
  if (available < nbytes)
    fail(op, "{}: the data of a {} array of shape {} needs {} bytes, the file holds {} (truncated?)", where,
         dtype_name(h.dtype), shape_str(h.shape), nbytes, available);
  char* dst = static_cast<char*>(t.data_ptr());
  read(dst, nbytes);
  if (h.swap) {
    const size_t size = element_size(h.dtype);
    for (size_t i = 0; i < nbytes; i += size) std::reverse(dst + i, dst + i + size);
  }
  if (h.fortran && t.dim() > 1) {
    std::vector<int64_t> dims(static_cast<size_t>(t.dim()));
    for (int64_t d = 0; d < t.dim(); ++d) dims[static_cast<size_t>(d)] = t.dim() - 1 - d;
    t = t.permute(dims).contiguous();
  }
  return t;
}

Tensor parse_npy(std::string_view bytes, std::string_view op, const std::string& where) {
  size_t data_at = 0;
  const NpyHeader h = parse_header(bytes, op, where, data_at);
  return make_tensor(
      h, bytes.size() - data_at, [&](char* dst, size_t n) { std::memcpy(dst, bytes.data() + data_at, n); }, op, where);
}

const char* descr_of(ScalarType t, std::string_view op) {
  switch (t) {
    case ScalarType::Bool: return "|b1";
    case ScalarType::UInt8: return "|u1";
    case ScalarType::Int8: return "|i1";
    case ScalarType::Int16: return "<i2";
    case ScalarType::Int32: return "<i4";
    case ScalarType::Int64: return "<i8";
    case ScalarType::Half: return "<f2";
    case ScalarType::Float: return "<f4";
    case ScalarType::Double: return "<f8";
    case ScalarType::BFloat16: break;
  }
  fail(op, "NumPy has no bfloat16; convert the tensor with .to(kFloat32) first");
}

// The bytes of a .npy file holding t.
std::string npy_bytes(const Tensor& t, std::string_view op, const std::string& what) {
  if (!t.defined()) fail(op, "{} is undefined", what);
  if (t.impl()->is_traced()) fail(op, "{} is a traced tensor; save outside compile()", what);
  const char* descr = descr_of(t.dtype(), op);
  Tensor h = t.device().is_cpu() ? t : t.to(Device(DeviceType::CPU));
  if (!h.is_contiguous()) h = h.contiguous();
  std::string shape = "(";
  for (int64_t s : h.sizes()) shape += std::to_string(s) + ", ";
  if (h.dim() == 1) shape.pop_back();
  else if (h.dim() > 1) shape.resize(shape.size() - 2);
  shape += ")";
  std::string dict = fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': {}, }}", descr, shape);
  const bool v2 = dict.size() + 1 + 10 > 65535;
  const size_t prefix = v2 ? 12 : 10;
  dict.append((64 - (prefix + dict.size() + 1) % 64) % 64, ' ');
  dict += '\n';
  std::string out(kMagic, kMagicBytes);
  out += static_cast<char>(v2 ? 2 : 1);
  out += '\0';
  const size_t len = dict.size();
  for (size_t i = 0; i < (v2 ? 4u : 2u); ++i) out += static_cast<char>((len >> (8 * i)) & 0xff);
  out += dict;
  out.append(static_cast<const char*>(h.data_ptr()), static_cast<size_t>(h.numel()) * element_size(h.dtype()));
  return out;
}

ReadOptions unlimited() {
  ReadOptions o;
  o.max_bytes = std::numeric_limits<size_t>::max();
  return o;
}

// libzip is opened on the first .npz (kiln's startup does not load it and the libcrypto it
// links: about 1.7 ms of every process, docs/export.md); its functions bound by name, typed by
// <zip.h>.
struct LibZip {
  decltype(&::zip_close) zip_close = nullptr;
  decltype(&::zip_discard) zip_discard = nullptr;
  decltype(&::zip_error_fini) zip_error_fini = nullptr;
  decltype(&::zip_fclose) zip_fclose = nullptr;
  decltype(&::zip_error_init) zip_error_init = nullptr;
  decltype(&::zip_error_strerror) zip_error_strerror = nullptr;
  decltype(&::zip_file_add) zip_file_add = nullptr;
  decltype(&::zip_file_set_dostime) zip_file_set_dostime = nullptr;
  decltype(&::zip_file_strerror) zip_file_strerror = nullptr;
  decltype(&::zip_fopen_index) zip_fopen_index = nullptr;
  decltype(&::zip_fread) zip_fread = nullptr;
  decltype(&::zip_get_num_entries) zip_get_num_entries = nullptr;
  decltype(&::zip_open_from_source) zip_open_from_source = nullptr;
  decltype(&::zip_set_file_compression) zip_set_file_compression = nullptr;
  decltype(&::zip_source_buffer) zip_source_buffer = nullptr;
  decltype(&::zip_source_buffer_create) zip_source_buffer_create = nullptr;
  decltype(&::zip_source_close) zip_source_close = nullptr;
  decltype(&::zip_source_error) zip_source_error = nullptr;
  decltype(&::zip_source_free) zip_source_free = nullptr;
  decltype(&::zip_source_keep) zip_source_keep = nullptr;
  decltype(&::zip_source_open) zip_source_open = nullptr;
  decltype(&::zip_source_read) zip_source_read = nullptr;
  decltype(&::zip_stat_index) zip_stat_index = nullptr;
  decltype(&::zip_strerror) zip_strerror = nullptr;
};

const LibZip& lz() {
  static const LibZip z = [] {
    LibZip z;
    std::string tried, error;
    static const char* const kPaths[] = {"libzip.so.4"};
    void* lib = dlopen_first(kPaths, tried);
    if (!lib) fail("npz", ".npz archives need libzip, which could not be opened (apt-get install libzip4):{}", tried);
    bind_symbol(lib, "libzip.so.4", "zip_close", z.zip_close, error);
    bind_symbol(lib, "libzip.so.4", "zip_discard", z.zip_discard, error);
    bind_symbol(lib, "libzip.so.4", "zip_error_fini", z.zip_error_fini, error);
    bind_symbol(lib, "libzip.so.4", "zip_fclose", z.zip_fclose, error);
    bind_symbol(lib, "libzip.so.4", "zip_error_init", z.zip_error_init, error);
    bind_symbol(lib, "libzip.so.4", "zip_error_strerror", z.zip_error_strerror, error);
    bind_symbol(lib, "libzip.so.4", "zip_file_add", z.zip_file_add, error);
    bind_symbol(lib, "libzip.so.4", "zip_file_set_dostime", z.zip_file_set_dostime, error);
    bind_symbol(lib, "libzip.so.4", "zip_file_strerror", z.zip_file_strerror, error);
    bind_symbol(lib, "libzip.so.4", "zip_fopen_index", z.zip_fopen_index, error);
    bind_symbol(lib, "libzip.so.4", "zip_fread", z.zip_fread, error);
    bind_symbol(lib, "libzip.so.4", "zip_get_num_entries", z.zip_get_num_entries, error);
    bind_symbol(lib, "libzip.so.4", "zip_open_from_source", z.zip_open_from_source, error);
    bind_symbol(lib, "libzip.so.4", "zip_set_file_compression", z.zip_set_file_compression, error);
    bind_symbol(lib, "libzip.so.4", "zip_source_buffer", z.zip_source_buffer, error);
    bind_symbol(lib, "libzip.so.4", "zip_source_buffer_create", z.zip_source_buffer_create, error);
    bind_symbol(lib, "libzip.so.4", "zip_source_close", z.zip_source_close, error);
    bind_symbol(lib, "libzip.so.4", "zip_source_error", z.zip_source_error, error);
    bind_symbol(lib, "libzip.so.4", "zip_source_free", z.zip_source_free, error);
    bind_symbol(lib, "libzip.so.4", "zip_source_keep", z.zip_source_keep, error);
    bind_symbol(lib, "libzip.so.4", "zip_source_open", z.zip_source_open, error);
    bind_symbol(lib, "libzip.so.4", "zip_source_read", z.zip_source_read, error);
    bind_symbol(lib, "libzip.so.4", "zip_stat_index", z.zip_stat_index, error);
    bind_symbol(lib, "libzip.so.4", "zip_strerror", z.zip_strerror, error);
    if (!error.empty()) fail("npz", "{}", error);
    return z;
  }();
  return z;
}

struct ZipCloser {
  void operator()(zip_t* z) const { lz().zip_discard(z); }
};

}  // namespace

// Reads the header, then the data straight into the tensor's storage (no whole-file buffer).
Tensor load_npy(const std::string& path) {
  const std::string_view op = "load_npy";
  const RegularFile f(path, op, unlimited());
  std::string head(std::min<size_t>(f.size(), 12), '\0');
  f.read_at(0, head.data(), head.size());
  head.resize(std::min(header_end(head, op, path), f.size()));
  f.read_at(0, head.data(), head.size());
  size_t data_at = 0;
  const NpyHeader h = parse_header(head, op, path, data_at);
  return make_tensor(
      h, f.size() - data_at, [&](char* dst, size_t n) { f.read_at(data_at, dst, n); }, op, path);
}

void save_npy(const Tensor& t, const std::string& path) {
  const std::string bytes = npy_bytes(t, "save_npy", "the tensor");
  AtomicFile out(path, "save_npy");
  out.write(bytes);
  out.commit();
}

std::map<std::string, Tensor> load_npz(const std::string& path) {
  const std::string_view op = "load_npz";
  const std::string bytes = read_regular_file(path, op, unlimited());
  zip_error_t error;
  lz().zip_error_init(&error);
  zip_source_t* src = lz().zip_source_buffer_create(bytes.data(), bytes.size(), 0, &error);
  if (!src) fail(op, "{}: {}", path, lz().zip_error_strerror(&error));
  std::unique_ptr<zip_t, ZipCloser> zip(lz().zip_open_from_source(src, ZIP_RDONLY | ZIP_CHECKCONS, &error));
  if (!zip) {
    lz().zip_source_free(src);
    const std::string why = lz().zip_error_strerror(&error);
    lz().zip_error_fini(&error);
    fail(op, "{}: not a readable .npz (zip) archive: {}", path, why);
  }
  std::map<std::string, Tensor> out;
  const zip_int64_t n = lz().zip_get_num_entries(zip.get(), 0);
  for (zip_int64_t i = 0; i < n; ++i) {
    zip_stat_t st;
    if (lz().zip_stat_index(zip.get(), static_cast<zip_uint64_t>(i), 0, &st) != 0)
      fail(op, "{}: entry {}: {}", path, i, lz().zip_strerror(zip.get()));
    std::string name = st.name;
    const std::string where = path + ", entry '" + name + "'";
    if (name.size() > 4 && name.compare(name.size() - 4, 4, ".npy") == 0) name.resize(name.size() - 4);
    std::unique_ptr<zip_file_t, int (*)(zip_file_t*)> file(lz().zip_fopen_index(zip.get(), static_cast<zip_uint64_t>(i), 0),
                                                           lz().zip_fclose);
    if (!file) fail(op, "{}: {}", where, lz().zip_strerror(zip.get()));
    std::string entry(st.size, '\0');
    const zip_int64_t got = lz().zip_fread(file.get(), entry.data(), st.size);
    if (got < 0 || static_cast<zip_uint64_t>(got) != st.size)
      fail(op, "{}: {}", where, got < 0 ? lz().zip_file_strerror(file.get()) : "the entry is shorter than its size");
    out.emplace(name, parse_npy(entry, op, where));
  }
  return out;
}

void save_npz(const std::map<std::string, Tensor>& tensors, const std::string& path) {
  const std::string_view op = "save_npz";
  std::vector<std::string> entries;  // the buffers libzip reads from until the archive closes
  entries.reserve(tensors.size());
  zip_error_t error;
  lz().zip_error_init(&error);
  zip_source_t* archive = lz().zip_source_buffer_create(nullptr, 0, 0, &error);
  if (!archive) fail(op, "{}", lz().zip_error_strerror(&error));
  lz().zip_source_keep(archive);  // read back after the archive closes
  struct SourceFree {
    zip_source_t* s;
    ~SourceFree() { lz().zip_source_free(s); }
  } keep{archive};
  zip_t* zip = lz().zip_open_from_source(archive, ZIP_TRUNCATE, &error);
  if (!zip) fail(op, "{}", lz().zip_error_strerror(&error));
  std::unique_ptr<zip_t, ZipCloser> guard(zip);
  for (const auto& [name, t] : tensors) {
    entries.push_back(npy_bytes(t, op, "tensor '" + name + "'"));
    zip_source_t* s = lz().zip_source_buffer(zip, entries.back().data(), entries.back().size(), 0);
    const zip_int64_t idx = s ? lz().zip_file_add(zip, (name + ".npy").c_str(), s, ZIP_FL_ENC_UTF_8) : -1;
    if (idx < 0) {
      if (s) lz().zip_source_free(s);
      fail(op, "tensor '{}': {}", name, lz().zip_strerror(zip));
    }
    lz().zip_set_file_compression(zip, static_cast<zip_uint64_t>(idx), ZIP_CM_STORE, 0);
    // 1980-01-01 00:00 in DOS time, as numpy.savez dates its entries: the same tensors give the
    // same bytes.
    lz().zip_file_set_dostime(zip, static_cast<zip_uint64_t>(idx), 0, (1 << 5) | 1, 0);
  }
  zip = guard.release();
  if (lz().zip_close(zip) != 0) {
    const std::string why = lz().zip_strerror(zip);
    lz().zip_discard(zip);
    fail(op, "{}", why);
  }
  if (lz().zip_source_open(archive) != 0) fail(op, "{}", lz().zip_error_strerror(lz().zip_source_error(archive)));
  std::string bytes;
  char buf[1 << 16];
  zip_int64_t got = 0;
  while ((got = lz().zip_source_read(archive, buf, sizeof buf)) > 0) bytes.append(buf, static_cast<size_t>(got));
  lz().zip_source_close(archive);
  if (got < 0) fail(op, "{}", lz().zip_error_strerror(lz().zip_source_error(archive)));
  AtomicFile out(path, op);
  out.write(bytes);
  out.commit();
}

}  // namespace kiln
