// A cache record: the control set stored under one key, with what the key
// was made from (so listings are readable without the PTX) and where the
// control set came from (provenance: who tuned it, on what, with what gain).
//
// Text form, as stored in LMDB and shown by `ciq-cache show`:
//   format = ciq-record/1
//   kind = kernel
//   kernel = _Z5heavyPKfPfi
//   target = sm_90a
//   ptxas = 13.0.88
//   created = 2026-12-02T10:00:00Z
//   source = ciq-cache put
//   [controls]
//   space = ptxas-13
//   maxrregcount = 64
//
// kind = unit: the NVVM-stage record of one translation unit (cicc's input),
// with `unit` (the source file's name, for listings) and `nvcc` (the
// toolkit's version) instead of kernel and ptxas; its controls are a set of
// the nvcc space. A record holds one stage's knobs only.
#pragma once

#include "spaces/control_set.h"
#include "utils/result.h"

#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ciq::cache {

inline constexpr std::string_view k_record_format = "ciq-record/1";

/// What a record's key was made from: a whole PTX module (it answers for
/// its kernels), one kernel of it, or one translation unit's NVVM stage.
enum class RecordKind { module, kernel, unit };

/// "module", "kernel", "unit": the text form (`kind = ...`) and what
/// listings and JSON show.
std::string_view kind_name(RecordKind kind);

/// The kind named `name`; std::nullopt for any other word.
std::optional<RecordKind> parse_kind(std::string_view name);

/// A tuning run's verdict in a record's provenance (`result = ...`): a
/// verified winner, or "tuned, no gain" (the default won). Named once: the
/// tuner writes them, the cache and the tuner's readers test them.
namespace record_result {
inline constexpr std::string_view tuned = "tuned";
inline constexpr std::string_view no_gain = "no-gain";
} // namespace record_result

/// A kind in nlohmann JSON is its name (found by ADL): never the enum's number.
void to_json(nlohmann::json& j, RecordKind kind);

struct Record {
  RecordKind kind = RecordKind::module;
  std::string kernel;  // kernel records only
  std::string unit;    // unit records only: the translation unit's file name
  std::string nvcc;    // unit records only: the toolkit version the key was made for
  std::string target;  // e.g. sm_90a
  std::string ptxas;   // short version of the ptxas the key was made for
  std::string flags;   // canonical codegen flags in the key ("" = none)
  std::string created; // UTC, ISO 8601
  std::string source;  // "ciq-cache put", "ciq-tuner 0.1.0", ...
  /// Free-form provenance in insertion order: gpu, driver, toolkit,
  /// baseline, tuned, metric, p_value, evaluations, ...
  std::vector<std::pair<std::string, std::string>> provenance;
  spaces::ControlSet controls;

  std::string provenance_value(std::string_view key) const;
};

Result<Record> parse_record(std::string_view text, std::string_view origin);
std::string format_record(const Record& record);

/// How good a record's evidence is, for choosing between two records of one
/// key (import, merge, push): a verified tuning result (by its gain) beats a
/// hand-made entry, which beats "tuned, no gain"; ties go to the newer.
std::pair<double, std::string> record_merit(const Record& record);

/// Current UTC time as 2026-12-02T10:00:00Z.
std::string utc_now();

} // namespace ciq::cache
