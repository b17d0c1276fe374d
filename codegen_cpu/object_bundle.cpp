// kiln/codegen_cpu/object_bundle.cpp — several object files as one cache entry (object_bundle.h).
#include "codegen_cpu/object_bundle.h"

#include <charconv>
#include <cstdint>

namespace kiln::cpu {

namespace {

constexpr std::string_view kMagic = "kiln-objects 1\n";

// A decimal number and its newline at `at`, which moves past them.
std::optional<size_t> read_line_number(std::string_view s, size_t& at) {
  const size_t nl = s.find('\n', at);
  if (nl == std::string_view::npos || nl == at) return std::nullopt;
  size_t v = 0;
  auto [end, ec] = std::from_chars(s.data() + at, s.data() + nl, v);
  if (ec != std::errc() || end != s.data() + nl) return std::nullopt;
  at = nl + 1;
  return v;
}

}  // namespace

std::string pack_objects(const std::vector<std::string>& objects) {
  if (objects.size() == 1) return objects.front();
  std::string out(kMagic);
  out += std::to_string(objects.size()) + "\n";
  for (const std::string& o : objects) out += std::to_string(o.size()) + "\n";
  for (const std::string& o : objects) out += o;
  return out;
}

std::optional<std::vector<std::string_view>> unpack_objects(std::string_view entry) {
  if (entry.substr(0, kMagic.size()) != kMagic) return std::vector<std::string_view>{entry};
  size_t at = kMagic.size();
  const std::optional<size_t> count = read_line_number(entry, at);
  if (!count || *count < 2 || *count > 4096) return std::nullopt;
  std::vector<size_t> sizes;
  for (size_t i = 0; i < *count; ++i) {
    const std::optional<size_t> n = read_line_number(entry, at);
    if (!n) return std::nullopt;
    sizes.push_back(*n);
  }
  std::vector<std::string_view> out;
  for (size_t n : sizes) {
    if (n > entry.size() - at) return std::nullopt;
    out.push_back(entry.substr(at, n));
    at += n;
  }
  if (at != entry.size()) return std::nullopt;
  return out;
}

}  // namespace kiln::cpu
