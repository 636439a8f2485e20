// The user's commands: split into words the way a shell would (quotes and
// backslashes honoured, nothing expanded), placeholders filled in, and run
// directly as argv, or through /bin/sh -c when the user asks for a shell.
#pragma once

#include "utils/process.h"
#include "utils/result.h"

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace ciq::tuner {

/// Shell-like word splitting: 'single', "double" (with \" \\ \$ escapes)
/// and backslash-escaped characters; fails on an unterminated quote.
Result<std::vector<std::string>> split_words(const std::string& command);

/// Replaces {controls}, {workdir}, {gpu} and {param:NAME} in `text`;
/// unknown placeholders fail (a typo must not run a wrong command).
Result<std::string> fill_placeholders(const std::string& text, const std::map<std::string, std::string>& values);

/// `value` as one /bin/sh word that means exactly `value`, whatever it holds
/// ($, `, \, quotes, spaces, newlines): single-quoted, each ' as '\''.
std::string shell_quoted(std::string_view value);

/// fill_placeholders for a command run by /bin/sh -c: each value arrives as
/// literal text, quoted for where it stands in `text`: a plain word or part of
/// one (`--out={workdir}/x`) gets shell_quoted(value); inside '...' its quotes
/// are escaped; inside "..." the double quotes are closed around it. Quoting
/// inside $(...) is followed. Fails for an unknown placeholder, for one inside
/// `...` or ${...} (no quoting there is safe: use $(...)), and for a quote
/// that is never closed.
Result<std::string> fill_shell_placeholders(const std::string& text, const std::map<std::string, std::string>& values);

/// The argv to run `command`: its words with placeholders filled in, or
/// {"/bin/sh", "-c", fill_shell_placeholders(command)} when `shell`.
Result<std::vector<std::string>> command_argv(const std::string& command, const std::map<std::string, std::string>& values,
                                              bool shell);

/// Output kept per stream of every command the tuner runs: its first and
/// last 1 MiB (RunOptions::capture_head_tail). The head holds a compiler's
/// first errors, the tail a benchmark's result lines; a metric is parsed
/// from what is kept, so a number printed in a dropped middle is not seen.
inline constexpr std::size_t k_kept_output_bytes = std::size_t(1) << 20;
/// After the command itself exits, how long the tuner still reads its output
/// (a daemon the build started may hold it open for ever).
inline constexpr double k_output_grace_seconds = 1.0;

/// What a finished command's log holds: stdout then stderr (as kept), a
/// line for each stream whose middle was dropped (how many bytes), and
/// how it ended.
std::string command_log_text(const RunResult& run);

/// Appends `text` to the log at `path`. A log that cannot be written costs
/// the log, not the evaluation: a warning says so, nothing fails.
void append_log(const std::string& path, const std::string& text);

/// Why a step failed, for people: `summary`, the output's most telling line
/// (its first line mentioning "error", else its last line) and the log's
/// path on the first line; then, indented with "  | ", the output's first
/// and last lines (and its error lines between) when there is more to see.
std::string failure_message(const std::string& summary, const std::string& output, const std::string& log_path);

} // namespace ciq::tuner
