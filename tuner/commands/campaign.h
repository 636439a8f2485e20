// `ciq-tuner campaign`: tune every kernel of a project in one command. One
// discovery build lists the kernels (those --kernels selects); then one
// `ciq-tuner run` per kernel, with the campaign's options and --kernels set
// to that kernel, up to --concurrent at a time over the same executor (local
// or Slurm). Each run ships its winner to the cache (or --publish) as it
// finishes. The campaign directory holds the kernel list, each run's
// directory and log, and campaign.json, rewritten as each run ends;
// `--resume` finishes what is left (done runs are read back, interrupted
// ones resumed). The kernels that go to program runs (none of them
// replayed) are tuned together in one `run --separately` (--together):
// each program run then measures a candidate of every one of them, and
// each keeps its own row, read from its part of that run's summary.
//
// With --from-profile the list comes from the program's own run instead:
// its kernels by GPU time (libciq-inject), hottest first, until --cover of
// the time is reached; a kernel this build did not compile through ciq (a
// library's, cuBLAS say) is named and left out. The table then shows each
// kernel's share of the program's GPU time and what its gain is worth to
// the whole program (share x change).
#pragma once

#include "tuner/run/options.h"

#include <string>
#include <vector>

namespace ciq::tuner {

struct CampaignOptions {
  TuneOptions tune;                     // the shared run options (out_dir: the campaign directory)
  std::vector<std::string> run_args;    // the command line each run gets, before its own --kernels/--out
  int concurrent = 1;                   // runs at once
  // --from-profile: the kernels to tune are the program's hottest, by GPU
  // time measured in one run of --bench (after --build), until `cover` of
  // it is reached; "" = off (every compiled kernel), "now" = profile now,
  // else the directory of an earlier `ciq-tuner profile --out DIR`.
  std::string from_profile;
  double cover = 0.9;
  // --from-profile: capture the chosen kernels' launches in one more run of
  // the program and tune each captured kernel by replay (`run --capture`),
  // then confirm the replay's winner in the program (`run` with the winner
  // as the only candidate besides the default) before it ships. Kernels
  // that could not be captured are tuned by program runs.
  bool capture = true;
  // --together (with kernel-time the only objective): the kernels that go
  // to program runs (no replay) are tuned in one `run --separately` when
  // there are two or more: a program run then measures a candidate of each;
  // and replay winners with per-kernel directives only are confirmed in one
  // such run once every replay is done (runs/confirm-together).
  bool together = true;
  // --check-program N: at the end, the program built fresh with the cache
  // against without it (CIQ_DISABLE=1), N interleaved pairs of a build and
  // a run, its GPU time compared (program_check.h); 0 = not.
  int check_program = 0;
};

/// Runs (or resumes) the campaign; 0 when every run finished, whatever it
/// found; 1 when one or more could not tune (the table says which).
int run_campaign(CampaignOptions options);

} // namespace ciq::tuner
