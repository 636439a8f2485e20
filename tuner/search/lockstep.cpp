#include "tuner/search/lockstep.h"

#include <algorithm>
#include <condition_variable>
#include <mutex>
#include <thread>

namespace ciq::tuner {

SearchSpace part_space(const SearchSpace& space, const std::vector<std::size_t>& dims) {
  SearchSpace part;
  part.compiler_space = space.compiler_space;
  part.nvcc_space = space.nvcc_space;
  part.units = space.units;
  std::vector<std::size_t> index(space.dimensions.size(), space.dimensions.size());
  for (std::size_t d : dims) {
    index[d] = part.dimensions.size();
    part.dimensions.push_back(space.dimensions[d]);
  }
  for (const auto& x : space.exclusions) {
    if (index[x.when] == space.dimensions.size() || index[x.drop] == space.dimensions.size()) continue;
    Exclusion mine = x;
    mine.when = index[x.when];
    mine.drop = index[x.drop];
    part.exclusions.push_back(std::move(mine));
  }
  return part;
}

namespace {

// One part's search, seen from the coordinator: what it proposed and waits
// for, and the answers it gets.
struct Lane {
  std::vector<Candidate> proposed;
  std::vector<Evaluation> answers;
  bool waiting = false, done = false;
};

// A part's search configuration: the whole's, its seeds cut to the part's
// dimensions (each once), nothing resumed.
SearchConfig part_config(const SearchConfig& config, const SearchSpace& part, const std::vector<std::size_t>& dims) {
  SearchConfig mine = config;
  mine.seeds.clear();
  mine.resumed.clear();
  for (const auto& seed : config.seeds) {
    Candidate cut = part.default_candidate();
    for (std::size_t i = 0; i < dims.size(); ++i) cut.genes[i] = seed.genes[dims[i]];
    if (std::find(mine.seeds.begin(), mine.seeds.end(), cut) == mine.seeds.end()) mine.seeds.push_back(cut);
  }
  return mine;
}

// One round's `n` whole candidates: the i-th sets each asking part's
// dimensions to that part's i-th proposal (a part with fewer leaves its
// dimensions at the default).
std::vector<Candidate> whole_candidates(const SearchSpace& space, const std::vector<std::vector<std::size_t>>& parts,
                                        const std::vector<Lane>& lanes, const std::vector<std::size_t>& asking, std::size_t n) {
  std::vector<Candidate> whole;
  for (std::size_t i = 0; i < n; ++i) {
    Candidate c = space.default_candidate();
    for (std::size_t p : asking)
      if (i < lanes[p].proposed.size())
        for (std::size_t d = 0; d < parts[p].size(); ++d) c.genes[parts[p][d]] = lanes[p].proposed[i].genes[d];
    whole.push_back(std::move(c));
  }
  return whole;
}

// Gives each asking search its share of a round's answers (answers[i][p]:
// the i-th whole candidate's value for part p) and lets it go on.
void hand_out(std::vector<Lane>& lanes, const std::vector<std::size_t>& asking,
              const std::vector<std::vector<Evaluation>>& answers) {
  for (std::size_t p : asking) {
    lanes[p].answers.clear();
    for (std::size_t i = 0; i < lanes[p].proposed.size(); ++i) lanes[p].answers.push_back(answers[i][p]);
    lanes[p].waiting = false;
  }
}

} // namespace

std::vector<SearchResult> lockstep_search(const SearchSpace& space, const std::vector<std::vector<std::size_t>>& parts,
                                          const SearchConfig& config, const EvaluateParts& evaluate, bool random) {
  std::vector<SearchSpace> spaces;
  for (const auto& dims : parts) spaces.push_back(part_space(space, dims));
  std::vector<Lane> lanes(parts.size());
  std::vector<SearchResult> results(parts.size());
  std::mutex mutex;
  std::condition_variable changed;

  // Each search runs in a thread of its own; its evaluations wait for the
  // coordinator's round.
  std::vector<std::thread> threads;
  for (std::size_t p = 0; p < parts.size(); ++p) {
    SearchConfig mine = part_config(config, spaces[p], parts[p]);
    threads.emplace_back([&, p, mine] {
      EvaluateBatch ask = [&, p](const std::vector<Candidate>& batch, int) {
        std::unique_lock lock(mutex);
        lanes[p].proposed = batch;
        lanes[p].waiting = true;
        changed.notify_all();
        changed.wait(lock, [&] { return !lanes[p].waiting; });
        return std::move(lanes[p].answers);
      };
      SearchResult r = random ? random_search(spaces[p], mine, ask) : genetic_search(spaces[p], mine, ask);
      std::lock_guard lock(mutex);
      results[p] = std::move(r);
      lanes[p].done = true;
      changed.notify_all();
    });
  }

  // The coordinator: once every search waits or is done, one round.
  for (int round = 0;; ++round) {
    std::vector<Candidate> whole;
    std::vector<std::size_t> asking;
    {
      std::unique_lock lock(mutex);
      changed.wait(lock, [&] {
        return std::all_of(lanes.begin(), lanes.end(), [](const Lane& l) { return l.waiting || l.done; });
      });
      std::size_t n = 0;
      for (std::size_t p = 0; p < lanes.size(); ++p)
        if (lanes[p].waiting) {
          asking.push_back(p);
          n = std::max(n, lanes[p].proposed.size());
        }
      if (asking.empty()) break; // every search is done
      whole = whole_candidates(space, parts, lanes, asking, n);
    }
    auto answers = evaluate(whole, round);
    std::lock_guard lock(mutex);
    hand_out(lanes, asking, answers);
    changed.notify_all();
  }
  for (auto& t : threads) t.join();
  return results;
}

} // namespace ciq::tuner
