// The `ciq-tuner run` children of a campaign, as argv: each is a fresh run
// (the campaign's run options, then what the child is for, --out DIR
// --json and its slot's --gpus), or the resumption of what an interrupted
// campaign left in DIR (`run --resume DIR --json`). Its stderr goes to
// DIR.log as it runs; its outcome is read from its summary only
// (rundir/summary.h child_summary()).
#pragma once

#include "tuner/commands/campaign.h"
#include "tuner/commands/campaign_table.h"
#include "utils/process.h"

#include <string>
#include <vector>

namespace ciq::tuner {

/// The run of one kernel by program runs: every candidate a build and a run
/// of the program; `hints`: --seed-hint files.
RunOptions kernel_run(const CampaignOptions& c, const KernelResult& r, const std::string& gpus,
                      const std::vector<std::string>& hints);

/// The one run of the kernels tuned together (--together): `run
/// --separately` on all of them, each judged by its own time; a program run
/// measures a candidate of every one.
RunOptions together_run(const CampaignOptions& c, const std::vector<std::string>& kernels, const std::string& dir,
                        const std::string& gpus);

/// The replay run of one kernel (in r.replay_dir): its captured launches
/// (under `captures`) timed by ciq-replay, the program's build and
/// benchmark options left out, nothing shipped (the program decides).
RunOptions replay_run(const CampaignOptions& c, const KernelResult& r, const std::string& captures, const std::string& gpus,
                      const std::vector<std::string>& hints);

/// A discovery of this campaign's build that a confirmation can take as its
/// own (--discovery-from): the campaign's, else that of a run of it that
/// built one; "" when none has. Under the campaign's lock.
std::string reusable_discovery(const CampaignOptions& c, const std::vector<KernelResult>& results);

/// The program's confirmation of a replay winner (`controls`, a control-set
/// file): a run of the program whose only candidates are the default and
/// the winner (budget 2, no probes, no pruning: the replay pruned it; one
/// program run per evaluation; `discovery` rather than a traced build
/// again), verified interleaved against the default as every run is, and
/// shipped only if it wins there. These options replace the campaign's own
/// of the same names (its --seed-controls, --budget, ...).
RunOptions confirm_run(const CampaignOptions& c, const KernelResult& r, const std::string& controls, const std::string& discovery,
                       const std::string& gpus);

/// The program's confirmation of several kernels' winners with per-kernel
/// directives only (`controls`: their union) in the same program runs (in
/// `dir`): a `run --separately` whose candidates are the default and the
/// union, each kernel judged and verified by its own time
/// (run/kernel_parts.h), its part shipped only if it wins.
RunOptions joint_confirm_run(const CampaignOptions& c, const std::vector<std::string>& kernels, const std::string& controls,
                             const std::string& discovery, const std::string& dir, const std::string& gpus);

} // namespace ciq::tuner
