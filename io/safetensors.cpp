// kiln/io/safetensors.cpp — the safetensors reader and writer (io/safetensors.h).
#include "io/safetensors.h"

#include "base/atomic_file.h"
#include "base/error.h"
#include "base/read_file.h"
#include "base/storage.h"
#include "frontend/from_blob.h"
#include "frontend/ops_factory.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <vector>

namespace kiln {

namespace {

using nlohmann::json;

// The format's own limit on the header (safetensors rejects larger ones).
constexpr uint64_t kMaxHeaderBytes = 100'000'000;

struct DtypeName {
  ScalarType type;
  const char* name;
};
constexpr DtypeName kDtypes[] = {
    {ScalarType::Bool, "BOOL"}, {ScalarType::UInt8, "U8"},   {ScalarType::Int8, "I8"},
    {ScalarType::Int16, "I16"}, {ScalarType::Int32, "I32"},  {ScalarType::Int64, "I64"},
    {ScalarType::Half, "F16"},  {ScalarType::BFloat16, "BF16"}, {ScalarType::Float, "F32"},
    {ScalarType::Double, "F64"},
};

const char* dtype_name_of(ScalarType t) {
  for (const DtypeName& d : kDtypes)
    if (d.type == t) return d.name;
  internal_fail("safetensors: dtype {}", dtype_name(t));
}

std::optional<ScalarType> dtype_of(const std::string& name) {
  for (const DtypeName& d : kDtypes)
    if (name == d.name) return d.type;
  return std::nullopt;
}

Tensor host_contiguous(const Tensor& t, const std::string& name) {
  if (!t.defined()) fail("save_safetensors", "tensor '{}' is undefined", name);
  if (t.impl()->is_traced())
    fail("save_safetensors", "tensor '{}' is a traced tensor; save outside compile()", name);
  Tensor h = t.device().is_cpu() ? t : t.to(Device(DeviceType::CPU));
  return h.is_contiguous() ? h : h.contiguous();
}

// One tensor's entry in a file's header, checked.
struct Entry {
  std::string name;
  ScalarType dtype;
  std::vector<int64_t> shape;
  uint64_t begin = 0, end = 0;
};

uint64_t checked_uint(const json& v, const std::string& path, const std::string& name, const char* what) {
  if (v.is_number_unsigned()) return v.get<uint64_t>();
  if (v.is_number_integer() && v.get<int64_t>() >= 0) return static_cast<uint64_t>(v.get<int64_t>());
  fail("load_safetensors", "{}: tensor '{}' has {} {}, expected a non-negative integer", path, name, what, v.dump());
}

Entry parse_entry(const std::string& path, const std::string& name, const json& v) {
  const std::string_view op = "load_safetensors";
  if (!v.is_object()) fail(op, "{}: the header entry of tensor '{}' is not an object", path, name);
  Entry e;
  e.name = name;
  auto dtype = v.find("dtype");
  auto shape = v.find("shape");
  auto offsets = v.find("data_offsets");
  if (dtype == v.end() || shape == v.end() || offsets == v.end())
    fail(op, "{}: tensor '{}' lacks one of dtype, shape and data_offsets", path, name);
  if (!dtype->is_string()) fail(op, "{}: tensor '{}' has dtype {}, expected a string", path, name, dtype->dump());
  const std::optional<ScalarType> t = dtype_of(dtype->get<std::string>());
  if (!t)
    fail(op, "{}: tensor '{}' has dtype {}, which kiln does not read (BOOL, U8, I8, I16, I32, I64, F16, BF16, F32, F64)",
         path, name, dtype->get<std::string>());
  e.dtype = *t;
  if (!shape->is_array()) fail(op, "{}: tensor '{}' has shape {}, expected an array", path, name, shape->dump());
  for (const json& s : *shape) {
    const uint64_t n = checked_uint(s, path, name, "a dimension of");
    if (n > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
      fail(op, "{}: tensor '{}' has a dimension of {}", path, name, n);
    e.shape.push_back(static_cast<int64_t>(n));
  }
  if (!offsets->is_array() || offsets->size() != 2)
    fail(op, "{}: tensor '{}' has data_offsets {}, expected [begin, end]", path, name, offsets->dump());
  e.begin = checked_uint((*offsets)[0], path, name, "a data offset of");
  e.end = checked_uint((*offsets)[1], path, name, "a data offset of");
  const size_t nbytes = checked_nbytes(op, e.shape, e.dtype);
  if (e.end < e.begin || e.end - e.begin != nbytes)
    fail(op, "{}: tensor '{}' ({} {}) needs {} bytes, but its data_offsets [{}, {}] hold {}", path, name,
         dtype->get<std::string>(), shape_str(e.shape), nbytes, e.begin, e.end,
         e.end < e.begin ? std::string("none") : std::to_string(e.end - e.begin));
  return e;
}

struct Header {
  std::vector<Entry> entries;
  std::map<std::string, std::string> metadata;
  uint64_t data_start = 0;
};

// Bytes in memory read as a file is (an exported program's weights section).
class ByteSource {
 public:
  ByteSource(std::string_view bytes, std::string name) : bytes_(bytes), name_(std::move(name)) {}
  size_t size() const { return bytes_.size(); }
  const std::string& path() const { return name_; }
  void read_at(size_t offset, void* dst, size_t n) const {
    if (offset > bytes_.size() || n > bytes_.size() - offset)
      fail("load_safetensors", "{}: reading {} bytes at {} runs past its {} bytes", name_, n, offset, bytes_.size());
    std::memcpy(dst, bytes_.data() + offset, n);
  }

 private:
  std::string_view bytes_;
  std::string name_;
};

template <typename Source> Header read_header(const Source& f) {
  const std::string_view op = "load_safetensors";
  const std::string& path = f.path();
  if (f.size() < 8) fail(op, "{}: {} bytes is too short for a safetensors file (truncated?)", path, f.size());
  unsigned char len_bytes[8];
  f.read_at(0, len_bytes, 8);
  uint64_t len = 0;
  for (int i = 7; i >= 0; --i) len = (len << 8) | len_bytes[i];
  if (len > kMaxHeaderBytes) fail(op, "{}: the header length {} is past the format's limit of {} bytes", path, len, kMaxHeaderBytes);
  if (len > f.size() - 8)
    fail(op, "{}: the header length {} runs past the end of the {}-byte file (truncated?)", path, len, f.size());
  std::string text(len, '\0');
  f.read_at(8, text.data(), len);
  json header;
  try {
    header = json::parse(text);
  } catch (const json::exception& e) {
    fail(op, "{}: the header is not valid JSON: {}", path, e.what());
  }
  if (!header.is_object()) fail(op, "{}: the header is not a JSON object", path);
  Header h;
  h.data_start = 8 + len;
  for (auto it = header.begin(); it != header.end(); ++it) {
    if (it.key() == "__metadata__") {
      if (!it->is_object()) fail(op, "{}: __metadata__ is not an object", path);
      for (auto m = it->begin(); m != it->end(); ++m) {
        if (!m->is_string()) fail(op, "{}: __metadata__ entry '{}' is not a string", path, m.key());
        h.metadata[m.key()] = m->get<std::string>();
      }
      continue;
    }
    h.entries.push_back(parse_entry(path, it.key(), *it));
  }
  // The byte ranges must tile the data section: no gaps, no overlaps, nothing past its end.
  std::vector<const Entry*> by_offset;
  for (const Entry& e : h.entries) by_offset.push_back(&e);
  std::sort(by_offset.begin(), by_offset.end(), [](const Entry* a, const Entry* b) {
    return a->begin != b->begin ? a->begin < b->begin : a->end < b->end;
  });
  const uint64_t data_bytes = f.size() - h.data_start;
  uint64_t at = 0;
  for (const Entry* e : by_offset) {
    if (e->begin != at)
      fail(op, "{}: tensor '{}' starts at byte {} of the data, expected {} ({} between tensors)", path, e->name,
           e->begin, at, e->begin > at ? "a gap" : "an overlap");
    if (e->end > data_bytes)
      fail(op, "{}: tensor '{}' needs bytes [{}, {}) of the data, but the file holds only {} (truncated?)", path,
           e->name, e->begin, e->end, data_bytes);
    at = e->end;
  }
  if (at != data_bytes)
    fail(op, "{}: the data section holds {} bytes, but the tensors cover {}", path, data_bytes, at);
  return h;
}

}  // namespace

namespace {

// The file's bytes, written by `write(data, n)` in order.
template <typename Write>
void write_safetensors(const std::map<std::string, Tensor>& tensors, const std::map<std::string, std::string>& metadata,
                       std::string_view op, Write&& write) {
  std::vector<Tensor> host;
  json header = json::object();
  if (!metadata.empty()) header["__metadata__"] = metadata;
  uint64_t offset = 0;
  for (const auto& [name, t] : tensors) {
    if (name == "__metadata__") fail(op, "'__metadata__' is reserved and cannot name a tensor");
    host.push_back(host_contiguous(t, name));
    const Tensor& h = host.back();
    const uint64_t n = static_cast<uint64_t>(h.numel()) * element_size(h.dtype());
    header[name] = {{"dtype", dtype_name_of(h.dtype())}, {"shape", h.sizes().vec()}, {"data_offsets", {offset, offset + n}}};
    offset += n;
  }
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');  // the data starts 8-byte aligned, as safetensors pads it
  unsigned char len[8];
  for (int i = 0; i < 8; ++i) len[i] = static_cast<unsigned char>(static_cast<uint64_t>(text.size()) >> (8 * i));
  write(len, 8);
  write(text.data(), text.size());
  for (const Tensor& h : host) write(h.data_ptr(), static_cast<size_t>(h.numel()) * element_size(h.dtype()));
}

template <typename Source> std::map<std::string, Tensor> read_tensors(const Source& f, Device device) {
  const Header h = read_header(f);
  std::map<std::string, Tensor> out;
  for (const Entry& e : h.entries) {
    Tensor t = empty(e.shape, TensorOptions(e.dtype));
    f.read_at(h.data_start + e.begin, t.data_ptr(), e.end - e.begin);
    if (e.dtype == ScalarType::Bool) {  // anything but 0 and 1 would be an invalid bool
      const uint8_t* p = static_cast<const uint8_t*>(t.data_ptr());
      for (size_t i = 0; i < e.end - e.begin; ++i)
        if (p[i] > 1) fail("load_safetensors", "{}: tensor '{}' (BOOL) holds byte {} at element {}", f.path(), e.name, p[i], i);
    }
    out.emplace(e.name, device.is_cpu() ? t : t.to(device));
  }
  return out;
}

}  // namespace

void save_safetensors(const std::map<std::string, Tensor>& tensors, const std::string& path,
                      const std::map<std::string, std::string>& metadata) {
  AtomicFile out(path, "save_safetensors");
  write_safetensors(tensors, metadata, "save_safetensors", [&](const void* p, size_t n) { out.write(p, n); });
  out.commit();
}

std::string safetensors_bytes(const std::map<std::string, Tensor>& tensors, const std::map<std::string, std::string>& metadata) {
  std::string out;
  write_safetensors(tensors, metadata, "safetensors_bytes",
                    [&](const void* p, size_t n) { out.append(static_cast<const char*>(p), n); });
  return out;
}

std::map<std::string, Tensor> load_safetensors_bytes(std::string_view bytes, const std::string& what, Device device) {
  return read_tensors(ByteSource(bytes, what), device);
}

std::map<std::string, Tensor> view_safetensors_bytes(std::string_view bytes, const std::string& what,
                                                     std::shared_ptr<const void> owner) {
  const ByteSource src(bytes, what);
  const Header h = read_header(src);
  std::map<std::string, Tensor> out;
  for (const Entry& e : h.entries) {
    const char* data = bytes.data() + h.data_start + e.begin;
    const size_t n = e.end - e.begin;
    if (e.dtype == ScalarType::Bool)  // anything but 0 and 1 would be an invalid bool
      for (size_t i = 0; i < n; ++i)
        if (static_cast<unsigned char>(data[i]) > 1)
          fail("load_safetensors", "{}: tensor '{}' (BOOL) holds byte {} at element {}", what, e.name,
               static_cast<unsigned char>(data[i]), i);
    if (reinterpret_cast<uintptr_t>(data) % element_size(e.dtype) != 0) {  // kernels load whole elements
      Tensor t = empty(e.shape, TensorOptions(e.dtype));
      std::memcpy(t.data_ptr(), data, n);
      out.emplace(e.name, t);
      continue;
    }
    // Read-only by contract: the tensors are an exported program's weights, never written.
    out.emplace(e.name, from_blob(const_cast<char*>(data), e.shape, [owner](void*) {}, TensorOptions(e.dtype)));
  }
  return out;
}

std::map<std::string, Tensor> load_safetensors(const std::string& path, Device device) {
  ReadOptions opts;
  opts.max_bytes = std::numeric_limits<size_t>::max();
  return read_tensors(RegularFile(path, "load_safetensors", opts), device);
}

std::map<std::string, std::string> load_safetensors_metadata(const std::string& path) {
  ReadOptions opts;
  opts.max_bytes = std::numeric_limits<size_t>::max();
  const RegularFile f(path, "load_safetensors", opts);
  return read_header(f).metadata;
}

}  // namespace kiln
