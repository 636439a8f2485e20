// Pointer parameters' element types from a kernel's signature (param_types.h).
#include "tuner/replay/param_types.h"

#include <algorithm>
#include <cstdlib>
#include <cxxabi.h>
#include <memory>
#include <string_view>

namespace ciq::replay {

namespace {

/// The text between the parentheses of the outermost parameter list, the
/// last balanced (...) of a demangled name ("void k<float>(float*, int)"
/// gives "float*, int"); std::nullopt when there is none.
std::optional<std::string_view> parameter_list(std::string_view demangled) {
  auto close = demangled.rfind(')');
  if (close == std::string_view::npos) return std::nullopt;
  int depth = 0;
  for (std::size_t i = close + 1; i-- > 0;) {
    if (demangled[i] == ')') ++depth;
    else if (demangled[i] == '(' && --depth == 0) return demangled.substr(i + 1, close - i - 1);
  }
  return std::nullopt;
}

/// `list` split at the commas outside (), <> and [].
std::vector<std::string_view> split_parameters(std::string_view list) {
  std::vector<std::string_view> out;
  int depth = 0;
  std::size_t start = 0;
  for (std::size_t i = 0; i < list.size(); ++i) {
    char c = list[i];
    if (c == '(' || c == '<' || c == '[') ++depth;
    else if (c == ')' || c == '>' || c == ']') --depth;
    else if (c == ',' && depth == 0) {
      out.push_back(list.substr(start, i - start));
      start = i + 1;
    }
  }
  out.push_back(list.substr(start));
  for (auto& p : out) {
    while (!p.empty() && p.front() == ' ') p.remove_prefix(1);
    while (!p.empty() && p.back() == ' ') p.remove_suffix(1);
  }
  if (out.size() == 1 && (out[0].empty() || out[0] == "void")) out.clear();
  return out;
}

/// The element type of a parameter's demangled text: a single pointer to
/// a floating-point builtin (qualifiers dropped), else `bytes`.
ElementType pointee_element(std::string_view text) {
  if (text.empty() || text.back() != '*') return ElementType::bytes;
  std::string_view pointee = text.substr(0, text.size() - 1);
  if (pointee.find_first_of("*&()[]<>:") != std::string_view::npos) return ElementType::bytes;  // not a builtin pointee
  // The words of the pointee without its qualifiers ("float const
  // restrict" is float): exactly one must be left.
  std::string_view base;
  int words = 0;
  for (std::size_t i = 0; i < pointee.size();) {
    while (i < pointee.size() && pointee[i] == ' ') ++i;
    std::size_t j = i;
    while (j < pointee.size() && pointee[j] != ' ') ++j;
    std::string_view word = pointee.substr(i, j - i);
    i = j;
    if (word.empty() || word == "const" || word == "volatile" || word == "restrict" || word == "__restrict__") continue;
    base = word;
    ++words;
  }
  if (words != 1) return ElementType::bytes;  // "unsigned int", "long long": integers
  struct Name {
    std::string_view name;
    ElementType type;
  };
  static constexpr Name k_floats[] = {
      {"float", ElementType::f32},           {"float1", ElementType::f32},          {"float2", ElementType::f32},
      {"float3", ElementType::f32},          {"float4", ElementType::f32},          {"double", ElementType::f64},
      {"double1", ElementType::f64},         {"double2", ElementType::f64},         {"double3", ElementType::f64},
      {"double4", ElementType::f64},         {"__half", ElementType::f16},          {"__half2", ElementType::f16},
      {"half", ElementType::f16},            {"half2", ElementType::f16},           {"__nv_bfloat16", ElementType::bf16},
      {"__nv_bfloat162", ElementType::bf16}, {"nv_bfloat16", ElementType::bf16},    {"nv_bfloat162", ElementType::bf16},
  };
  for (const auto& f : k_floats)
    if (base == f.name) return f.type;
  return ElementType::bytes;
}

std::string params_text(const std::vector<std::uint32_t>& params) {
  std::string out;
  for (std::size_t i = 0; i < params.size(); ++i)
    out += (i == 0 ? "" : i + 1 == params.size() ? " and " : ", ") + std::to_string(params[i]);
  return out;
}

} // namespace

std::optional<std::vector<ParamType>> kernel_param_types(const std::string& kernel) {
  if (kernel.compare(0, 2, "_Z") != 0) return std::nullopt;
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> demangled(abi::__cxa_demangle(kernel.c_str(), nullptr, nullptr, &status), std::free);
  if (status != 0 || !demangled) return std::nullopt;
  auto list = parameter_list(demangled.get());
  if (!list) return std::nullopt;
  std::vector<ParamType> out;
  for (auto p : split_parameters(*list)) out.push_back({std::string(p), pointee_element(p)});
  return out;
}

std::vector<AllocationType> allocation_types(const formats::Capture& capture) {
  std::vector<AllocationType> out(capture.allocations.size());
  auto signature = kernel_param_types(capture.kernel);
  std::string unknown;
  if (!signature)
    unknown = "the kernel's name carries no C++ signature (a Triton or extern \"C\" kernel): its element types are not known";
  else if (signature->size() != capture.params.size())
    unknown = "the kernel's signature has " + std::to_string(signature->size()) + " parameter(s), the capture " +
              std::to_string(capture.params.size()) + ": its element types are not trusted";
  // The parameters into each allocation, in one pass over the pointers
  // (plan.h's params_into walks them all for one allocation).
  std::vector<std::vector<std::uint32_t>> into(out.size());
  if (unknown.empty())
    for (const auto& p : capture.pointers)
      if (p.allocation < into.size()) into[p.allocation].push_back(p.param);
  for (std::size_t a = 0; a < out.size(); ++a) {
    AllocationType& t = out[a];
    if (!unknown.empty()) {
      t.why_bitwise = unknown;
      continue;
    }
    auto& params = into[a];
    std::sort(params.begin(), params.end());
    params.erase(std::unique(params.begin(), params.end()), params.end());
    if (params.empty()) {
      t.why_bitwise = "no parameter points into it";
      continue;
    }
    if (params.back() >= signature->size()) {
      t.why_bitwise = "parameter " + std::to_string(params.back()) + " is not in the signature";
      continue;
    }
    ElementType first = (*signature)[params[0]].element;
    bool agree = true;
    for (auto p : params) agree = agree && (*signature)[p].element == first;
    if (agree && first != ElementType::bytes) {
      t.element = first;
      continue;
    }
    if (params.size() == 1) {
      t.why_bitwise = "parameter " + std::to_string(params[0]) + " is " + (*signature)[params[0]].text;
      continue;
    }
    std::string texts;
    for (auto p : params) texts += (texts.empty() ? "" : ", ") + (*signature)[p].text;
    t.why_bitwise = "parameters " + params_text(params) + (agree ? " are " : " disagree: ") + texts;
  }
  return out;
}

} // namespace ciq::replay
