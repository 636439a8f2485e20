// <campaign dir>/campaign.json: one row per kernel of a campaign (format
// ciq-campaign/1), rewritten as each of its runs ends and printed with
// --json. The file's one owner, below both its writer (commands/, from
// the campaign's KernelResults) and its reader (report/): the members,
// their order and their number format are fixed here (numbers to 6
// significant digits, null where unknown).
#pragma once

#include "utils/result.h"

#include <cmath>
#include <string>
#include <vector>

namespace ciq::tuner {

inline constexpr const char* k_campaign_format = "ciq-campaign/1";

/// One kernel's row. NaN: unknown (written null).
struct CampaignRow {
  std::string kernel, run_dir;
  std::string state;        // "pending", "done" or "failed"
  std::string verdict, objective;
  double share = NAN;       // of the program's GPU time (--from-profile)
  double program_change = NAN;
  double baseline = NAN, best = NAN;
  bool shipped = false;
  std::string controls;
  int evaluations = 0, invalid = 0;
  std::string error;
  std::string tuned_by;     // "program" or "replay"
  std::string replay_dir;
  double replay_change = NAN;
  std::string replay_note, refused;
  double seconds = NAN, replay_seconds = NAN;
};

/// <dir>/campaign.json.
std::string campaign_path(const std::string& dir);

/// campaign.json's text: the format, then every row; a newline at the end.
/// Bytes that are not UTF-8 (a kernel's name, an error) become U+FFFD.
std::string campaign_json(const std::vector<CampaignRow>& rows);

/// The rows of <dir>/campaign.json. Fails, naming the file, when it cannot
/// be read, is not JSON, or is not of format ciq-campaign/1.
Result<std::vector<CampaignRow>> read_campaign(const std::string& dir);

} // namespace ciq::tuner
