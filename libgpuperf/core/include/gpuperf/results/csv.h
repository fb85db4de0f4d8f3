#pragma once
// CSV rows (RFC 4180) built cell by cell: numbers in their shortest exact form, an empty cell for
// "not available" (NaN), strings quoted when they hold a separator, a quote or a line break.
//
//   gpuperf::CsvRow row;
//   row << "resnet50" << std::int64_t{256} << 7016.5;
//   row.end(out);  // resnet50,256,7016.5\r\n

#include <cstdint>
#include <initializer_list>
#include <ostream>
#include <string>

namespace gpuperf {

/// Quotes a CSV field when it holds a comma, quote or line break.
[[nodiscard]] std::string csv_field(const std::string& text);

/// One CSV row.
class CsvRow {
 public:
  CsvRow& operator<<(double value);  ///< shortest exact decimal; empty when not finite
  CsvRow& operator<<(std::int64_t value);
  CsvRow& operator<<(int value);
  CsvRow& operator<<(std::size_t value);
  CsvRow& operator<<(bool value);  ///< true / false
  CsvRow& operator<<(const char* value);
  CsvRow& operator<<(const std::string& value);
  /// Writes the row and its line ending ("\r\n", as RFC 4180 says).
  void end(std::ostream& out);

 private:
  CsvRow& cell(const std::string& text);
  std::string line_;
  bool first_ = true;
};

/// Writes a header row of column names.
void write_csv_header(std::ostream& out, std::initializer_list<const char*> names);

}  // namespace gpuperf
