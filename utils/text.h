// Small text helpers shared by the parsers: trimming, splitting, glob
// matching for kernel-name filters, and the `key = value` file format used
// by control sets, space files and cache records.
#pragma once

#include "utils/result.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ciq {

std::string_view trim(std::string_view s);
std::vector<std::string_view> split(std::string_view s, char separator);
bool starts_with(std::string_view s, std::string_view prefix);
bool ends_with(std::string_view s, std::string_view suffix);

/// Shell-style glob over a whole string: `*`, `?`, `[abc]`, `[a-z]`, `[!x]`,
/// and `{a,b,c}` for alternatives (as the shell's brace expansion: not
/// nested; braces without a comma at their level are literal, and `[,]`,
/// `[{]`, `[}]` match those characters). One glob can name a set of kernels.
bool glob_match(std::string_view pattern, std::string_view text);

/// A glob that matches exactly `name` and nothing else: each glob
/// character (`*?[]\{},`) bracketed, so glob_match(exact_glob(n), n).
std::string exact_glob(std::string_view name);

/// Why `pattern` is malformed, for a usage error; "" when it is well
/// formed. glob_match() takes a '[' that no ']' closes for a literal '[',
/// and a '{' with commas but no '}' for literal text; a kernel name holds
/// neither, so such a glob would silently select nothing. A literal '[' is
/// written [[], a literal '{' [{].
std::string glob_problem(std::string_view pattern);

/// The usage error for a glob option (`option`, "--kernels") given as
/// `glob`: an empty one given (a variable that expanded to nothing) selects
/// no kernel, a malformed one (glob_problem()) nothing either; "" when it
/// is fine or was not `given`. The one wording for every tool.
std::string glob_option_problem(std::string_view option, std::string_view glob, bool given);

/// Strict decimal integer (optional sign); std::nullopt on anything else.
std::optional<long long> parse_integer(std::string_view s);

/// The one spelling of an integer: "0", or digits without a leading zero,
/// after an optional '-' ("017", "+2", "0002" and "-0" are not). For values
/// a compiler reads, where another spelling can mean another number
/// (ptxas reads "017" as octal 15); std::nullopt on anything else.
std::optional<long long> parse_canonical_integer(std::string_view s);

/// One `key = value` line of a key-value text, with the `[section]` it is in.
struct KeyValue {
  std::string section; // "" before the first header
  std::string key;
  std::string value;   // unquoted
  int line = 0;
};

/// Parses the ciq key-value format: `# comment` lines, `[section]` headers,
/// `key = value` lines; a value may be double-quoted (with \" and \\).
/// `origin` names the input in error messages ("controls.txt:4: ...").
Result<std::vector<KeyValue>> parse_key_values(std::string_view text, std::string_view origin);

/// `key = value` with the value quoted when it needs to be.
std::string format_key_value(std::string_view key, std::string_view value);

/// A CSV field (RFC 4180): quoted (with "" for ") when it holds a comma, quote
/// or line break; the bytes are kept (CSV is for programs).
std::string csv_field(std::string_view s);

/// A number for people and CSV: up to 6 significant digits ("1.2345", "264").
std::string format_number(double value);

/// "13.0" of a toolkit version "13.0.88" (what knob spaces' `versions` and
/// captures' ptxas_release name): up to the second dot; the version itself
/// when it has none.
std::string release_of(std::string_view version);

/// `s` made safe to show on a terminal or in one log line: a name, a record
/// field, another program's text. Valid UTF-8 text is kept as it is; what a
/// terminal would act on instead of showing becomes a visible escape: C0
/// controls and DEL (\x1b, \n, \r, \t, \x7f), C1 controls U+0080-U+009F
/// and the bidirectional overrides U+202A-U+202E, U+2066-U+2069 (\u009b,
/// \u202e), and each byte that is not part of valid UTF-8 (\xff). Not for
/// --json or CSV meant for programs: they keep the bytes.
std::string printable(std::string_view s);

/// As printable(), but keeping '\n': for text shown as lines on purpose
/// (the tail of a command's output, a multi-line error message).
std::string printable_lines(std::string_view s);

/// True when printable(s) == s: no control character, C1 control,
/// bidirectional override or invalid UTF-8 in `s`. For fields that must be
/// identifiers (a kernel name, a knob, a target), refused otherwise.
bool is_printable(std::string_view s);

} // namespace ciq
