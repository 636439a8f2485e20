#include "utils/log.h"

#include "utils/config.h"

#include <cstdlib>
#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/stdout_sinks.h>

namespace ciq {

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
      logger->set_pattern("%Y-%m-%dT%H:%M:%S.%e %n[%P] %l: %v");
      if (!level_env || !*level_env) level = spdlog::level::debug;
    } catch (const spdlog::spdlog_ex&) {
      logger.reset(); // an unwritable log file must not break a build
    }
  }
  if (!logger) {
    logger = std::make_shared<spdlog::logger>(std::string(program),
                                              std::make_shared<spdlog::sinks::stderr_sink_st>());
    logger->set_pattern("%n: %l: %v");
  }
  logger->set_level(level);
  logger->flush_on(spdlog::level::trace);
  spdlog::set_default_logger(std::move(logger));
}

} // namespace ciq
