// `ciq-tuner campaign`: tune every kernel of a project in one command. One
// discovery build lists the kernels (those --kernels selects); then one
// `ciq-tuner run` per kernel, with the campaign's options and --kernels set
// to that kernel, up to --concurrent at a time over the same executor (local
// or Slurm). Each run ships its winner to the cache (or --publish) as it
// finishes. The campaign directory holds the kernel list, each run's
// directory and log, and campaign.json, rewritten as each run ends;
// `--resume` finishes what is left (done runs are read back, interrupted
// ones resumed).
#pragma once

#include "tuner/orchestrate/run.h"

#include <string>
#include <vector>

namespace ciq::tuner {

struct CampaignOptions {
  TuneOptions tune;                     // the shared run options (out_dir: the campaign directory)
  std::vector<std::string> run_args;    // the command line each run gets, before its own --kernels/--out
  int concurrent = 1;                   // runs at once
};

/// Runs (or resumes) the campaign; 0 when every run finished, whatever it
/// found; 1 when one or more could not tune (the table says which).
int run_campaign(CampaignOptions options);

/// A glob that matches exactly `name` (glob characters bracketed).
std::string exact_glob(const std::string& name);

} // namespace ciq::tuner
