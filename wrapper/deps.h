// Tuned results in build dependencies. When an nvcc compile writes a
// dependency file (-MD, -MMD, --generate-dependencies-with-compile, with
// -MF/--dependency-output or the name nvcc derives), ciq-nvcc runs nvcc as
// a child with CIQ_STAMPS_OUT naming a private list; every ciq-ptxas and
// ciq-cicc step under it adds the cache stamps (cache/stamps.h) of the keys
// it looked up, with what the lookup saw. After nvcc succeeded, ciq-nvcc
// checks that no stamp changed while it compiled (if one did, the entry
// changed under the compile: nvcc runs again, at most twice more), then
// adds the stamps (and the pack files, for lookups that may reach
// CIQ_PACKS) to the object's rule in the dependency file, and an empty
// rule for each, as -MP does, so make does not stop when a stamp is gone. make and ninja then
// rebuild exactly the units whose entries changed; ccache in depend mode
// hashes the stamps' contents with the headers.
//
// A compile under the tuner (CIQ_CONTROLS) is compiled with a candidate's
// controls, not the cache's: its rule names a stamp that never exists, so
// the next ordinary build compiles that unit again.
//
// Everything here fails open: a list that cannot be made or read, a
// dependency file that cannot be appended to, leaves nvcc's own file and
// exit status as they were.
#pragma once

#include "cache/storage.h"
#include "utils/hash.h"

#include <optional>
#include <string>
#include <vector>

namespace ciq::wrapper {

/// The dependency file an nvcc command line (without argv[0]) writes while
/// it compiles; std::nullopt when it writes none, writes one without
/// compiling (-M, -MM, -E), or takes arguments from a file (-optf).
std::optional<std::string> compile_dependency_file(const std::vector<std::string>& nvcc_args);

/// A ptxas or cicc step: whether ciq-nvcc asked it for its stamps.
bool stamps_wanted();

/// What the local cache holds under each of `keys` now, as stamp texts:
/// read before a lookup and after it, so that an entry changed in between
/// is caught.
std::vector<std::string> local_stamp_texts(cache::Storage& storage, const std::vector<Hash128>& keys);

/// Makes the stamps of `keys` (`seen`: their texts before the lookup,
/// `now`: after) and lists them in CIQ_STAMPS_OUT, with the packs the
/// lookup may have read.
void list_stamps(const std::vector<Hash128>& keys, const std::vector<std::string>& seen, const std::vector<std::string>& now);

/// ciq-nvcc: runs `argv` (the real nvcc, prefixes added) with stamps asked
/// for, adds them to `dep_file` and ends like nvcc.
[[noreturn]] void run_nvcc_with_stamps(const std::string& real, const std::vector<std::string>& argv,
                                       const std::string& dep_file);

/// Adds a dependency that never exists to `dep_file` (a unit compiled with
/// a tuning candidate's controls); nothing when it cannot.
void mark_tuning_build(const std::string& dep_file);

} // namespace ciq::wrapper
