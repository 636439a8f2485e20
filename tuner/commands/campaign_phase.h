// A kernel's way through its campaign (campaign_table.h's KernelPhase):
// where a (resumed) campaign starts it, what each phase runs, and the one
// function that moves it on when that run ends. The campaign (campaign.cpp)
// only schedules: it asks phase_run() for a kernel's next run, runs it,
// and hands the outcome to advance(), until there is no run left.
#pragma once

#include "tuner/commands/campaign.h"
#include "tuner/commands/campaign_table.h"
#include "utils/process.h"
#include "utils/result.h"

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace ciq::tuner {

/// Whether replay winners with per-kernel directives only wait, and are
/// confirmed together once every replay is done (--together with
/// kernel-time, the only objective: each kernel judged by its own time in
/// the same program runs).
bool confirms_jointly(const CampaignOptions& c);

/// The directory of the joint confirmation: <campaign>/runs/confirm-together.
std::string joint_dir(const CampaignOptions& c);

/// Where kernel `r` (its run_dir and replay_dir set) starts, from what its
/// runs' directories already hold (a resumed campaign): done when its run,
/// its directive-only confirmation or the joint confirmation finished;
/// confirm_directives (or confirm_jointly) when only that confirmation is
/// left; else tune, or replay for a kernel with a capture (a finished
/// replay answers at once and moves it on as before).
void start_phase(const CampaignOptions& c, KernelResult& r);

/// The run of `r`'s phase (said on stderr; `i`: its index in `results`);
/// none for a phase that runs nothing here: done, failed, or waiting for
/// the joint confirmation. `hints`: seed hints for a tune or replay run.
/// Under the campaign's lock.
std::optional<RunOptions> phase_run(const CampaignOptions& c, const std::vector<KernelResult>& results, const KernelResult& r,
                                    const std::string& captures, const std::string& gpus, const std::vector<std::string>& hints,
                                    std::size_t i);

/// The campaign's one transition function: `r`'s next phase after its
/// phase's run (`ran`, begun with the kernel's attempt at `started`) ended,
/// with what the run found taken into `r` and said on stderr ([i+1/n]):
///   tune, confirm_directives, confirm_jointly -> done | failed
///   replay  -> done (the default won) | confirm | confirm_jointly (a
///              directive-only winner, confirms_jointly()) | tune (the
///              replay could not serve: r.replay_note says why)
///   confirm -> done | failed, or, when the program did not take a winner
///              with module-wide knobs, confirm_directives (or
///              confirm_jointly) for the replay's fastest directive-only
///              candidate (replay_fallback.h)
/// Under the campaign's lock. (take_results(), campaign_table.h, is how
/// these take a finished run's outcome: it sets done.)
void advance(const CampaignOptions& c, KernelResult& r, const Result<RunResult>& ran,
             std::chrono::steady_clock::time_point started, std::size_t i, std::size_t n);

/// The two moves the campaign makes for a group of kernels, outside one
/// kernel's run:
///   any -> tune    tune_together(): `--together`'s one run tunes every
///                  kernel of the group again, those an earlier attempt
///                  finished too (each then takes its part of its summary)
///   confirm_jointly -> failed    fail_joint(): the group's union of
///                  directives could not be formed for it (`why`)
void tune_together(KernelResult& r);
void fail_joint(KernelResult& r, const std::string& why);

} // namespace ciq::tuner
