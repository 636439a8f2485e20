// Loading a shared library at run time and resolving a table of its entry
// points: the one way ciq reaches NVIDIA's libraries (the CUDA driver, NVML,
// CUPTI), which it never links (a machine without them still runs ciq; a
// library the driver loads into a program must not fail on a missing one).
// Position-independent and free of other ciq code (libc and libdl only):
// libciq-inject, a shared object inside the user's program, links it.
#pragma once

#include <string>
#include <vector>

namespace ciq::dl {

/// One entry point of a table: `name`, else `older` (an earlier ABI's name,
/// when not null), stored into a function pointer. A required one that is
/// missing makes the library unusable and is named in the error; an
/// optional one is left null.
struct Symbol {
  const char* name;
  const char* older;
  bool required;
  void* slot;                               // the function pointer's address
  void (*store)(void* slot, void* address); // writes `address` (or null) into it
};

/// A required entry point, stored into `fn`.
template <typename F> Symbol need(F& fn, const char* name, const char* older = nullptr) {
  return Symbol{name, older, true, &fn, [](void* slot, void* address) { *static_cast<F*>(slot) = reinterpret_cast<F>(address); }};
}
/// An optional entry point, stored into `fn` (null when absent).
template <typename F> Symbol may(F& fn, const char* name, const char* older = nullptr) {
  Symbol s = need(fn, name, older);
  s.required = false;
  return s;
}

/// Resolves every entry of `table` in `handle` (dlsym) and stores it.
/// Returns the names of the required entries not found, in table order,
/// joined by ", "; "" when every one was found.
std::string resolve(void* handle, const std::vector<Symbol>& table);

/// What load() found.
struct Library {
  void* handle = nullptr; // null: no candidate loaded with every required entry
  std::string path;       // the candidate that loaded, as given
  std::string error;      // handle null: for each candidate tried, dlopen's message or
                          // "PATH lacks A, B", joined by "; "
  std::string missing;    // handle null and the last candidate loaded: the entries it lacks ("A, B")
};

/// Loads the first of `candidates` (dlopen, RTLD_NOW | RTLD_LOCAL) that has
/// every required entry of `table`, and stores the entries. A candidate
/// that loads but lacks one is closed again before the next is tried. The
/// library found stays loaded for the life of the process unless the
/// caller closes it.
Library load(const std::vector<std::string>& candidates, const std::vector<Symbol>& table);

/// Whether `soname` is already in this process (dlopen RTLD_NOLOAD); the
/// reference taken then is kept, like the library.
bool already_loaded(const char* soname);

} // namespace ciq::dl
