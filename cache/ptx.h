// PTX as ciq sees it: normalised text (what keys hash) split into top-level
// items, so that each kernel can be named by its own text plus everything it
// uses. Comments, debug `.loc`/`.file` lines and whitespace differences do
// not change a key; any change to a kernel's code, to a function it calls or
// to a global it touches does.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace ciq::cache {

enum class PtxItemKind { header, entry, function, declaration, other };

struct PtxItem {
  PtxItemKind kind = PtxItemKind::other;
  std::string name;                     // entry/function/variable name; "" for headers
  std::string text;                     // normalised
  std::vector<std::string> identifiers; // every identifier the item mentions
};

struct PtxModule {
  std::string normalised;      // the whole module, normalised
  std::vector<PtxItem> items;  // in source order
  std::vector<std::size_t> entries; // indices of `.entry` items

  /// Names of the module's kernels (`.entry`), in source order.
  std::vector<std::string> kernel_names() const;
  /// The kernel's text plus the header and every item it reaches through
  /// calls and variable references, in source order; "" when absent.
  std::string kernel_closure_text(std::string_view kernel) const;
  /// Threads per block the kernel declares (`.reqntid`, else `.maxntid`:
  /// the product of its dimensions); 0 when it declares neither or is absent.
  long block_threads(std::string_view kernel) const;
};

/// Drops comments, `.loc`/`.file` lines and blank lines, trims every line
/// and collapses runs of blanks to one space.
std::string normalise_ptx(std::string_view ptx);

/// Normalises and splits a module. Never fails: text it cannot classify
/// becomes `other` items, which still count towards the module key.
PtxModule scan_ptx(std::string_view ptx);

} // namespace ciq::cache
