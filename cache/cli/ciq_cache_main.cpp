// ciq-cache: inspect and edit the ciq cache. Option parsing only; the work
// is in commands.cpp.
#include "cache/cli/cache_dir.h"
#include "cache/cli/commands.h"
#include "cache/cli/doctor.h"
#include "cache/cli/packs.h"
#include "cache/cli/stale.h"
#include "utils/cli/parse.h"
#include "utils/config.h"
#include "utils/files.h"
#include "utils/log.h"
#include "utils/text.h"

#include <iostream>
#include <llvm/Support/CommandLine.h>
#include <llvm/Support/InitLLVM.h>
#include <llvm/Support/raw_ostream.h>

using namespace llvm;
namespace cli = ciq::cache::cli;

static cl::OptionCategory category("ciq-cache options");

static cl::SubCommand stats_cmd("stats", "Show the cache's size and the wrappers' counters (hits, misses, ...)");
static cl::SubCommand list_cmd("list", "List the stored control sets, one per line");
static cl::SubCommand show_cmd("show", "Show one record in full (key prefix from 'list')");
static cl::SubCommand put_cmd("put", "Store a control set for the kernels of a PTX file");
static cl::SubCommand rm_cmd("rm", "Remove records by key prefix");
static cl::SubCommand verify_cmd("verify", "Check every record and ACF blob; non-zero exit if any is broken");
static cl::SubCommand gc_cmd("gc", "Remove unreferenced ACF blobs and stale quarantine marks");
static cl::SubCommand export_cmd("export", "Write entries to a pack file (deterministic text, for review and git)");
static cl::SubCommand import_cmd("import", "Merge a pack file into the cache (validated; the better result wins)");
static cl::SubCommand merge_cmd("merge", "Merge two pack files into a third");
static cl::SubCommand import_acfs_cmd("import-acfs", "Store the ACFs of a zip or directory (checked against its manifest) as a named candidate set for ciq-tuner --acf-candidates");
static cl::SubCommand env_cmd("env", "List every CIQ_* environment variable, what it does, and its value here");
static cl::SubCommand stale_cmd("stale", "List the entries a toolkit or GPU change left behind: made for another ptxas/nvcc than the one found now, or verified on another GPU model");
static cl::SubCommand doctor_cmd("doctor", "Check a build directory: is it compiled through ciq-nvcc, can its compiler cache return objects compiled with other controls, which objects are stale now");
static cl::SubCommand push_cmd("push", "Upload the cache's entries to a team Redis (redis://host:port/db); a better remote result stays");

static cl::opt<std::string> cache_dir("cache-dir", cl::desc("Cache directory (default: $CIQ_CACHE_DIR, else $XDG_CACHE_HOME/ciq or ~/.cache/ciq)"),
                                      cl::value_desc("dir"), cl::cat(category), cl::sub(*cl::AllSubCommands));
static cl::opt<bool> json("json", cl::desc("Print JSON (one object per line) for scripts"), cl::cat(category),
                          cl::sub(*cl::AllSubCommands));

static cl::opt<bool> zero("zero", cl::desc("Reset the counters after printing them"), cl::cat(category), cl::sub(stats_cmd));
static cl::opt<std::string> kernels("kernels", cl::desc("Only records for kernels matching this glob"),
                                    cl::value_desc("glob"), cl::cat(category), cl::sub(list_cmd), cl::sub(export_cmd));
static cl::opt<std::string> output("o", cl::desc("Output pack file ('-' for stdout)"), cl::value_desc("file"), cl::cat(category),
                                   cl::sub(export_cmd), cl::sub(merge_cmd));
static cl::opt<std::string> export_space("space", cl::desc("Only entries of this knob space"), cl::value_desc("name"),
                                         cl::cat(category), cl::sub(export_cmd));
static cl::opt<std::string> export_gpu("gpu", cl::desc("Only entries tuned on this GPU model, as `stale --gpu` compares it (case and a leading \"NVIDIA \" ignored), e.g. \"H100 80GB HBM3\""), cl::value_desc("model"),
                                       cl::cat(category), cl::sub(export_cmd));
static cl::opt<std::string> stale_gpu("gpu", cl::desc("The GPU model to compare with, as NVML names it, e.g. \"NVIDIA H100 80GB HBM3\" (default: $CIQ_GPU_MODEL, else the first GPU here)"),
                                      cl::value_desc("name"), cl::cat(category), cl::sub(stale_cmd));
static cl::opt<std::string> export_since("since", cl::desc("Only entries created on or after this date (YYYY-MM-DD)"),
                                         cl::value_desc("date"), cl::cat(category), cl::sub(export_cmd));
static cl::opt<std::string> doctor_dir(cl::Positional, cl::desc("<build directory>"), cl::Required, cl::sub(doctor_cmd));
static cl::opt<std::string> import_file(cl::Positional, cl::desc("<pack file>"), cl::Required, cl::sub(import_cmd));
static cl::opt<bool> dry_run("dry-run", cl::desc("Report what would change; write nothing"), cl::cat(category), cl::sub(import_cmd));
static cl::list<std::string> merge_inputs(cl::Positional, cl::desc("<pack A> <pack B>"), cl::sub(merge_cmd));
static cl::opt<std::string> acf_source(cl::Positional, cl::desc("<zip file or directory>"), cl::Required, cl::sub(import_acfs_cmd));
static cl::opt<std::string> acf_set_name("name", cl::desc("Name of the candidate set (default: the source's base name)"), cl::value_desc("name"),
                                         cl::cat(category), cl::sub(import_acfs_cmd));
static cl::opt<std::string> push_url(cl::Positional, cl::desc("<redis://host:port/db>"), cl::Required, cl::sub(push_cmd));
static cl::opt<std::string> show_key(cl::Positional, cl::desc("<key prefix>"), cl::Required, cl::sub(show_cmd));
static cl::list<std::string> rm_keys(cl::Positional, cl::desc("<key prefix>..."), cl::sub(rm_cmd));
static cl::opt<bool> rm_all("all", cl::desc("Remove every record"), cl::cat(category), cl::sub(rm_cmd));
static cl::opt<bool> fix("fix", cl::desc("Remove the broken entries found"), cl::cat(category), cl::sub(verify_cmd));
static cl::opt<bool> gc_quarantined("quarantined", cl::desc("Also remove records quarantined after ptxas failed with them"),
                                    cl::cat(category), cl::sub(gc_cmd));

static cl::opt<std::string> ptx("ptx", cl::desc("PTX file the controls are for (required, except with --unit)"), cl::value_desc("file"),
                                cl::cat(category), cl::sub(put_cmd));
static cl::opt<std::string> arch("arch", cl::desc("Target ptxas compiles for, e.g. sm_90a (required, except with --unit: there the virtual target, e.g. compute_90a, for listings)"),
                                 cl::value_desc("sm_XX"), cl::cat(category), cl::sub(put_cmd));
static cl::list<std::string> sets("set", cl::desc("KNOB=VALUE (a ptxas option) or KERNEL:KNOB=VALUE (a PTX directive); repeatable"),
                                  cl::value_desc("assignment"), cl::cat(category), cl::sub(put_cmd));
static cl::opt<std::string> controls("controls", cl::desc("Control-set file (ciq-controls/1 text); --set adds to it"),
                                     cl::value_desc("file"), cl::cat(category), cl::sub(put_cmd));
static cl::opt<std::string> acf("acf", cl::desc("NVIDIA Advanced Controls File to apply with the set (stored as an opaque blob)"),
                                cl::value_desc("file"), cl::cat(category), cl::sub(put_cmd));
static cl::opt<std::string> flags("flags", cl::desc("The build's own codegen flags for ptxas, e.g. \"-O2 --fmad=false\" (part of the key)"),
                                  cl::value_desc("flags"), cl::cat(category), cl::sub(put_cmd));
static cl::opt<std::string> ptxas("ptxas", cl::desc("The ptxas the entry is for (default: $CIQ_REAL_PTXAS, else ptxas on PATH)"),
                                  cl::value_desc("path"), cl::cat(category), cl::sub(put_cmd));
static cl::opt<std::string> unit("unit", cl::desc("Store an NVVM-stage entry for the translation unit with this key (a ciq-nvcc build's CIQ_TRACE/units/*.json has it); --set then takes nvcc-space knobs"),
                                 cl::value_desc("key"), cl::cat(category), cl::sub(put_cmd));
static cl::opt<std::string> nvcc("nvcc", cl::desc("With --unit: the nvcc the entry is for (default: $CIQ_REAL_NVCC, else nvcc on PATH)"),
                                 cl::value_desc("path"), cl::cat(category), cl::sub(put_cmd));
static cl::opt<bool> allow_unsafe("allow-unsafe", cl::desc("Allow knobs of the 'unsafe' class (they change program semantics)"),
                                  cl::cat(category), cl::sub(put_cmd));

static const char* overview = R"(inspect and edit the ciq cache of tuned compiler controls

The cache maps PTX (per module and per kernel, for one target, ptxas version
and set of codegen flags) to a control set that ciq-ptxas / ciq-nvcc apply.

Examples:
  ciq-cache put --ptx k.ptx --arch sm_90a --set maxrregcount=128
  ciq-cache put --ptx k.ptx --arch sm_90a --set _Z5heavyPKfPfi:maxnreg=96
  ciq-cache put --ptx k.ptx --arch sm_90a --controls best.controls
  ciq-cache put --unit 8069f59c996baf875bd23a8716ce54cd --set fmad=0
  ciq-cache list --kernels '*heavy*'
  ciq-cache show 3fa2
  ciq-cache stats
  ciq-cache stale --gpu "NVIDIA H100 80GB HBM3"
  ciq-cache verify --fix
  ciq-cache rm 3fa2
  ciq-cache export -o kernels.ciqpack --kernels '*attention*'
  ciq-cache import kernels.ciqpack --dry-run
  ciq-cache merge mine.ciqpack theirs.ciqpack -o team.ciqpack
  ciq-cache import-acfs booster-pack.zip --name booster
  ciq-cache push redis://ciq.example.internal:6379/0
  ciq-cache doctor build

Run 'ciq-cache <subcommand> --help' for a subcommand's options.
Environment: CIQ_CACHE_DIR, CIQ_REAL_PTXAS, CIQ_REAL_NVCC, CIQ_SPACES_DIR, CIQ_LOG_LEVEL, CIQ_GPU_MODEL (stale),
CIQ_REMOTE_TIMEOUT_MS (push: MS or CONNECT_MS,IO_MS); 'ciq-cache env' lists them all.
)";

int main(int argc, char** argv) {
  InitLLVM init(argc, argv);
  cl::HideUnrelatedOptions(category);
  cl::SetVersionPrinter([](raw_ostream& os) { os << "ciq-cache (ciq) " CIQ_VERSION "\n"; });
  if (auto parse_errors = ciq::cli::parse_command_line(argc, argv, overview)) {
    ciq::cli::report_parse_errors("ciq-cache", *parse_errors);
    return 2;
  }
  ciq::setup_logging("ciq-cache", "warn");

  bool named_by_user = !cache_dir.empty() || !ciq::env(ciq::Env::cache_dir).empty();
  std::string dir = cache_dir.empty() ? ciq::cache_directory() : std::string(cache_dir);
  ciq::Result<void> result;
  // Reading a cache that is not there is a mistake, not an empty cache;
  // storing creates at most the last component of a directory the user named.
  bool reads = stats_cmd || stale_cmd || list_cmd || show_cmd || rm_cmd || verify_cmd || gc_cmd || export_cmd || push_cmd;
  bool stores = put_cmd || import_cmd || import_acfs_cmd;
  bool creating = false; // a storing command on a missing directory: the store creates it
  // A --kernels glob given empty or malformed would select everything, or
  // nothing, silently.
  if (std::string problem = ciq::glob_option_problem("--kernels", kernels, kernels.getNumOccurrences() > 0);
      (list_cmd || export_cmd) && !problem.empty())
    result = ciq::make_error(ciq::errc::usage, problem);
  else if (reads) {
    if (auto usable = cli::require_cache_dir(dir); !usable) result = usable.error();
  } else if (stores) {
    auto missing = cli::check_storing_dir(dir, named_by_user);
    if (!missing) result = missing.error();
    else creating = *missing;
  }
  if (!result) {
    // the directory is unusable: reported below, nothing runs
  } else if (stats_cmd) result = cli::show_stats(dir, json, zero, std::cout);
  else if (env_cmd) result = cli::show_environment(json, std::cout);
  else if (doctor_cmd) {
    auto problem = cli::diagnose_build(dir, doctor_dir, json, std::cout);
    if (!problem) result = problem.error();
    else if (*problem) {
      std::cout.flush();
      return 1;  // a problem found: as a linter says so
    }
  }
  else if (list_cmd) result = cli::list_records(dir, kernels, json, std::cout);
  else if (stale_cmd) result = cli::list_stale(dir, {stale_gpu}, json, std::cout);
  else if (show_cmd) result = cli::show_record(dir, show_key, json, std::cout);
  else if (rm_cmd) result = cli::remove_records(dir, rm_keys, rm_all, json, std::cout);
  else if (verify_cmd) result = cli::verify_cache(dir, fix, json, std::cout);
  else if (gc_cmd) result = cli::collect_garbage(dir, gc_quarantined, json, std::cout);
  else if (export_cmd) result = cli::export_pack(dir, {kernels, export_space, export_gpu, export_since}, output, json, std::cout);
  else if (import_acfs_cmd) result = cli::import_acfs(dir, acf_source, acf_set_name, json, std::cout);
  else if (push_cmd) result = cli::push_cache(dir, push_url, json, std::cout);
  else if (import_cmd) result = cli::import_pack(dir, import_file, dry_run, json, std::cout);
  else if (merge_cmd) {
    if (merge_inputs.size() != 2) {
      std::cerr << "ciq-cache: error: merge takes two pack files: ciq-cache merge A B -o C\n";
      return 2;
    }
    result = cli::merge_packs(merge_inputs[0], merge_inputs[1], output, json, std::cout);
  } else if (put_cmd) {
    cli::PutRequest request;
    request.ptx_file = ptx;
    request.arch = arch;
    request.flags = flags;
    request.ptxas = ptxas;
    request.controls_file = controls;
    request.assignments.assign(sets.begin(), sets.end());
    request.acf_file = acf;
    request.allow_unsafe = allow_unsafe;
    request.unit_key = unit;
    request.nvcc = nvcc;
    result = cli::put_controls(dir, request, json, std::cout);
  } else {
    std::cerr << "ciq-cache: error: no subcommand given; run 'ciq-cache --help' for the list\n";
    return 2;
  }
  std::cout.flush();
  if (creating && ciq::is_directory(dir)) std::cerr << "ciq-cache: created the cache directory " << dir << "\n";
  if (!result) {
    std::cerr << "ciq-cache: error: " << ciq::printable_lines(result.error().message) << "\n";
    return result.error().code == ciq::errc::usage ? 2 : 1; // 2: a mistake on the command line
  }
  return 0;
}
