// kiln/nn/container.cpp — Sequential, ModuleList and ModuleDict (nn/container.h).
#include "nn/container.h"

#include "base/error.h"

namespace kiln::nn {

std::shared_ptr<Module> SequentialImpl::operator[](size_t i) const {
  const std::vector<std::shared_ptr<Module>> all = children();
  if (i >= all.size()) fail("Sequential", "index {} is out of range for a Sequential of {} modules", i, all.size());
  return all[i];
}

std::shared_ptr<Module> ModuleListImpl::operator[](size_t i) const {
  if (i >= modules_.size()) fail("ModuleList", "index {} is out of range for a ModuleList of {} modules", i, modules_.size());
  return modules_[i];
}

std::shared_ptr<Module> ModuleDictImpl::operator[](const std::string& key) const {
  const std::shared_ptr<Module>* m = children_.find(key);
  if (!m) fail("ModuleDict", "no module named '{}'", key);
  return *m;
}

}  // namespace kiln::nn
