// kiln/ir/kernel_abi.cpp — kernel faults as the op errors the interpreter raises.
#include "ir/kernel_abi.h"

#include "base/error.h"

#include <fmt/format.h>

namespace kiln::ir {

namespace {

// "[op] message" without the brackets: the op and the message, for fail().
std::pair<std::string_view, std::string> fault_parts(const Kernel& k, const KernelFault& f) {
  const std::vector<const KInst*> sites = check_sites(k);
  if (f.site < 1 || static_cast<size_t>(f.site) > sites.size())
    internal_fail("kernel {} reported fault site {}, but it has {} checks", k.name, f.site, sites.size());
  const KInst& c = *sites[static_cast<size_t>(f.site - 1)];
  switch (c.check) {
    case CheckKind::NonZero: return {op_name(c.op), "ZeroDivisionError"};
    case CheckKind::InBounds:
      return {op_name(c.op), fmt::format("index {} is out of bounds for dimension {} with size {}", f.value,
                                         c.value.to_int(), f.bound)};
  }
  internal_fail("unknown check kind {}", static_cast<int>(c.check));
}

}  // namespace

std::string kernel_fault_message(const Kernel& k, const KernelFault& f) {
  const auto [op, msg] = fault_parts(k, f);
  return fmt::format("[{}] {}", op, msg);
}

void raise_kernel_fault(const Kernel& k, const KernelFault& f) {
  const auto [op, msg] = fault_parts(k, f);
  fail(op, "{}", msg);
}

}  // namespace kiln::ir
