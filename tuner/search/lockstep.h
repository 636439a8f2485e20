// Several searches in lockstep, one per part of a product space (`run
// --separately`: a part is one kernel's directives), each scored on its
// own objective, whose proposals are evaluated together: the i-th
// candidate each search proposes in a round makes, with the others' i-th,
// one candidate of the whole space, and one evaluation of it answers every
// search. A round evaluates as many whole candidates as the longest
// proposal list; a search with fewer proposals, or finished, leaves its
// part at the default there. So a budget of N whole evaluations buys about
// N candidates for every part (each search gets the budget as its own).
#pragma once

#include "tuner/search/search.h"

#include <cstddef>
#include <functional>
#include <vector>

namespace ciq::tuner {

/// Evaluates whole candidates: per candidate, one Evaluation per part (in
/// the parts' order), each in that part's own terms (minimisation form).
using EvaluateParts = std::function<std::vector<std::vector<Evaluation>>(const std::vector<Candidate>&, int round)>;

/// The dimensions of `space` that `dims` names, as a space of their own
/// (the exclusions among them kept, re-indexed).
SearchSpace part_space(const SearchSpace& space, const std::vector<std::size_t>& dims);

/// Runs one search per part (`parts`: each one's dimensions in `space`,
/// disjoint) with `config` (each part gets its budget, and the seeds cut
/// down to its dimensions), genetic or, with `random`, random search; every
/// whole candidate goes to `evaluate`. Returns each part's search result,
/// its candidates in its part's space.
std::vector<SearchResult> lockstep_search(const SearchSpace& space, const std::vector<std::vector<std::size_t>>& parts,
                                          const SearchConfig& config, const EvaluateParts& evaluate, bool random = false);

} // namespace ciq::tuner
