#include "cache/ptx.h"

#include "utils/text.h"

#include <cctype>
#include <map>
#include <set>

namespace ciq::cache {

namespace {

bool is_ident_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_' || c == '$' || c == '%'; }
bool is_ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$'; }

bool line_starts_with_directive(std::string_view line, std::string_view directive) {
  return starts_with(line, directive) &&
         (line.size() == directive.size() || line[directive.size()] == ' ' || line[directive.size()] == '\t');
}

std::vector<std::string> identifiers_of(std::string_view text) {
  std::set<std::string> seen;
  for (std::size_t i = 0; i < text.size();) {
    if (text[i] == '"') { // skip string literals
      auto end = text.find('"', i + 1);
      i = end == std::string_view::npos ? text.size() : end + 1;
    } else if (is_ident_start(text[i]) && (i == 0 || !is_ident_char(text[i - 1]))) {
      std::size_t j = i + 1;
      while (j < text.size() && is_ident_char(text[j])) ++j;
      if (text[i] != '%') seen.emplace(text.substr(i, j - i));
      i = j;
    } else {
      ++i;
    }
  }
  return {seen.begin(), seen.end()};
}

// The identifier after `keyword` (skipping a parenthesised return list for
// `.func`), or "".
std::string declared_function_name(std::string_view text, std::string_view keyword) {
  auto pos = text.find(keyword);
  if (pos == std::string_view::npos) return {};
  std::size_t i = pos + keyword.size();
  while (i < text.size() && text[i] == ' ') ++i;
  if (i < text.size() && text[i] == '(') {
    int depth = 0;
    for (; i < text.size(); ++i) {
      if (text[i] == '(') ++depth;
      if (text[i] == ')' && --depth == 0) { ++i; break; }
    }
    while (i < text.size() && text[i] == ' ') ++i;
  }
  std::size_t j = i;
  while (j < text.size() && is_ident_char(text[j])) ++j;
  return std::string(text.substr(i, j - i));
}

// Variable name of a declaration such as `.global .align 4 .b8 g[16] = {..};`:
// the last identifier before `[`, `=` or `;`.
std::string declared_variable_name(std::string_view text) {
  auto end = text.find_first_of("[=;");
  std::string_view head = text.substr(0, end);
  std::string name;
  for (std::size_t i = 0; i < head.size();) {
    if (is_ident_start(head[i]) && (i == 0 || !is_ident_char(head[i - 1])) && head[i] != '%' &&
        (i == 0 || head[i - 1] != '.')) {
      std::size_t j = i + 1;
      while (j < head.size() && is_ident_char(head[j])) ++j;
      name = std::string(head.substr(i, j - i));
      i = j;
    } else {
      ++i;
    }
  }
  return name;
}

PtxItem classify(std::string text) {
  PtxItem item;
  std::string_view t = text;
  if (line_starts_with_directive(t, ".version") || line_starts_with_directive(t, ".target") ||
      line_starts_with_directive(t, ".address_size")) {
    item.kind = PtxItemKind::header;
  } else if (auto brace = t.find('{'), entry = t.find(".entry "); entry != std::string_view::npos && entry < brace) {
    item.kind = PtxItemKind::entry;
    item.name = declared_function_name(t, ".entry");
  } else if (auto func = t.find(".func"); func != std::string_view::npos && func < t.find('{')) {
    item.kind = PtxItemKind::function;
    item.name = declared_function_name(t, ".func");
  } else if (!t.empty() && t.back() == ';') {
    item.kind = PtxItemKind::declaration;
    item.name = declared_variable_name(t);
  }
  item.identifiers = identifiers_of(t);
  item.text = std::move(text);
  return item;
}

} // namespace

std::string normalise_ptx(std::string_view ptx) {
  std::string out;
  out.reserve(ptx.size());
  bool in_block_comment = false;
  for (std::string_view raw : split(ptx, '\n')) {
    std::string line;
    for (std::size_t i = 0; i < raw.size(); ++i) {
      if (in_block_comment) {
        if (raw.compare(i, 2, "*/") == 0) { in_block_comment = false; ++i; }
        continue;
      }
      if (raw[i] == '"') { // keep string literals whole
        auto end = raw.find('"', i + 1);
        std::size_t stop = end == std::string_view::npos ? raw.size() : end + 1;
        line.append(raw.substr(i, stop - i));
        i = stop - 1;
        continue;
      }
      if (raw.compare(i, 2, "//") == 0) break;
      if (raw.compare(i, 2, "/*") == 0) { in_block_comment = true; ++i; line += ' '; continue; }
      char c = raw[i];
      if (c == '\t' || c == '\r' || c == '\f' || c == '\v') c = ' ';
      if (c == ' ' && (line.empty() || line.back() == ' ')) continue;
      line += c;
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    if (line.empty() || line_starts_with_directive(line, ".loc") || line_starts_with_directive(line, ".file"))
      continue;
    out += line;
    out += '\n';
  }
  return out;
}

PtxModule scan_ptx(std::string_view ptx) {
  PtxModule module;
  module.normalised = normalise_ptx(ptx);
  std::string_view text = module.normalised;

  // Top-level items end at a `;` outside braces, at the `}` closing a
  // function body, or (for the line-based header directives) at a newline.
  std::string current;
  int depth = 0;
  auto flush = [&] {
    std::string_view t = trim(current);
    if (!t.empty()) module.items.push_back(classify(std::string(t)));
    current.clear();
  };
  for (std::size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '"') {
      auto end = text.find('"', i + 1);
      std::size_t stop = end == std::string_view::npos ? text.size() : end + 1;
      current.append(text.substr(i, stop - i));
      i = stop - 1;
      continue;
    }
    current += c;
    if (c == '{') ++depth;
    else if (c == '}' && depth > 0 && --depth == 0) {
      std::string_view t = trim(current);
      bool has_body = t.find(".entry") != std::string_view::npos || t.find(".func") != std::string_view::npos ||
                      starts_with(t, ".section") || t.front() == '{';
      if (has_body) flush();
    } else if (depth == 0 && c == ';') {
      flush();
    } else if (depth == 0 && c == '\n') {
      std::string_view t = trim(current);
      if (line_starts_with_directive(t, ".version") || line_starts_with_directive(t, ".target") ||
          line_starts_with_directive(t, ".address_size"))
        flush();
    }
  }
  flush();

  for (std::size_t i = 0; i < module.items.size(); ++i)
    if (module.items[i].kind == PtxItemKind::entry) module.entries.push_back(i);
  return module;
}

std::vector<std::string> PtxModule::kernel_names() const {
  std::vector<std::string> names;
  for (auto i : entries) names.push_back(items[i].name);
  return names;
}

// The product of the one to three integers after `directive` in `head`
// (".maxntid 128, 2, 1" -> 256); 0 when absent, malformed or implausible.
static long directive_product(std::string_view head, std::string_view directive) {
  std::size_t at = head.find(directive);
  if (at == std::string_view::npos) return 0;
  std::string_view rest = head.substr(at + directive.size());
  long product = 1;
  int dims = 0;
  for (auto part : split(rest.substr(0, rest.find_first_of(";\n")), ',')) {
    auto v = parse_integer(trim(part));
    if (!v || *v <= 0 || *v > (1 << 20) || ++dims > 3) return 0;
    product *= long(*v);
  }
  return dims > 0 && product <= (1 << 20) ? product : 0;
}

long PtxModule::block_threads(std::string_view kernel) const {
  for (auto i : entries) {
    if (items[i].name != kernel) continue;
    // Performance directives sit between the parameter list and the body;
    // .reqntid is exact, .maxntid a bound.
    std::string_view head(items[i].text);
    head = head.substr(0, head.find('{'));
    long required = directive_product(head, ".reqntid");
    return required ? required : directive_product(head, ".maxntid");
  }
  return 0;
}

std::string PtxModule::kernel_closure_text(std::string_view kernel) const {
  std::map<std::string_view, std::size_t> by_name;
  std::size_t root = items.size();
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (items[i].name.empty()) continue;
    // A definition wins over an earlier prototype of the same function.
    auto [it, inserted] = by_name.emplace(items[i].name, i);
    if (!inserted && items[i].text.find('{') != std::string::npos) it->second = i;
    if (items[i].kind == PtxItemKind::entry && items[i].name == kernel) root = i;
  }
  if (root == items.size()) return {};

  std::vector<bool> wanted(items.size(), false);
  std::vector<std::size_t> work{root};
  wanted[root] = true;
  while (!work.empty()) {
    std::size_t i = work.back();
    work.pop_back();
    for (const auto& id : items[i].identifiers) {
      auto it = by_name.find(id);
      if (it != by_name.end() && !wanted[it->second] && items[it->second].kind != PtxItemKind::entry) {
        wanted[it->second] = true;
        work.push_back(it->second);
      }
    }
  }
  std::string out;
  for (std::size_t i = 0; i < items.size(); ++i)
    if (wanted[i] || items[i].kind == PtxItemKind::header) {
      out += items[i].text;
      out += '\n';
    }
  return out;
}

} // namespace ciq::cache
