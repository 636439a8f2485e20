// Cache keys. A key names "this PTX, compiled for this target by this ptxas
// with these codegen flags": XXH3-128 over a version tag, the kind, the
// normalised text, the target, the ptxas identity (its full --version text)
// and the canonical flags. Module keys hash the whole module; kernel keys
// hash one kernel's closure (its text and everything it uses), so editing
// one kernel of a .cu does not lose the entries of the others.
#pragma once

#include "cache/ptx.h"
#include "utils/hash.h"

#include <string>
#include <string_view>

namespace ciq::cache {

struct KeyContext {
  std::string target;   // sm_90a
  std::string identity; // ptxas --version text
  std::string flags;    // PtxasCommand::canonical_flags()
};

Hash128 module_key(const PtxModule& module, const KeyContext& context);

/// Key of one kernel of `module`; the kernel must exist in it.
Hash128 kernel_key(const PtxModule& module, std::string_view kernel, const KeyContext& context);

} // namespace ciq::cache
