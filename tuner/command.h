// The user's commands: split into words the way a shell would (quotes and
// backslashes honoured, nothing expanded), placeholders filled in, and run
// directly as argv, or through /bin/sh -c when the user asks for a shell.
#pragma once

#include "utils/result.h"

#include <map>
#include <string>
#include <vector>

namespace ciq::tuner {

/// Shell-like word splitting: 'single', "double" (with \" \\ \$ escapes)
/// and backslash-escaped characters; fails on an unterminated quote.
Result<std::vector<std::string>> split_words(const std::string& command);

/// Replaces {controls}, {workdir}, {gpu} and {param:NAME} in `text`;
/// unknown placeholders fail (a typo must not run a wrong command).
Result<std::string> fill_placeholders(const std::string& text, const std::map<std::string, std::string>& values);

/// The argv to run `command`: its words with placeholders filled in, or
/// {"/bin/sh", "-c", filled} when `shell`.
Result<std::vector<std::string>> command_argv(const std::string& command, const std::map<std::string, std::string>& values,
                                              bool shell);

} // namespace ciq::tuner
