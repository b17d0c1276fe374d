// kiln/base/object_store.cpp — code source names.
#include "base/object_store.h"

namespace kiln {

std::string_view code_source_name(CodeSource s) {
  switch (s) {
    case CodeSource::Compiled: return "compiled";
    case CodeSource::Memory: return "memory";
    case CodeSource::Disk: return "disk";
    case CodeSource::Remote: return "remote";
  }
  return "?";
}

}  // namespace kiln
