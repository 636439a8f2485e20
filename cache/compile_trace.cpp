#include "cache/compile_trace.h"

#include "utils/json.h"
#include "utils/json_members.h"

#include <cmath>
#include <nlohmann/json.hpp>

namespace ciq::cache {

namespace {

using Json = nlohmann::ordered_json; // members in the order traces always had

// Durations rounded to three decimals (a trace is read as JSON: the value,
// not the text, is what readers see); never NaN or infinite in practice,
// and if one were, null (a reader's "unknown") rather than invalid JSON.
Json milli_rounded(double v) {
  if (!std::isfinite(v)) return nullptr;
  return std::round(v * 1000) / 1000;
}

using json_members::bool_member;
using json_members::number_member;
using json_members::string_member;
using json_members::strings_member;

// A unit or steps record's "kind" (a ptxas record has none).
constexpr const char* k_unit_kind = "unit";
constexpr const char* k_steps_kind = "steps";

// The record's JSON, once its format is checked.
Result<nlohmann::json> checked(std::string_view text, const char* kind) {
  auto j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return make_error("parse", "not a JSON object");
  std::string format = string_member(j, "format");
  if (format != k_trace_format)
    return make_error("parse", std::string(format.empty() ? "not a ciq trace" : "in format '" + format + "'") + ", not " +
                                   k_trace_format + " (written by another ciq version?)");
  if (kind && string_member(j, "kind") != kind)
    return make_error("parse", std::string("not a ") + k_trace_format + " " + kind + " record");
  return j;
}

// A record's first members: the format, and its kind (none for ptxas').
Json record_head(const char* kind) {
  Json j;
  j["format"] = k_trace_format;
  if (kind) j["kind"] = kind;
  return j;
}

} // namespace

std::string trace_record_text(const TraceRecord& r) {
  Json j = record_head(nullptr);
  j["input"] = r.input;
  j["output"] = r.output;
  j["target"] = r.target;
  j["ptxas_path"] = r.ptxas_path;
  j["ptxas_version"] = r.ptxas_version;
  j["ptxas_identity"] = r.ptxas_identity;
  j["flags"] = r.flags;
  j["args"] = r.args;
  j["ptx_copy"] = r.ptx_copy;
  j["accepts_controls_file"] = r.accepts_controls_file;
  j["module_key"] = r.module_key;
  j["kernels"] = Json::array();
  for (const auto& k : r.kernels) {
    const auto& res = k.resources;
    Json kernel;
    kernel["name"] = k.name;
    kernel["key"] = k.key;
    kernel["block_threads"] = k.block_threads;
    kernel["registers"] = res.registers;
    kernel["spill_stores"] = res.spill_stores;
    kernel["spill_loads"] = res.spill_loads;
    kernel["stack"] = res.stack;
    kernel["shared"] = res.shared;
    kernel["barriers"] = res.barriers;
    kernel["compile_ms"] = milli_rounded(res.compile_ms);
    kernel["code"] = k.code;
    j["kernels"].push_back(std::move(kernel));
  }
  j["controls_source"] = r.controls_source;
  j["controls"] = r.controls;
  j["controls_applied"] = r.controls_applied;
  j["controls_error"] = r.controls_error;
  j["code_digest"] = r.code_digest;
  j["warnings"] = r.warnings;
  j["exit_status"] = r.exit_status;
  j["seconds"] = milli_rounded(r.seconds);
  return json_line(j) + "\n";
}

std::string unit_record_text(const UnitTraceRecord& r) {
  Json j = record_head(k_unit_kind);
  j["unit"] = r.unit;
  j["source_path"] = r.source_path;
  j["target"] = r.target;
  j["key"] = r.key;
  j["nvcc_version"] = r.nvcc_version;
  j["output"] = r.output;
  j["kernels"] = r.kernels;
  j["controls_source"] = r.controls_source;
  j["controls"] = r.controls;
  j["controls_applied"] = r.controls_applied;
  j["controls_error"] = r.controls_error;
  j["warnings"] = r.warnings;
  j["exit_status"] = r.exit_status;
  j["seconds"] = milli_rounded(r.seconds);
  return json_line(j) + "\n";
}

Result<TraceRecord> parse_trace_record(std::string_view text) {
  auto j = checked(text, nullptr);
  if (!j) return j.error();
  TraceRecord r;
  r.input = string_member(*j, "input");
  r.output = string_member(*j, "output");
  r.target = string_member(*j, "target");
  r.ptxas_path = string_member(*j, "ptxas_path");
  r.ptxas_version = string_member(*j, "ptxas_version");
  r.ptxas_identity = string_member(*j, "ptxas_identity");
  r.flags = string_member(*j, "flags");
  r.args = strings_member(*j, "args");
  r.ptx_copy = string_member(*j, "ptx_copy");
  r.accepts_controls_file = bool_member(*j, "accepts_controls_file");
  r.module_key = string_member(*j, "module_key");
  if (auto it = j->find("kernels"); it != j->end() && it->is_array())
    for (const auto& k : *it) {
      TraceKernel t;
      t.name = string_member(k, "name");
      t.key = string_member(k, "key");
      t.block_threads = long(number_member(k, "block_threads"));
      t.resources.registers = long(number_member(k, "registers", -1));
      t.resources.spill_stores = long(number_member(k, "spill_stores"));
      t.resources.spill_loads = long(number_member(k, "spill_loads"));
      t.resources.stack = long(number_member(k, "stack"));
      t.resources.shared = long(number_member(k, "shared"));
      t.resources.barriers = long(number_member(k, "barriers"));
      t.resources.compile_ms = number_member(k, "compile_ms", -1);
      t.code = string_member(k, "code");
      r.kernels.push_back(std::move(t));
    }
  r.controls_source = string_member(*j, "controls_source");
  r.controls = string_member(*j, "controls");
  r.controls_applied = bool_member(*j, "controls_applied");
  r.controls_error = string_member(*j, "controls_error");
  r.code_digest = string_member(*j, "code_digest");
  r.warnings = strings_member(*j, "warnings");
  r.exit_status = int(number_member(*j, "exit_status"));
  r.seconds = number_member(*j, "seconds");
  return r;
}

Result<UnitTraceRecord> parse_unit_record(std::string_view text) {
  auto j = checked(text, k_unit_kind);
  if (!j) return j.error();
  UnitTraceRecord r;
  r.unit = string_member(*j, "unit");
  r.source_path = string_member(*j, "source_path");
  r.target = string_member(*j, "target");
  r.key = string_member(*j, "key");
  r.nvcc_version = string_member(*j, "nvcc_version");
  r.output = string_member(*j, "output");
  r.kernels = strings_member(*j, "kernels");
  r.controls_source = string_member(*j, "controls_source");
  r.controls = string_member(*j, "controls");
  r.controls_error = string_member(*j, "controls_error");
  r.warnings = strings_member(*j, "warnings");
  r.controls_applied = bool_member(*j, "controls_applied");
  r.exit_status = int(number_member(*j, "exit_status"));
  r.seconds = number_member(*j, "seconds");
  return r;
}

std::string steps_record_text(const StepsRecord& r) {
  Json j = record_head(k_steps_kind);
  j["steps_run"] = r.steps_run;
  j["steps_reused"] = r.steps_reused;
  j["reused"] = r.reused;
  return json_line(j) + "\n";
}

Result<StepsRecord> parse_steps_record(std::string_view text) {
  auto j = checked(text, k_steps_kind);
  if (!j) return j.error();
  StepsRecord r;
  r.steps_run = int(number_member(*j, "steps_run"));
  r.steps_reused = int(number_member(*j, "steps_reused"));
  r.reused = strings_member(*j, "reused");
  return r;
}

} // namespace ciq::cache
