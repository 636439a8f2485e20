#include "spaces/render.h"

#include "utils/text.h"

#include <cctype>

namespace ciq::spaces {

static std::string substitute(std::string_view pattern, std::string_view value) {
  std::string out(pattern);
  auto pos = out.find("{}");
  if (pos != std::string::npos) out.replace(pos, 2, value); // flags render without a value
  return out;
}

RenderedControls render_controls(const Space& space, const spaces::ControlSet& set) {
  RenderedControls out;
  for (const auto& [name, value] : set.options)
    if (const Knob* k = space.find(name, KnobLevel::option)) out.options.push_back(substitute(k->render, value));
  for (const auto& [kernel, knobs] : set.kernels)
    for (const auto& [name, value] : knobs)
      if (const Knob* k = space.find(name, KnobLevel::directive)) {
        std::string line = substitute(k->render, value);
        out.directives[kernel].push_back(Directive{line.substr(0, line.find(' ')), line});
      }
  return out;
}

namespace {

bool ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$'; }

// Position just after the `)` closing the parameter list of entry `kernel`,
// and of the `{` opening its body; npos when not found.
std::pair<std::size_t, std::size_t> entry_header(std::string_view ptx, std::string_view kernel) {
  for (std::size_t pos = ptx.find(".entry"); pos != std::string_view::npos; pos = ptx.find(".entry", pos + 6)) {
    std::size_t i = pos + 6;
    if (i >= ptx.size() || !std::isspace(static_cast<unsigned char>(ptx[i]))) continue;
    while (i < ptx.size() && std::isspace(static_cast<unsigned char>(ptx[i]))) ++i;
    if (ptx.compare(i, kernel.size(), kernel) != 0) continue;
    i += kernel.size();
    if (i < ptx.size() && ident_char(ptx[i])) continue;
    while (i < ptx.size() && std::isspace(static_cast<unsigned char>(ptx[i]))) ++i;
    if (i >= ptx.size() || ptx[i] != '(') continue;
    auto close = ptx.find(')', i);
    if (close == std::string_view::npos) return {std::string_view::npos, std::string_view::npos};
    auto brace = ptx.find('{', close);
    auto semi = ptx.find(';', close);
    if (brace == std::string_view::npos || (semi != std::string_view::npos && semi < brace))
      continue; // a declaration without a body
    return {close + 1, brace};
  }
  return {std::string_view::npos, std::string_view::npos};
}

// Removes `keyword` and its arguments (digits, commas, blanks) from `region`.
std::string without_directive(std::string region, std::string_view keyword) {
  for (std::size_t pos = region.find(keyword); pos != std::string::npos; pos = region.find(keyword, pos)) {
    std::size_t end = pos + keyword.size();
    if (end < region.size() && ident_char(region[end])) {
      pos = end;
      continue;
    }
    while (end < region.size() && (std::isdigit(static_cast<unsigned char>(region[end])) || region[end] == ',' ||
                                   region[end] == ' ' || region[end] == '\t'))
      ++end;
    region.erase(pos, end - pos);
  }
  return region;
}

} // namespace

Result<std::string> apply_directives(std::string_view ptx,
                                     const std::map<std::string, std::vector<Directive>>& directives,
                                     std::vector<std::string>* applied) {
  std::string out(ptx);
  for (const auto& [kernel, list] : directives) {
    auto [after_params, brace] = entry_header(out, kernel);
    if (after_params == std::string::npos) {
      if (brace != std::string::npos || out.find(".entry " + kernel) != std::string::npos)
        return make_error("ptx", "cannot find the header of kernel '" + kernel + "' in the PTX");
      continue;
    }
    std::string region = out.substr(after_params, brace - after_params);
    std::string added;
    for (const auto& d : list) {
      region = without_directive(std::move(region), d.keyword);
      added += "\n" + d.line;
    }
    out.replace(after_params, brace - after_params, added + region);
    if (applied) applied->push_back(kernel);
  }
  return out;
}

} // namespace ciq::spaces
