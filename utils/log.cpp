#include "utils/log.h"

#include "utils/config.h"
#include "utils/files.h"
#include "utils/safe_open.h"
#include "utils/text.h"

#include <cstdlib>
#include <spdlog/details/null_mutex.h>
#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/base_sink.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <unistd.h>

namespace ciq {
namespace {

/// CIQ_LOG_FILE's sink: a descriptor from open_log_destination (a FIFO or
/// terminal stays non-blocking: a line nobody takes is dropped, the build
/// goes on). spdlog's file sink opens with fopen, which follows links and
/// waits for a FIFO's reader.
class DescriptorSink final : public spdlog::sinks::base_sink<spdlog::details::null_mutex> {
public:
  explicit DescriptorSink(int fd) : fd_(fd) {}
  ~DescriptorSink() override { ::close(fd_); }

protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    spdlog::memory_buf_t line;
    formatter_->format(msg, line);
    (void)write_all(fd_, std::string_view(line.data(), line.size()));
  }
  void flush_() override {}

private:
  int fd_;
};


// `%*`: the message, printable() (utils/text.h). Log lines carry kernel
// names from PTX, other programs' error text and Redis replies: none of it
// may act on the terminal that shows the log, or split one line in two.
class printable_message final : public spdlog::custom_flag_formatter {
public:
  void format(const spdlog::details::log_msg& msg, const std::tm&, spdlog::memory_buf_t& dest) override {
    std::string shown = printable(std::string_view(msg.payload.data(), msg.payload.size()));
    dest.append(shown.data(), shown.data() + shown.size());
  }
  std::unique_ptr<custom_flag_formatter> clone() const override { return std::make_unique<printable_message>(); }
};

void set_pattern(spdlog::logger& logger, const std::string& pattern) {
  auto formatter = std::make_unique<spdlog::pattern_formatter>();
  formatter->add_flag<printable_message>('*').set_pattern(pattern);
  logger.set_formatter(std::move(formatter));
}

} // namespace

void setup_logging(std::string_view program, std::string_view default_level) {
  const char* level_env = std::getenv(env_name(Env::log_level));
  std::string level_name = level_env && *level_env ? level_env : std::string(default_level);
  auto level = spdlog::level::from_str(level_name);
  const char* file = std::getenv(env_name(Env::log_file));

  std::shared_ptr<spdlog::logger> logger;
  if (file && *file) {
    // An unusable log file must not break a build: the log goes to stderr
    // at the level asked for (silent for the wrappers by default).
    if (auto fd = open_log_destination(file)) {
      logger = std::make_shared<spdlog::logger>(std::string(program), std::make_shared<DescriptorSink>(*fd));
      set_pattern(*logger, "%Y-%m-%dT%H:%M:%S.%e %n[%P] %l: %*");
      if (!level_env || !*level_env) level = spdlog::level::debug;
    }
  }
  if (!logger) {
    logger = std::make_shared<spdlog::logger>(std::string(program),
                                              std::make_shared<spdlog::sinks::stderr_sink_st>());
    set_pattern(*logger, "%n: %l: %*");
  }
  logger->set_level(level);
  logger->flush_on(spdlog::level::trace);
  spdlog::set_default_logger(std::move(logger));
}

} // namespace ciq
