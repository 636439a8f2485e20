// The error type and the value-or-error result every fallible ciq call
// returns. Errors carry a short machine code (for counters and tests) and a
// message written for a person ("what went wrong and what to do"). A cache
// miss is never an error: callers use Result<std::optional<T>>.
#pragma once

#include <cassert>
#include <string>
#include <utility>
#include <variant>

namespace ciq {

struct Error {
  std::string code;     // stable, lowercase: "io", "parse", "lmdb", "invalid", ...
  std::string message;  // for people
};

/// The error codes some caller branches on, each named once: a misspelt
/// code is then a compile error, not a branch never taken. (Codes only
/// counted or shown, "io", "parse", ..., stay literals.)
namespace errc {
inline constexpr const char* unsafe = "unsafe";
inline constexpr const char* exists = "exists";
inline constexpr const char* usage = "usage";
inline constexpr const char* absent = "absent";
inline constexpr const char* other_gpu = "other-gpu";
inline constexpr const char* not_regular = "not-regular";
inline constexpr const char* not_found = "not-found";
inline constexpr const char* missing = "missing";
inline constexpr const char* exited = "exited";
inline constexpr const char* cuda = "cuda";
inline constexpr const char* corrupt = "corrupt";
inline constexpr const char* timeout = "timeout";
inline constexpr const char* skipped = "skipped";
inline constexpr const char* no_timing = "no-timing";
inline constexpr const char* no_answer = "no-answer"; // a resident process did not answer in time
} // namespace errc

inline Error make_error(std::string code, std::string message) {
  return Error{std::move(code), std::move(message)};
}

template <typename T> class [[nodiscard]] Result {
public:
  Result(T value) : state_(std::move(value)) {}
  Result(Error error) : state_(std::move(error)) {}

  bool ok() const { return state_.index() == 0; }
  explicit operator bool() const { return ok(); }

  T& value() & { assert(ok()); return std::get<0>(state_); }
  const T& value() const& { assert(ok()); return std::get<0>(state_); }
  T&& value() && { assert(ok()); return std::get<0>(std::move(state_)); }
  T& operator*() & { return value(); }
  T&& operator*() && { return std::move(*this).value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  const Error& error() const { assert(!ok()); return std::get<1>(state_); }

private:
  std::variant<T, Error> state_;
};

/// Result of a call that has no value on success.
template <> class [[nodiscard]] Result<void> {
public:
  Result() = default;
  Result(Error error) : error_(std::move(error)), ok_(false) {}
  bool ok() const { return ok_; }
  explicit operator bool() const { return ok_; }
  const Error& error() const { assert(!ok_); return error_; }

private:
  Error error_;
  bool ok_ = true;
};

} // namespace ciq
