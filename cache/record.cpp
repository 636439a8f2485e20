#include "cache/record.h"

#include <nlohmann/json.hpp>

#include "utils/text.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <ctime>

namespace ciq::cache {

std::string Record::provenance_value(std::string_view key) const {
  for (const auto& [k, v] : provenance)
    if (k == key) return v;
  return {};
}

namespace {

// The fields that name things (a kernel, a target, a knob, a space, ...)
// are shown in listings and passed to tools: no control characters in them
// (an escape sequence in a shared pack's kernel name would act on the
// terminal of whoever lists it). Provenance values are free text, shown
// escaped (utils/text.h printable()).
Result<void> check_names(const Record& r, std::string_view origin) {
  auto bad = [&](std::string_view field, std::string_view value) -> Result<void> {
    return make_error("parse", std::string(origin) + ": " + std::string(field) + " '" + printable(value) +
                                   "' holds control characters or bytes that are not UTF-8");
  };
  for (auto [field, value] : {std::pair<std::string_view, std::string_view>{"kernel", r.kernel}, {"unit", r.unit},
                              {"nvcc", r.nvcc}, {"target", r.target}, {"ptxas", r.ptxas}, {"flags", r.flags},
                              {"created", r.created}, {"source", r.source}, {"space", r.controls.space}})
    if (!is_printable(value)) return bad(field, value);
  for (const auto& [key, value] : r.provenance)
    if (!is_printable(key)) return bad("provenance key", key);
  for (const auto& [knob, value] : r.controls.options)
    if (!is_printable(knob) || !is_printable(value)) return bad("knob", knob + " = " + value);
  for (const auto& [kernel, knobs] : r.controls.kernels) {
    if (!is_printable(kernel)) return bad("kernel", kernel);
    for (const auto& [knob, value] : knobs)
      if (!is_printable(knob) || !is_printable(value)) return bad("knob", kernel + ":" + knob + " = " + value);
  }
  return {};
}

} // namespace

std::string_view kind_name(RecordKind kind) {
  switch (kind) {
  case RecordKind::module: return "module";
  case RecordKind::kernel: return "kernel";
  case RecordKind::unit: return "unit";
  }
  return "module";
}

std::optional<RecordKind> parse_kind(std::string_view name) {
  for (RecordKind k : {RecordKind::module, RecordKind::kernel, RecordKind::unit})
    if (name == kind_name(k)) return k;
  return std::nullopt;
}

void to_json(nlohmann::json& j, RecordKind kind) { j = std::string(kind_name(kind)); }

Result<Record> parse_record(std::string_view text, std::string_view origin) {
  auto marker = text.find("\n[controls]");
  if (marker == std::string_view::npos) return make_error("parse", std::string(origin) + ": no [controls] section");
  auto head = parse_key_values(text.substr(0, marker + 1), origin);
  if (!head) return head.error();
  Record record;
  bool saw_format = false, saw_kind = false;
  for (const auto& kv : *head) {
    if (kv.key == "format") {
      if (kv.value != k_record_format)
        return make_error("parse", std::string(origin) + ": unsupported record format '" + kv.value + "'");
      saw_format = true;
    } else if (kv.key == "kind") {
      auto kind = parse_kind(kv.value);
      if (!kind) return make_error("parse", std::string(origin) + ": record kind must be module, kernel or unit");
      record.kind = *kind;
      saw_kind = true;
    }
    else if (kv.key == "kernel") record.kernel = kv.value;
    else if (kv.key == "unit") record.unit = kv.value;
    else if (kv.key == "nvcc") record.nvcc = kv.value;
    else if (kv.key == "target") record.target = kv.value;
    else if (kv.key == "ptxas") record.ptxas = kv.value;
    else if (kv.key == "flags") record.flags = kv.value;
    else if (kv.key == "created") record.created = kv.value;
    else if (kv.key == "source") record.source = kv.value;
    else record.provenance.emplace_back(kv.key, kv.value);
  }
  if (!saw_format) return make_error("parse", std::string(origin) + ": not a ciq record (no format line)");
  if (!saw_kind)
    return make_error("parse", std::string(origin) + ": record kind must be module, kernel or unit");
  auto body = text.substr(marker + 11);
  auto controls = spaces::parse_control_set(body, origin);
  if (!controls) return controls.error();
  if (!controls->nvcc.empty() || !controls->nvcc_space.empty())
    return make_error("parse", std::string(origin) + ": a record holds one stage's controls (nvcc.* knobs belong in a unit record)");
  if (record.kind == RecordKind::unit && (!controls->kernels.empty() || controls->acf))
    return make_error("parse", std::string(origin) + ": a unit record holds NVVM-stage options only");
  record.controls = std::move(*controls);
  if (auto named = check_names(record, origin); !named) return named.error();
  return record;
}

std::string format_record(const Record& r) {
  std::string out;
  auto line = [&](std::string_view k, std::string_view v) {
    if (!v.empty()) out += format_key_value(k, v) + "\n";
  };
  line("format", k_record_format);
  line("kind", kind_name(r.kind));
  line("kernel", r.kernel);
  line("unit", r.unit);
  line("target", r.target);
  line("ptxas", r.ptxas);
  line("nvcc", r.nvcc);
  line("flags", r.flags);
  line("created", r.created);
  line("source", r.source);
  for (const auto& [k, v] : r.provenance) line(k, v);
  out += "[controls]\n";
  out += spaces::format_control_set(r.controls);
  return out;
}

std::pair<double, std::string> record_merit(const Record& r) {
  std::string result = r.provenance_value("result");
  double score = 2;
  if (result == record_result::tuned) {
    double base = std::strtod(r.provenance_value("baseline0").c_str(), nullptr);
    double tuned = std::strtod(r.provenance_value("tuned0").c_str(), nullptr);
    double gain = base != 0 ? std::fabs(base - tuned) / std::fabs(base) : 0;
    score = 3 + std::min(gain, 1.0);
  } else if (result == record_result::no_gain) {
    score = 1;
  }
  return {score, r.created};
}

std::string utc_now() {
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

} // namespace ciq::cache
