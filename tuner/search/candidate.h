// The search space of one tuning run and the candidates in it. A dimension
// is one thing the tuner may set: a ptxas option, a directive of one
// kernel, or an application parameter. A candidate gives each dimension a
// value, or leaves it at the default ("knocked out": the compiler's own
// default, or an absent parameter).
#pragma once

#include "spaces/control_set.h"
#include "utils/result.h"

#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

namespace ciq::tuner {

enum class DimensionKind { option, directive, param, acf, nvvm };

struct Dimension {
  DimensionKind kind = DimensionKind::option;
  std::string knob;                // knob or parameter name ("acf": which ACF, by sha256); nvvm: a knob of the nvcc space
  std::string kernel;              // directives only
  std::vector<std::string> values; // the domain, without "default"
  bool knockable = true;           // may be left at the default
  double knockout = 0.5;           // chance that a random draw leaves it at the default
  int default_index = 0;           // the baseline value of a parameter that cannot be knocked out
  bool has_default = false;        // a parameter's ,default=V: also what "knocked out" means for it

  /// "maxrregcount", "KERNEL:maxnreg", "param:x", "nvcc.fmad".
  std::string label() const;
};

/// The canonical text of a candidate that leaves every dimension at its
/// default (SearchSpace::canonical), as journals, summaries and
/// best.controls hold it.
inline constexpr std::string_view k_default_candidate = "default";

struct Candidate {
  std::vector<std::optional<int>> genes; // per dimension: index into values, or default

  bool operator==(const Candidate&) const = default;
};

/// A candidate as the steps of its evaluation use it, worked out once by
/// SearchSpace::resolve(): the build, the "compiled as asked" check, the
/// code identity, the placeholders of the benchmark and the check, and the
/// score read these fields instead of deriving them from the genes again.
struct ResolvedCandidate {
  Candidate candidate;
  std::string canonical;       // SearchSpace::canonical(): the memo key, the journal's name
  spaces::ControlSet controls; // SearchSpace::controls(): what the compilers are to apply
  std::string controls_text;   // `controls` as a candidate.controls file holds them
  // Each parameter dimension's name and value ("" when left out and it has
  // no ,default=V): {param:NAME}, and part of the code identity.
  std::vector<std::pair<std::string, std::string>> params;
  bool is_default = false; // the run's baseline: SearchSpace::default_candidate()
};

/// Values of two dimensions the compiler refuses or ignores together:
/// when dimension `when` holds one of `when_values` (or, with `when_unset`,
/// is left at its default), dimension `drop` must not hold one of
/// `drop_values`. From a space file's [conflict] sections, and from what
/// the PTX and the target decide (space_builder.cpp): a knob that `needs`
/// a block size only another dimension gives, or blocks per SM that do not
/// fit at a block size another dimension sets.
struct Exclusion {
  std::size_t when = 0, drop = 0;
  std::vector<bool> when_values, drop_values; // per value index
  bool when_unset = false; // applies while `when` is at its default (`when_values` unused)
};

struct SearchSpace {
  std::string compiler_space; // e.g. "ptxas-13"; "" when only parameters are tuned
  std::string nvcc_space;     // e.g. "nvcc-13" when NVVM-stage knobs are searched too
  std::vector<std::string> units; // hex keys of the translation units the NVVM knobs apply to (CIQ_UNITS)
  std::vector<Dimension> dimensions;
  std::vector<Exclusion> exclusions;
  std::vector<std::string> left_out; // knobs the PTX lets ptxas ignore, not searched: "LABEL" (for the log)
  // Knobs ptxas replaces by its own value for kernels that declare a block
  // size, when every targeted kernel does (space file's `overridden_by`).
  std::vector<std::string> overridden_left_out;
  // `run --separately`: knobs not searched because they would act on
  // several targeted kernels at once: "LABEL" (for the log)
  std::vector<std::string> shared_left_out;
  // Options the build itself gives ptxas (or that ptxas ignores beside one
  // it gives), not searched: "LABEL (the build passes -maxrregcount=96)"
  std::vector<std::string> pinned_left_out;

  Candidate default_candidate() const;
  Candidate random_candidate(std::mt19937_64& rng) const;
  /// Leaves at the default each gene an exclusion forbids (what ptxas would
  /// refuse or ignore), until none does; returns whether it changed
  /// anything. Deterministic, and it only ever knocks genes out, so the
  /// repaired candidate compiles as the original would have where ptxas
  /// ignores a knob. Every candidate the search proposes passes here.
  bool repair(Candidate& c) const;
  /// Stable text naming a candidate: "label=value;..." of its set genes, or
  /// "default". Equal candidates give equal keys (the memo key).
  std::string canonical(const Candidate& c) const;
  /// Parses canonical() back; fails on labels or values not in this space.
  Result<Candidate> parse(const std::string& canonical_text) const;
  /// The compiler part of a candidate as a control set.
  spaces::ControlSet controls(const Candidate& c) const;
  /// Everything an evaluation needs of `c`, at once (ResolvedCandidate).
  ResolvedCandidate resolve(const Candidate& c) const;
  /// Index of the dimension of this kind, knob and kernel (directives
  /// only), or dimensions.size() when the search has none.
  std::size_t find(DimensionKind kind, std::string_view knob, std::string_view kernel = "") const;
  /// Value of parameter `name` in `c`: its value, or "" when knocked out.
  std::string param(const Candidate& c, const std::string& name) const;
  /// Total number of distinct candidates (saturating).
  double size() const;
};

/// Parses a --param value: NAME=range:START:END:STEP, NAME=choice:A,B,C or
/// NAME=literal:VALUE, optionally followed by ",default=V" (the baseline
/// value; else the first) and/or ",knockout=P" (chance of leaving it out).
Result<Dimension> parse_param(const std::string& spec);

/// The candidate of `space` that sets what `controls` sets; knobs it cannot
/// express are an error.
Result<Candidate> candidate_from_controls(const SearchSpace& space, const spaces::ControlSet& controls);

} // namespace ciq::tuner
