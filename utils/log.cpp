#include "utils/log.h"

#include "utils/config.h"
#include "utils/text.h"

#include <cstdlib>
#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/stdout_sinks.h>

namespace ciq {

namespace {

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
    try {
      logger = std::make_shared<spdlog::logger>(
          std::string(program), std::make_shared<spdlog::sinks::basic_file_sink_st>(file, false));
      set_pattern(*logger, "%Y-%m-%dT%H:%M:%S.%e %n[%P] %l: %*");
      if (!level_env || !*level_env) level = spdlog::level::debug;
    } catch (const spdlog::spdlog_ex&) {
      logger.reset(); // an unwritable log file must not break a build
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
