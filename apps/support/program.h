#pragma once
// What every gpuperf program shares: one run_program() that parses argv with CLI11, answers
// --help and --version, runs the program's body and maps errors to exit codes, so that all
// programs behave the same. Not part of the library: the library never sees argv.
//
//   int main(int argc, char** argv) {
//     CLI::App app("what it does", "name");
//     std::string path;
//     app.add_option("--json", path, "...");
//     return gpuperf::program::run_program(app, argc, argv, [&] { ...; return 0; });
//   }

#include <CLI/CLI.hpp>

#include <functional>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "gpuperf/base/error.h"
#include "gpuperf/results/export.h"

namespace gpuperf::program {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;      ///< a runtime failure
inline constexpr int kExitUsage = 2;        ///< bad usage or input: nothing ran, nothing written
inline constexpr int kExitOutOfMemory = 3;  ///< the device ran out of memory

/// Parses argv into `app` (adding --version), then runs `body` and returns its exit code.
/// --help and --version print to `out` and return 0. Errors print one line
/// "<program>: error: <message>" to `err`: a parse error, ConfigError or IoError gives
/// kExitUsage, OutOfMemoryError kExitOutOfMemory, any other exception kExitFailure.
///
/// Before parsing it installs the stop-signal handlers (install_stop_signal_handlers()), refuses
/// an argument that is not valid UTF-8 or holds a control character, and makes every numeric
/// option strict (strict_numbers()): nothing runs on a value it would have to guess at.
int run_program(CLI::App& app, int argc, const char* const* argv, const std::function<int()>& body,
                std::ostream& out = std::cout, std::ostream& err = std::cerr);

/// For main()'s catch (...): an exception from building the command line or from run_program()'s
/// own setup (a programming error, such as two options of one name) prints
/// "<program>: error: <message>" to `err` and gives kExitFailure, rather than std::terminate().
///
///   int main(int argc, char** argv) try { ...; } catch (...) { return setup_failed("name"); }
[[nodiscard]] int setup_failed(const char* program, std::ostream& err = std::cerr) noexcept;

/// A library message as this program's user reads it: every "Owner::field" the program has a
/// flag for spelled as that flag ("Try a smaller TrainingRun::batch_size" -> "--batch-size"); what
/// the records keep stays in the library's words.
[[nodiscard]] std::string in_flags(const CLI::App& app, const std::string& text);

/// Exit status of a program ended by signal `signal_number`, as a shell reports it: 128 + N
/// (130 SIGINT, 143 SIGTERM, 129 SIGHUP).
[[nodiscard]] constexpr int exit_code_for_signal(int signal_number) { return 128 + signal_number; }

/// Installs, once per process, handlers for SIGINT, SIGTERM and SIGHUP (a signal the program
/// was started with ignored, as under nohup, stays ignored). The handler uses async-signal-safe
/// calls only: it removes the temporary files of writes in progress (remove_temporary_files():
/// the target of an interrupted write is untouched), writes one line to stderr,
/// "<program>: interrupted by SIGINT; no result written", and ends the process with
/// _exit(exit_code_for_signal(N)).
void install_stop_signal_handlers(const std::string& program);

/// Makes every INT, UINT and FLOAT option of `app` (positionals included) strict: decimal
/// integers within 64 bits (CLI11 alone would clamp 99999999999999999999 to INT64_MAX, read
/// "010" as octal and "-1" as 2^64 - 1), unsigned ones without a sign, finite decimal numbers
/// (no nan, inf, 1e400 or hex), never an empty value. The error names the option and quotes the
/// value: "--windows: must be an integer, got '1e3'".
void strict_numbers(CLI::App& app);

/// Where --host-decode-share auto starts: every file on the threads, whose decoding takes nothing
/// from the training GPU (0.99 of the synthetic rate at share 1 on an H100 with 16 host cores);
/// the loader moves it down only when training runs dry (ImageFolderBatchOptions::
/// adaptive_host_share).
constexpr double kAutoHostShareStart = 1.0;

/// A number option that also takes a word ("auto"), kept as text: nullopt for the word, else the
/// value read as strict_numbers() reads a FLOAT option (finite, decimal); ConfigError naming
/// `field` (a field or a flag's name: "host-decode-share") and quoting the text otherwise.
[[nodiscard]] std::optional<double> parse_number_or_word(const std::string& text,
                                                         const std::string& word,
                                                         const std::string& field);

/// A CLI11 check of a numeric option's range, for limits the run cannot check itself because
/// the value would overflow on the way there: "--watch: must be > 0 and <= 86400 (a day), got
/// '1e10'", quoting the value as typed. A value that is not a number passes to strict_numbers().
///
///   app.add_option("--watch", seconds)->check(number_rule([](double v) { return v > 0 &&
///       v <= 86400; }, "> 0 and <= 86400 (a day)"));
[[nodiscard]] CLI::Validator number_rule(const std::function<bool(double)>& ok,
                                         const std::string& rule);

/// The --version text: "<program> (gpuperf <version>)" and, on a second line, `software` (the
/// LibTorch, CUDA, cuDNN and driver versions), or for a tool without LibTorch, the NVIDIA driver
/// where there is one. run_program() adds it unless the program set its own --version flag.
[[nodiscard]] std::string version_text(const std::string& program, const std::string& software);

/// argv as one shell-quoted command line (recorded in results as the command that reproduces
/// them).
[[nodiscard]] std::string join_command_line(int argc, const char* const* argv);

/// Adds the switch --<name> / --no-<name> bound to `value`, its help ending in the real default
/// ("(default: on)"), which CLI11's own notation for such a pair ("{false}": what --no-<name>
/// sets) does not show.
CLI::Option* add_switch(CLI::App& app, const std::string& name, bool& value,
                        const std::string& help);

/// Names joined by "|", for help texts ("fp32|tf32|fp16|bf16").
[[nodiscard]] std::string join_names(const std::vector<std::string>& names);

/// A program's result files by option (--json, --csv, --benchmark-json, --markdown): each a file
/// path, "-" for standard output, or "" for none. The human-readable text goes to stdout, or to
/// stderr when a result does, so that `--json -` pipes clean JSON.
///
///   ResultOutputs outputs;
///   outputs.add("json", o.json_path, "Result");
///   outputs.check();                                  // before the run: ConfigError
///   write_text(outputs.console(), result);
///   outputs.write("json", to_json(result));           // atomic; says where on console()
class ResultOutputs {
 public:
  /// Registers `path` ("" for none) for `option` (without dashes); `what` names it in the line
  /// that says where it was written ("Result written to run.json").
  void add(const std::string& option, const std::string& path, const std::string& what);
  /// Refuses, before a run, an unwritable path or a directory, two options on one file (by any
  /// spelling), two on standard output, and a path that is one of `inputs`. ConfigError naming
  /// the option and the path.
  void check(const std::vector<std::string>& inputs = {}) const;
  /// Whether `option` has a path.
  [[nodiscard]] bool wanted(const std::string& option) const;
  /// Where the human-readable text goes: stderr when a result goes to standard output.
  [[nodiscard]] std::ostream& console() const;
  /// Writes `text` to `option`'s path (atomically; nothing when it has none) and, for a file,
  /// says so on console(). A failed write comes after the run: it removes the files this object
  /// wrote before (no partial set of results) and throws gpuperf::Error (exit 1, not 2: the run
  /// did run) naming the option, the file and the cause.
  void write(const std::string& option, const std::string& text) const;

 private:
  struct Output {
    std::string option, path, what;
  };
  [[nodiscard]] const Output* find(const std::string& option) const;
  std::vector<Output> outputs_;
  mutable std::vector<std::string> written_;  // files of this run, removed if a later one fails
};

/// The result files every benchmark can write.
struct ResultPaths {
  std::string json;            ///< --json: the gpuperf record
  std::string csv;             ///< --csv: one row per measurement
  std::string benchmark_json;  ///< --benchmark-json: Google Benchmark's JSON
};

/// Adds --json (described by `json_help`), --csv and --benchmark-json to `app`.
void add_result_options(CLI::App& app, ResultPaths& paths, const std::string& json_help);

/// ResultOutputs of `paths`, each named for the line that says where it was written.
[[nodiscard]] ResultOutputs result_outputs(const ResultPaths& paths);

/// Writes `result` to each output of result_outputs() that has a path: to_json, write_csv and
/// write_gbench_json.
template <typename Result>
void write_results(const ResultOutputs& outputs, const Result& result) {
  outputs.write("json", to_json(result));
  if (outputs.wanted("csv")) {
    std::ostringstream csv;
    write_csv(csv, result);
    outputs.write("csv", csv.str());
  }
  if (outputs.wanted("benchmark-json")) {
    std::ostringstream gbench;
    write_gbench_json(gbench, result);
    outputs.write("benchmark-json", gbench.str());
  }
}

}  // namespace gpuperf::program
