#include "tuner/run/space_setup.h"

#include "tuner/rundir/best_controls.h"

#include "cache/acf_candidates.h"
#include "spaces/control_set.h"
#include "tuner/run/progress.h"
#include "tuner/search/occupancy.h"
#include "tuner/search/space_builder.h"
#include "utils/files.h"
#include "utils/text.h"

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <random>

namespace ciq::tuner {

namespace {

// "Which ACF, or none": one more categorical dimension, from a candidate set
// in the cache or a zip/directory imported now. Only for a ptxas that takes
// --apply-controls; ACFs it refuses make their candidates invalid.
Result<Dimension> acf_dimension(const TuneOptions& o, const std::vector<TracedModule>& discovery) {
  if (discovery.empty()) return make_error("invalid", "--acf-candidates needs a build or benchmark that compiles through ciq-ptxas");
  if (!std::all_of(discovery.begin(), discovery.end(), [](const auto& m) { return m.accepts_controls_file; }))
    return make_error("invalid", "ptxas " + discovery.front().ptxas_version +
                                     " does not take --apply-controls, so --acf-candidates cannot be used with it");
  auto set = path_exists(o.acf_candidates) ? cache::import_acf_candidates(o.cache_dir, o.acf_candidates, "")
                                           : cache::load_acf_candidates(o.cache_dir, o.acf_candidates);
  if (!set) return set.error();
  // A set for another CUDA, stage or GPU is skipped with the reason, not
  // measured as so many invalid candidates.
  for (const auto& m : discovery)
    if (std::string why = cache::acf_set_fits(*set, m.ptxas_version, m.target); !why.empty())
      return make_error(ciq::errc::skipped, "ACF set '" + set->name + "' does not fit: " + why);
  Dimension d;
  d.kind = DimensionKind::acf;
  d.knob = "acf";
  for (const auto& a : set->acfs) d.values.push_back(a.sha256);
  std::fprintf(stderr, "ciq-tuner: %zu ACF candidate(s) from set '%s'%s\n", set->acfs.size(), set->name.c_str(),
               set->cuda_version.empty() ? "" : (" (CUDA " + set->cuda_version + ")").c_str());
  return d;
}

// What the space leaves out, and why, on stderr; then its size.
void say_left_out(const TuneOptions& o, const SearchSpace& space) {
  auto names = [](const std::vector<std::string>& list) {
    std::string all;
    for (const auto& l : list) all += (all.empty() ? "" : ", ") + l;
    return printable(all);
  };
  if (!space.shared_left_out.empty())
    std::fprintf(stderr, "ciq-tuner: --separately: not searching %s: module-wide, so each would act on several of the %zu "
                         "targeted kernels at once; searching each kernel's own directives\n",
                 names(space.shared_left_out).c_str(), o.setup.own_kernels.size());
  if (!space.pinned_left_out.empty())
    std::fprintf(stderr, "ciq-tuner: not searched: %s\n", names(space.pinned_left_out).c_str());
  if (!space.left_out.empty())
    std::fprintf(stderr, "ciq-tuner: not searching %s: a block size is needed (.maxntid/.reqntid in the PTX) and "
                         "nothing gives one, so ptxas would ignore it\n", names(space.left_out).c_str());
  if (!space.overridden_left_out.empty())
    std::fprintf(stderr, "ciq-tuner: not searching %s: every targeted kernel declares its block size (.maxntid/"
                         ".reqntid), for which ptxas sets its own value and ignores the option\n",
                 names(space.overridden_left_out).c_str());
  std::fprintf(stderr, "ciq-tuner: searching %zu dimensions (%.3g candidates) with a budget of %d evaluations\n",
               space.dimensions.size(), space.size(), o.search.budget);
}

// The search's first candidates: --seed-controls (each must fit the
// space), an earlier kernel's winners (--seed-hint: a first guess, skipped
// when it does not fit), and, unless the search is the random baseline
// (it gets no informed candidates), occupancy probes.
Result<void> add_seeds(TuneOptions& o, SearchSpace& space, const std::vector<TracedModule>& discovery) {
  for (const auto& file : o.seeds) {
    auto set = read_controls_file(file);
    if (!set) return set.error();
    auto c = candidate_from_controls(space, *set);
    if (!c) return make_error("tuner", "seed " + file + ": " + c.error().message);
    if (space.repair(*c))
      std::fprintf(stderr, "ciq-tuner: warning: seed %s sets options ptxas refuses together; seeding %s instead\n",
                   file.c_str(), space.canonical(*c).c_str());
    o.search.seeds.push_back(*c);
  }
  for (const auto& file : o.seed_hints) {
    auto set = read_controls_file(file);
    auto c = set ? candidate_from_controls(space, *set) : Result<Candidate>(set.error());
    if (!c) {
      std::fprintf(stderr, "ciq-tuner: not seeding with %s: %s\n", printable(file).c_str(), printable(c.error().message).c_str());
      continue;
    }
    space.repair(*c);
    std::fprintf(stderr, "ciq-tuner: seeding with %s (an earlier kernel's winner)\n", printable(space.canonical(*c)).c_str());
    o.search.seeds.push_back(*c);
  }
  if (o.occupancy_probes && !o.random_search) {
    std::size_t room = std::size_t(std::max(0, o.search.pool / 2 - int(o.search.seeds.size())));
    for (auto& s : occupancy_seeds(discovery, space, room)) {
      std::fprintf(stderr, "ciq-tuner: occupancy probe %s:maxnreg=%d (%s)\n", printable(s.probe.kernel).c_str(), s.probe.maxnreg,
                   printable(s.probe.why).c_str());
      o.search.seeds.push_back(std::move(s.candidate));
    }
  }
  return {};
}

} // namespace

Result<SearchSpace> build_run_space(TuneOptions& o, const std::vector<TracedModule>& discovery) {
  SpaceRequest request{o.space, o.params, o.setup.kernels, !o.setup.check.empty(), o.allow_unsafe, o.stages, o.units};
  request.separately = o.separately;
  auto space = o.setup.replay ? Result<SearchSpace>(o.setup.replay->space()) : build_search_space(request, discovery);
  if (!space) return space.error();
  o.setup.compiler = !space->compiler_space.empty();
  if (!o.acf_candidates.empty() && o.setup.own_kernels.size() > 1) {
    space->shared_left_out.push_back("acf");
  } else if (!o.acf_candidates.empty()) {
    auto acfs = acf_dimension(o, discovery);
    if (!acfs && acfs.error().code != ciq::errc::skipped) return acfs.error();
    if (acfs) {
      space->dimensions.push_back(std::move(*acfs));
      o.setup.acf_cache_dir = o.cache_dir;
    } else {
      std::fprintf(stderr, "ciq-tuner: warning: %s; searching without ACFs\n", printable(acfs.error().message).c_str());
    }
  }
  say_left_out(o, *space);
  if (auto seeded = add_seeds(o, *space, discovery); !seeded) return seeded.error();
  return std::move(*space);
}

int sample_space(const TuneOptions& o, int count) {
  SpaceRequest request{o.space.empty() ? "none" : o.space, o.params, o.setup.kernels, !o.setup.check.empty(), o.allow_unsafe, o.stages, {}};
  auto space = build_search_space(request, {});
  if (!space) return fail(space.error().message);
  std::mt19937_64 rng(o.search.seed);
  for (int i = 0; i < count; ++i) std::cout << space->canonical(space->random_candidate(rng)) << "\n";
  return 0;
}

} // namespace ciq::tuner
