#include "tuner/commands/campaign_runs.h"

#include "tuner/rundir/command_line.h"
#include "utils/config.h"
#include "utils/files.h"
#include "utils/text.h"

#include <unistd.h>

namespace ciq::tuner {

namespace {

// A `ciq-tuner run` of the campaign: a fresh one (`args`, then --out DIR
// --json, the campaign's memo and the slot's --gpus), or the resumption of
// what an interrupted campaign left in DIR.
RunOptions tuner_run(const CampaignOptions& c, const std::string& dir, std::vector<std::string> args, const std::string& gpus) {
  RunOptions run;
  std::string self = self_executable();
  if (path_exists(join_path(dir, "journal.jsonl"))) {
    run.argv = {self, "run", "--resume", dir, "--json"};
  } else {
    run.argv = {self, "run"};
    run.argv.insert(run.argv.end(), args.begin(), args.end());
    run.argv.insert(run.argv.end(), {"--out", dir, "--json"});
    // The runs build the same program: one memo of nvcc's steps serves
    // them all (a kernel's default build reuses the cicc steps of the
    // kernel tuned before it).
    if (c.tune.setup.memo) run.argv.insert(run.argv.end(), {"--memo-dir", join_path(c.tune.out_dir, "memo")});
    if (!gpus.empty()) run.argv.insert(run.argv.end(), {"--gpus", gpus});
  }
  run.capture_stdout = run.stdin_null = true;
  run.stderr_file = dir + ".log"; // as it goes: `tail -f` it, and it survives an interrupt
  run.own_process_group = true; // tracked: an interrupt reaches it, and it cancels its own jobs
  run.set_env = {{env_name(Env::campaign_pid), std::to_string(::getpid())}}; // and it ends if the campaign dies
  // Its argv (c.run_args, and the command-line it saves) shows --publish
  // without the password, which anyone may read in ps: the URL comes here.
  if (!c.tune.publish.empty()) run.set_env.emplace_back(env_name(Env::publish), c.tune.publish);
  return run;
}

// The campaign's run options less those a replay replaces: the program's
// build and benchmark, and what is read from them.
std::vector<std::string> replay_run_args(const std::vector<std::string>& run_args) {
  return forward_arguments(run_args, "run", "run", group_program);
}

// What a confirmation in the program adds to the campaign's run options:
// only the default and the winner (budget 2, no probes, no pruning: the
// replay pruned it, at a fraction of a program run's cost), one program run
// per evaluation (the verification's interleaved pairs decide; on the H200,
// llm.c, a run's kernel time varied by 0.1-0.3 % while each of the three
// runs cost 2.9 s), and `discovery` (reusable_discovery) rather than a
// traced build again.
std::vector<std::string> confirmation_args(const std::string& controls, const std::string& discovery) {
  std::vector<std::string> args{"--seed-controls", controls, "--budget", "2", "--occupancy-probes=false", "--prune=false",
                                "--repeats", "1"};
  if (!discovery.empty()) args.insert(args.end(), {"--discovery-from", discovery});
  return args;
}

} // namespace

RunOptions kernel_run(const CampaignOptions& c, const KernelResult& r, const std::string& gpus,
                      const std::vector<std::string>& hints) {
  std::vector<std::string> args = c.run_args;
  args.insert(args.end(), {"--kernels", exact_glob(r.kernel)});
  for (const auto& h : hints) args.insert(args.end(), {"--seed-hint", h});
  return tuner_run(c, r.run_dir, std::move(args), gpus);
}

RunOptions together_run(const CampaignOptions& c, const std::vector<std::string>& kernels, const std::string& dir,
                        const std::string& gpus) {
  std::string glob;
  for (const auto& k : kernels) glob += (glob.empty() ? "{" : ",") + exact_glob(k);
  std::vector<std::string> args = c.run_args;
  args.insert(args.end(), {"--kernels", glob + "}", "--separately"});
  return tuner_run(c, dir, std::move(args), gpus);
}

RunOptions replay_run(const CampaignOptions& c, const KernelResult& r, const std::string& captures, const std::string& gpus,
                      const std::vector<std::string>& hints) {
  std::vector<std::string> args = replay_run_args(c.run_args);
  args.insert(args.end(), {"--capture", captures, "--kernels", exact_glob(r.kernel), "--no-ship"});
  for (const auto& h : hints) args.insert(args.end(), {"--seed-hint", h});
  return tuner_run(c, r.replay_dir, std::move(args), gpus);
}

std::string reusable_discovery(const CampaignOptions& c, const std::vector<KernelResult>& results) {
  std::vector<std::string> dirs{join_path(c.tune.out_dir, "discovery")};
  for (const auto& r : results) dirs.push_back(join_path(r.run_dir, "discovery"));
  for (const auto& d : dirs)
    if (path_exists(join_path(d, "complete"))) return d;
  return "";
}

// A confirmation's options replace the campaign's own of the same names:
// the user's --seed-controls too, which would otherwise be the second
// candidate of a budget of 2, and the winner never measured.
RunOptions confirm_run(const CampaignOptions& c, const KernelResult& r, const std::string& controls, const std::string& discovery,
                       const std::string& gpus) {
  std::vector<std::string> set{"--kernels", exact_glob(r.kernel)};
  for (auto& a : confirmation_args(controls, discovery)) set.push_back(std::move(a));
  return tuner_run(c, r.run_dir, forward_arguments(c.run_args, "run", "run", group_none, set), gpus);
}

RunOptions joint_confirm_run(const CampaignOptions& c, const std::vector<std::string>& kernels, const std::string& controls,
                             const std::string& discovery, const std::string& dir, const std::string& gpus) {
  std::string glob;
  for (const auto& k : kernels) glob += (glob.empty() ? "{" : ",") + exact_glob(k);
  std::vector<std::string> set{"--kernels", glob + "}", "--separately"};
  for (auto& a : confirmation_args(controls, discovery)) set.push_back(std::move(a));
  return tuner_run(c, dir, forward_arguments(c.run_args, "run", "run", group_none, set), gpus);
}

} // namespace ciq::tuner
