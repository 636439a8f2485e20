#include "tuner/rundir/results.h"

#include "utils/files.h"
#include "utils/text.h"

#include <cmath>

namespace ciq::tuner {

namespace {

// The columns before and after the objectives' (header() writes them).
constexpr const char* k_leading[] = {"number", "generation", "candidate"};
constexpr const char* k_trailing[] = {"status", "reason", "build_s", "bench_s"};

} // namespace

ResultsCsv::ResultsCsv(std::string dir, const std::vector<Objective>& objectives) : path_(join_path(dir, "results.csv")) {
  for (const auto& o : objectives) {
    names_.push_back(o.name);
    maximize_.push_back(o.maximize);
  }
}

std::string ResultsCsv::header() const {
  std::string header;
  for (const char* c : k_leading) header += (header.empty() ? "" : ",") + std::string(c);
  for (const auto& name : names_) header += "," + csv_field(name);
  for (const char* c : k_trailing) header += "," + std::string(c);
  return header;
}

std::string ResultsCsv::row(const EvalRecord& r) const {
  std::string row = std::to_string(r.number) + "," + std::to_string(r.generation) + "," + csv_field(r.candidate);
  for (std::size_t k = 0; k < names_.size(); ++k) {
    bool known = r.evaluation.valid && k < r.evaluation.objectives.size();
    double v = !known ? NAN : maximize_[k] ? -r.evaluation.objectives[k] : r.evaluation.objectives[k];
    row += "," + (r.evaluation.valid ? format_number(v) : "");
  }
  return row + "," + std::string(status_name(r.status)) + "," + csv_field(r.evaluation.reason) + "," + format_number(r.build_seconds) + "," +
         format_number(r.bench_seconds);
}

Result<void> ResultsCsv::begin() const { return append_whole_line(path_, header()); }

Result<void> ResultsCsv::rewrite(const std::vector<EvalRecord>& records) const {
  std::string csv = header() + "\n";
  for (const auto& r : records) csv += row(r) + "\n";
  return write_file_atomic(path_, csv);
}

Result<void> ResultsCsv::append(const EvalRecord& r) const { return append_whole_line(path_, row(r)); }

std::vector<std::string> parse_csv_record(std::string_view text) {
  std::vector<std::string> fields(1);
  bool quoted = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (quoted) {
      if (c != '"') fields.back() += c;
      else if (i + 1 < text.size() && text[i + 1] == '"') fields.back() += '"', ++i;
      else quoted = false;
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      fields.emplace_back();
    } else if (c == '\n' || c == '\r') {
      break;
    } else {
      fields.back() += c;
    }
  }
  return fields;
}

Result<std::vector<std::string>> read_objective_names(const std::string& dir) {
  std::string path = join_path(dir, "results.csv");
  auto text = read_file(path);
  if (!text) return text.error();
  std::vector<std::string> fields = parse_csv_record(*text);
  std::size_t lead = std::size(k_leading), trail = std::size(k_trailing);
  bool shaped = fields.size() >= lead + trail;
  for (std::size_t i = 0; shaped && i < lead; ++i) shaped = fields[i] == k_leading[i];
  for (std::size_t i = 0; shaped && i < trail; ++i) shaped = fields[fields.size() - trail + i] == k_trailing[i];
  if (!shaped) return make_error("parse", path + " does not begin with results.csv's header (" + printable(text->substr(0, 80)) + ")");
  return std::vector<std::string>(fields.begin() + std::ptrdiff_t(lead), fields.end() - std::ptrdiff_t(trail));
}

} // namespace ciq::tuner
