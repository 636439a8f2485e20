// Which kernels a campaign tunes, and how: the list (kernels.txt; from a
// discovery build, or with --from-profile from the program's profile, its
// hottest kernels, their launches captured for replay), each kernel's
// share of the program's GPU time, the kernels replayed from a capture,
// those tuned together in one run (--together), and the GPUs each
// concurrent run benchmarks on.
#pragma once

#include "tuner/commands/campaign.h"
#include "utils/result.h"

#include <cstddef>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace ciq::tuner {

/// The campaign's kernels: kernels.txt (`list_path`) when resuming, else
/// from a discovery build or the program's profile (--from-profile: its
/// kernels by GPU time until --cover, profile.json written, the chosen
/// kernels' launches captured), saved with the command line for a later
/// --resume. Fails when there is nothing to resume, the directory already
/// holds a campaign, or no kernel is found.
Result<std::vector<std::string>> campaign_kernels(const CampaignOptions& c, TuneOptions& o, const std::string& list_path);

/// Each kernel's share of the program's GPU time, from <campaign>/profile.json
/// (profile_json()'s form); empty when there is none (no --from-profile).
/// Fails, naming the file, when it is there but cannot be read or is not a
/// profile (the campaign then says so and goes on without shares).
Result<std::map<std::string, double>> profiled_shares(const std::string& out_dir);

/// The --gpus each concurrent run benchmarks on (slot i: the i-th share of
/// --gpus); all "" when a scheduler places the benchmarks (Slurm) or no
/// GPUs are named.
std::vector<std::string> gpu_sets_for(const CampaignOptions& c);

/// The captures the kernels are replayed from: those of the campaign's own
/// capturing run, or of the profile it was given (`profile --capture`);
/// "" when the campaign tunes by program runs only.
std::string captures_root(const CampaignOptions& c);

/// The kernels with a capture ready for replay (its compile.json written).
std::set<std::string> replayable_kernels(const std::string& root);

/// The kernels (indices into `kernels`) tuned together in one run: those
/// that go to program runs (no capture to replay), when --together, there
/// are two or more, and each can be judged by its own time (kernel-time).
std::vector<std::size_t> together_kernels(const CampaignOptions& c, const std::vector<std::string>& kernels,
                                          const std::set<std::string>& replayable);

} // namespace ciq::tuner
