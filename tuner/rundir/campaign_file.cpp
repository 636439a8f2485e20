// <campaign dir>/campaign.json (campaign_file.h).
#include "tuner/rundir/campaign_file.h"

#include "utils/files.h"
#include "utils/json.h"

#include <nlohmann/json.hpp>

namespace ciq::tuner {

std::string campaign_path(const std::string& dir) { return join_path(dir, "campaign.json"); }

std::string campaign_json(const std::vector<CampaignRow>& rows) {
  nlohmann::ordered_json j;
  j["format"] = k_campaign_format;
  j["kernels"] = nlohmann::ordered_json::array();
  for (const CampaignRow& r : rows) {
    nlohmann::ordered_json k;
    k["kernel"] = r.kernel;
    k["run_dir"] = r.run_dir;
    k["state"] = r.state;
    k["verdict"] = r.verdict;
    k["objective"] = r.objective;
    k["share"] = json_number(r.share);
    k["program_change"] = json_number(r.program_change);
    k["baseline"] = json_number(r.baseline);
    k["best"] = json_number(r.best);
    k["shipped"] = r.shipped;
    k["controls"] = r.controls;
    k["evaluations"] = r.evaluations;
    k["invalid"] = r.invalid;
    k["error"] = r.error;
    k["tuned_by"] = r.tuned_by;
    k["replay_dir"] = r.replay_dir;
    k["replay_change"] = json_number(r.replay_change);
    k["replay_note"] = r.replay_note;
    k["refused"] = r.refused;
    k["seconds"] = json_number(r.seconds);
    k["replay_seconds"] = json_number(r.replay_seconds);
    j["kernels"].push_back(std::move(k));
  }
  return json_line(j) + "\n";
}

Result<std::vector<CampaignRow>> read_campaign(const std::string& dir) {
  std::string path = campaign_path(dir);
  auto text = read_file(path);
  if (!text) return text.error();
  auto json = parse_json(*text);
  if (!json) return make_error("parse", path + ": " + json.error().message);
  if (json->kind != JsonValue::Kind::object || (*json)["format"].string_or("") != k_campaign_format)
    return make_error("parse", path + " is not a campaign of format " + k_campaign_format);
  if ((*json)["kernels"].kind != JsonValue::Kind::array) return make_error("parse", path + " holds no \"kernels\" array");
  std::vector<CampaignRow> rows;
  for (const auto& k : (*json)["kernels"].array) {
    CampaignRow r;
    r.kernel = k["kernel"].string_or("");
    r.run_dir = k["run_dir"].string_or("");
    r.state = k["state"].string_or("");
    r.verdict = k["verdict"].string_or("");
    r.objective = k["objective"].string_or("");
    r.share = k["share"].number_or(NAN);
    r.program_change = k["program_change"].number_or(NAN);
    r.baseline = k["baseline"].number_or(NAN);
    r.best = k["best"].number_or(NAN);
    r.shipped = k["shipped"].boolean;
    r.controls = k["controls"].string_or("");
    r.evaluations = int(k["evaluations"].number_or(0));
    r.invalid = int(k["invalid"].number_or(0));
    r.error = k["error"].string_or("");
    r.tuned_by = k["tuned_by"].string_or("");
    r.replay_dir = k["replay_dir"].string_or("");
    r.replay_change = k["replay_change"].number_or(NAN);
    r.replay_note = k["replay_note"].string_or("");
    r.refused = k["refused"].string_or("");
    r.seconds = k["seconds"].number_or(NAN);
    r.replay_seconds = k["replay_seconds"].number_or(NAN);
    rows.push_back(std::move(r));
  }
  return rows;
}

} // namespace ciq::tuner
