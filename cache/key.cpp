#include "cache/key.h"

namespace ciq::cache {

static Hash128 make_key(std::string_view kind, std::string_view name, std::string_view text,
                        const KeyContext& context) {
  Hasher h;
  h.add_field("ciq-key/1");
  h.add_field(kind);
  h.add_field(name);
  h.add_field(text);
  h.add_field(context.target);
  h.add_field(context.identity);
  h.add_field(context.flags);
  return h.digest();
}

Hash128 module_key(const PtxModule& module, const KeyContext& context) {
  return make_key("module", "", module.normalised, context);
}

Hash128 kernel_key(const PtxModule& module, std::string_view kernel, const KeyContext& context) {
  return make_key("kernel", kernel, module.kernel_closure_text(kernel), context);
}

} // namespace ciq::cache
