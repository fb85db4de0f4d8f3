#include "gpuperf/results/csv.h"

#include <charconv>
#include <cmath>

namespace gpuperf {

std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\n\r") == std::string::npos) return text;
  std::string out = "\"";
  for (char c : text) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

CsvRow& CsvRow::operator<<(double value) {
  if (!std::isfinite(value)) return cell("");
  char buffer[32];
  char* const end = std::to_chars(buffer, buffer + sizeof buffer, value).ptr;
  return cell(std::string(buffer, end));
}

CsvRow& CsvRow::operator<<(std::int64_t value) { return cell(std::to_string(value)); }
CsvRow& CsvRow::operator<<(int value) { return cell(std::to_string(value)); }
CsvRow& CsvRow::operator<<(std::size_t value) { return cell(std::to_string(value)); }
CsvRow& CsvRow::operator<<(bool value) { return cell(value ? "true" : "false"); }
CsvRow& CsvRow::operator<<(const char* value) { return cell(csv_field(value)); }
CsvRow& CsvRow::operator<<(const std::string& value) { return cell(csv_field(value)); }

void CsvRow::end(std::ostream& out) { out << line_ << "\r\n"; }

CsvRow& CsvRow::cell(const std::string& text) {
  line_ += (first_ ? "" : ",") + text;
  first_ = false;
  return *this;
}

void write_csv_header(std::ostream& out, std::initializer_list<const char*> names) {
  CsvRow row;
  for (const char* n : names) row << n;
  row.end(out);
}

}  // namespace gpuperf
