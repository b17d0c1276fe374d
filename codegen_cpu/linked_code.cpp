// kiln/codegen_cpu/linked_code.cpp — linking a module's objects (linked_code.h).
#include "codegen_cpu/linked_code.h"

#include "codegen_cpu/perf_map.h"

#include <atomic>

namespace kiln::cpu {

namespace {
std::atomic<int64_t> live{0};  // linked modules not released yet
}  // namespace

LinkedCode::LinkedCode(std::unique_ptr<LoadedCode> code) : code_(std::move(code)) { live.fetch_add(1); }

LinkedCode::~LinkedCode() { live.fetch_sub(1); }

std::shared_ptr<const LinkedCode> link_objects(const std::vector<std::string_view>& objects,
                                               const std::vector<std::string>& names, std::string* error,
                                               const std::vector<std::string>* perf_labels) {
  std::unique_ptr<LoadedCode> code = load_objects(objects, names, error);
  if (!code) return nullptr;
  if (perf_labels) append_perf_map(code->functions(), names, *perf_labels);
  return std::make_shared<const LinkedCode>(std::move(code));
}

int64_t live_linked_modules() { return live.load(); }

}  // namespace kiln::cpu
