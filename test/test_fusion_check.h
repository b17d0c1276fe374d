// kiln/test/test_fusion_check.h — a small in-process CHECK matcher for text IR tests.
//
// Expectations live next to the IR they describe, as comments of the .kir file:
//
//   # CHECK-KERNELS: 1          the plan has exactly 1 generated kernel
//   # CHECK-KERNELS-MAX: 2      ... at most 2
//   # CHECK-EXTERNS: 1          exactly 1 extern step (mm, bmm)
//   # CHECK: reduce amax        a later line contains the text (matched in order)
//   # CHECK-NEXT: yield         the line right after the previous match contains it
//   # CHECK-NOT: temp           no line between the previous match and the next one (or the
//                               end of the output) contains it
//   # CHECK-COUNT-2: reduce sum exactly 2 lines of the whole output contain it
//
// parse_checks reads the directives of a source text; match_checks matches the text ones
// against an output (ExecPlan::str()) and returns "" or what failed, with the line numbers.
// The count directives (KERNELS, EXTERNS) are read by the test that has the plan.
#pragma once

#include <fmt/format.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::test {

enum class CheckKind { Check, Next, Not, Count, Kernels, KernelsMax, Externs };

struct CheckDirective {
  CheckKind kind = CheckKind::Check;
  std::string text;    // Check / Next / Not / Count
  int64_t n = 0;       // Count / Kernels / KernelsMax / Externs
  int source_line = 0; // 1-based line of the directive in its source
};

inline std::vector<std::string_view> split_lines(std::string_view s) {
  std::vector<std::string_view> out;
  size_t b = 0;
  while (b < s.size()) {
    size_t e = s.find('\n', b);
    if (e == std::string_view::npos) e = s.size();
    out.push_back(s.substr(b, e - b));
    b = e + 1;
  }
  return out;
}

inline std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

// Reads every "# CHECK...: text" comment. An unknown CHECK directive or a bad number throws
// std::invalid_argument naming the line, so a typo cannot silently disable a check.
inline std::vector<CheckDirective> parse_checks(std::string_view source) {
  std::vector<CheckDirective> out;
  std::vector<std::string_view> lines = split_lines(source);
  for (size_t i = 0; i < lines.size(); ++i) {
    std::string_view l = trim(lines[i]);
    if (l.empty() || l.front() != '#') continue;
    l = trim(l.substr(1));
    if (l.substr(0, 5) != "CHECK") continue;
    const size_t colon = l.find(':');
    if (colon == std::string_view::npos)
      throw std::invalid_argument(fmt::format("line {}: CHECK directive without ':'", i + 1));
    const std::string_view head = l.substr(0, colon);
    const std::string text(trim(l.substr(colon + 1)));
    CheckDirective d;
    d.source_line = static_cast<int>(i + 1);
    auto number = [&](std::string_view s) {
      if (s.empty()) throw std::invalid_argument(fmt::format("line {}: expected a number", i + 1));
      int64_t v = 0;
      for (char c : s) {
        if (c < '0' || c > '9') throw std::invalid_argument(fmt::format("line {}: bad number '{}'", i + 1, s));
        v = v * 10 + (c - '0');
      }
      return v;
    };
    if (head == "CHECK") {
      d.kind = CheckKind::Check;
    } else if (head == "CHECK-NEXT") {
      d.kind = CheckKind::Next;
    } else if (head == "CHECK-NOT") {
      d.kind = CheckKind::Not;
    } else if (head.substr(0, 12) == "CHECK-COUNT-") {
      d.kind = CheckKind::Count;
      d.n = number(head.substr(12));
    } else if (head == "CHECK-KERNELS") {
      d.kind = CheckKind::Kernels;
      d.n = number(text);
    } else if (head == "CHECK-KERNELS-MAX") {
      d.kind = CheckKind::KernelsMax;
      d.n = number(text);
    } else if (head == "CHECK-EXTERNS") {
      d.kind = CheckKind::Externs;
      d.n = number(text);
    } else {
      throw std::invalid_argument(fmt::format("line {}: unknown directive '{}'", i + 1, head));
    }
    if (d.kind == CheckKind::Check || d.kind == CheckKind::Next || d.kind == CheckKind::Not ||
        d.kind == CheckKind::Count) {
      if (text.empty()) throw std::invalid_argument(fmt::format("line {}: empty pattern", i + 1));
      d.text = text;
    }
    out.push_back(std::move(d));
  }
  return out;
}

// Matches the text directives (Check, Next, Not, Count) against `output`; returns "" when all
// hold, else a description of the first failure.
inline std::string match_checks(const std::vector<CheckDirective>& checks, std::string_view output) {
  const std::vector<std::string_view> lines = split_lines(output);
  auto contains = [&](size_t line, const std::string& t) { return lines[line].find(t) != std::string_view::npos; };
  size_t cursor = 0;                       // first line a CHECK may match
  std::optional<size_t> last_match;        // line of the previous positive match
  std::vector<const CheckDirective*> nots; // pending CHECK-NOTs
  auto check_nots = [&](size_t from, size_t to) -> std::string {
    for (const CheckDirective* n : nots)
      for (size_t l = from; l < to; ++l)
        if (contains(l, n->text))
          return fmt::format("CHECK-NOT (line {}): '{}' found on output line {}: {}", n->source_line, n->text, l + 1,
                             lines[l]);
    nots.clear();
    return "";
  };
  for (const CheckDirective& d : checks) {
    switch (d.kind) {
      case CheckKind::Check: {
        size_t l = cursor;
        while (l < lines.size() && !contains(l, d.text)) ++l;
        if (l == lines.size())
          return fmt::format("CHECK (line {}): '{}' not found after output line {}", d.source_line, d.text, cursor);
        if (std::string e = check_nots(cursor, l); !e.empty()) return e;
        last_match = l;
        cursor = l + 1;
        break;
      }
      case CheckKind::Next: {
        if (!last_match) return fmt::format("CHECK-NEXT (line {}) has no previous CHECK", d.source_line);
        if (!nots.empty()) return fmt::format("CHECK-NEXT (line {}) right after a CHECK-NOT", d.source_line);
        const size_t l = *last_match + 1;
        if (l >= lines.size() || !contains(l, d.text))
          return fmt::format("CHECK-NEXT (line {}): '{}' not on output line {}: {}", d.source_line, d.text, l + 1,
                             l < lines.size() ? lines[l] : std::string_view("<end>"));
        last_match = l;
        cursor = l + 1;
        break;
      }
      case CheckKind::Not: nots.push_back(&d); break;
      case CheckKind::Count: {
        int64_t n = 0;
        for (size_t l = 0; l < lines.size(); ++l) n += contains(l, d.text) ? 1 : 0;
        if (n != d.n)
          return fmt::format("CHECK-COUNT-{} (line {}): '{}' is on {} lines", d.n, d.source_line, d.text, n);
        break;
      }
      case CheckKind::Kernels:
      case CheckKind::KernelsMax:
      case CheckKind::Externs: break;
    }
  }
  return check_nots(cursor, lines.size());
}

}  // namespace kiln::test
