// Shipping what a run found: the verified winner (or, when nothing won, the
// default as "tuned, no gain") written to the cache under the keys its trace
// shows, with its provenance (the machine, the run, the verification, each
// objective's default and tuned values), in one transaction; then, with
// --publish, uploaded to the team's Redis tier.
#pragma once

#include "tuner/run/options.h"
#include "tuner/run/verify.h"
#include "utils/hash.h"

#include <set>
#include <string>
#include <vector>

namespace ciq::tuner {

/// Writes the records of `winner` for every module and kernel of `trace`
/// (kernel entries only for a module some of whose kernels the run did not
/// tune) and the NVVM stage's unit entries; `no_gain`: the default's, as
/// tuned with no gain (which never replaces an earlier verified winner).
/// Returns the keys written.
/// `only_kernels` (--separately): the kernels to write entries for, instead
/// of every kernel --kernels selects (no NVVM-stage entries then).
Result<std::vector<Hash128>> ship(const SearchSpace& space, const EvalRecord& winner, const std::vector<TracedModule>& trace,
                                  const Verdict& verdict, const TuneOptions& options, int evaluations, bool no_gain,
                                  const std::set<std::string>* only_kernels = nullptr);

/// The run's result to the cache: the winner's compiler controls (its
/// parameters are the program's to apply: a winner by its parameters alone
/// is "tuned, no gain" for the compiler), else the default as no gain;
/// under the keys of the winner's own trace, else the discovery's. Says
/// what it wrote. Returns the keys written.
Result<std::vector<Hash128>> ship_result(const TuneOptions& o, const SearchSpace& space, const std::vector<EvalRecord>& records,
                                         const EvalRecord& def, const EvalRecord* winner, const Verdict& verdict,
                                         const std::vector<TracedModule>& discovery,
                                         const std::set<std::string>* only_kernels = nullptr);

/// The team tier (--publish): uploads exactly the entries just written;
/// "" or why it failed.
std::string publish_shipped(const TuneOptions& o, const std::vector<Hash128>& shipped_keys);

} // namespace ciq::tuner
