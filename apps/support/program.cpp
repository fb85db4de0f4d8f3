#include "program.h"

#include <signal.h>  // NOLINT(modernize-deprecated-headers): sigaction is POSIX, not <csignal>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <limits>
#include <regex>
#include <string>
#include <system_error>
#include <utility>

#include "gpuperf/base/files.h"
#include "gpuperf/base/fingerprint.h"
#include "gpuperf/base/version.h"

namespace gpuperf::program {
namespace {

std::string escape_text(const std::string& text);

// One line: LibTorch's errors carry a backtrace after the first line, and a quoted value must
// not bring a terminal escape along.
int fail(std::ostream& err, const CLI::App& app, const char* what, int code) {
  const std::string message = what;
  err << app.get_name() << ": error: " << escape_text(message.substr(0, message.find('\n')))
      << "\n";
  return code;
}

// ---- Library fields as flags ------------------------------------------------------------------

// The library names the field a bad setting came from ("TrainingRun::learning_rate"); a program
// names the flag that set it. Most flags are their field's name with dashes ("batch_size" ->
// --batch-size); these are the exceptions, by "Owner::field" or by field.
constexpr std::pair<const char*, const char*> kFlagOfField[] = {
    {"learning_rate", "lr"},
    {"adam_beta1", "beta1"},
    {"adam_beta2", "beta2"},
    {"sequence_length", "seq-len"},
    {"kernel_fusion", "fuse"},
    {"cuda_graph", "graph"},
    {"fused_optimizer", "fused"},
    {"target_relative_ci", "target-ci"},
    {"cudnn_benchmark_from_batch", "cudnn-benchmark-from"},
    {"adaptive_host_decode_share", "host-decode-share"},
    {"price_per_hour_usd", "price-per-hour"},
    {"AdvisorRequest::price_per_hour_by_gpu", "price"},
    {"AdvisorRequest::budget_usd", "budget"},
    {"AdvisorRequest::gpu_count", "gpus"},
    {"AdvisorRequest::assumed_utilization", "utilization"},
    {"ProcessGroupOptions::timeout_seconds", "dist-timeout"},
    {"ProcessGroupOptions::backend", "dist-backend"},
    {"ServingOptions::rate", "serve-rates"},
    {"ServingOptions::max_batch", "serve-max-batch"},
    {"ServingOptions::requests", "serve-requests"},
};

// "--<flag>" of `field` when `app` has that flag; the field's own name otherwise (a setting no
// flag of this program sets, reached through the library's defaults).
std::string flag_of(const CLI::App& app, const std::string& field) {
  const auto exception = [](const std::string& name) -> const char* {
    for (const auto& [key, spelled] : kFlagOfField) {
      if (name == key) return spelled;
    }
    return nullptr;
  };
  const std::string bare = ConfigError::bare(field);
  const char* spelled = exception(field) != nullptr ? exception(field) : exception(bare);
  std::string flag = spelled != nullptr ? spelled : bare;
  if (spelled == nullptr) std::replace(flag.begin(), flag.end(), '_', '-');
  return app.get_option_no_throw("--" + flag) != nullptr ? "--" + flag : bare;
}

// A library ConfigError as this program's user reads it: fields spelled as flags.
std::string usage_message(const CLI::App& app, const ConfigError& e) {
  if (e.field().empty()) return in_flags(app, e.what());
  return ConfigError::render(e.field(), e.value(), e.problem(),
                             [&](const std::string& name) { return flag_of(app, name); });
}

// ---- Signals ----------------------------------------------------------------------------------

// What the handler reads: plain storage written once before the handlers are installed.
char g_program_name[256] = "gpuperf";
std::atomic_flag g_stopping = ATOMIC_FLAG_INIT;
constexpr int kStopSignals[] = {SIGINT, SIGTERM, SIGHUP};

// Appends to a fixed buffer without allocating (async-signal-safe).
struct SignalLine {
  char text[512];
  std::size_t used = 0;
  void add(const char* s) {
    while (*s != '\0' && used + 1 < sizeof text) text[used++] = *s++;
  }
  void add(int n) {
    char digits[16];
    int count = 0;
    do {
      digits[count++] = static_cast<char>('0' + n % 10);
      n /= 10;
    } while (n > 0 && count < 15);
    while (count > 0 && used + 1 < sizeof text) text[used++] = digits[--count];
  }
};

const char* signal_name(int signal_number) {
  switch (signal_number) {
    case SIGINT:
      return "SIGINT";
    case SIGTERM:
      return "SIGTERM";
    case SIGHUP:
      return "SIGHUP";
    default:
      return "a signal";
  }
}

extern "C" void on_stop_signal(int signal_number) {
  // A second signal, or the same one on another thread, waits for the first to end the process.
  if (g_stopping.test_and_set()) {
    for (;;) ::pause();
  }
  remove_temporary_files();
  SignalLine line;
  line.add(g_program_name);
  line.add(": interrupted by ");
  line.add(signal_name(signal_number));
  const int written = committed_temporary_files();
  if (written == 0) {
    line.add("; no result written");
  } else {
    line.add("; ");
    line.add(written);
    line.add(written == 1 ? " result file was written before it"
                          : " result files were written before it");
  }
  line.add("\n");
  for (std::size_t done = 0; done < line.used;) {
    const ssize_t n = ::write(STDERR_FILENO, line.text + done, line.used - done);
    if (n <= 0 && errno != EINTR) break;
    if (n > 0) done += static_cast<std::size_t>(n);
  }
  ::_exit(exit_code_for_signal(signal_number));
}

// ---- Arguments --------------------------------------------------------------------------------

// The length of the valid UTF-8 sequence at `s[i]`, or 0 (overlong forms, surrogates and code
// points above U+10FFFF are invalid).
std::size_t utf8_length(const std::string& s, std::size_t i) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char b = byte(i);
  std::size_t n = 0;
  std::uint32_t code = 0;
  if (b < 0x80) return 1;
  if (b >= 0xC2 && b <= 0xDF) {
    n = 2;
    code = b & 0x1F;
  } else if (b >= 0xE0 && b <= 0xEF) {
    n = 3;
    code = b & 0x0F;
  } else if (b >= 0xF0 && b <= 0xF4) {
    n = 4;
    code = b & 0x07;
  } else {
    return 0;
  }
  if (i + n > s.size()) return 0;
  for (std::size_t k = 1; k < n; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
    code = code << 6 | (byte(i + k) & 0x3F);
  }
  const bool overlong = (n == 3 && code < 0x800) || (n == 4 && code < 0x10000);
  const bool surrogate = code >= 0xD800 && code <= 0xDFFF;
  return overlong || surrogate || code > 0x10FFFF ? 0 : n;
}

// C0 controls, DEL and the C1 controls (U+0080..U+009F, which some terminals obey).
bool is_control(const std::string& s, std::size_t i, std::size_t length) {
  const auto b = static_cast<unsigned char>(s[i]);
  if (length == 1) return b < 0x20 || b == 0x7F;
  return length == 2 && b == 0xC2 && static_cast<unsigned char>(s[i + 1]) < 0xA0;
}

// `text` with every byte that is a control character (C0, DEL, C1) or not part of valid UTF-8
// written as \xNN: gpuperf::printable() for text that may not even be UTF-8, so that a hostile
// argument can be quoted on one line of a terminal.
std::string escape_text(const std::string& text) {
  static const char* const kHex = "0123456789abcdef";
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    std::size_t n = utf8_length(text, i);
    if (n != 0 && !is_control(text, i, n)) {
      out.append(text, i, n);
      i += n;
      continue;
    }
    for (std::size_t k = 0; k < std::max<std::size_t>(n, 1); ++k) {
      const auto b = static_cast<unsigned char>(text[i + k]);
      out += "\\x";
      out += kHex[b >> 4];
      out += kHex[b & 0xF];
    }
    i += std::max<std::size_t>(n, 1);
  }
  return out;
}

// What is wrong with one argument, or "".
std::string argument_problem(const std::string& arg) {
  for (std::size_t i = 0; i < arg.size();) {
    const std::size_t n = utf8_length(arg, i);
    if (n == 0) return "is not valid UTF-8";
    if (is_control(arg, i, n)) return "contains a control character";
    i += n;
  }
  return "";
}

// The option an argument belongs to, as the error names it: "--json" for "--json=x" or for the
// value after "--json", the argument itself for an option name, else its position.
std::string argument_owner(CLI::App& app, int argc, const char* const* argv, int i) {
  const std::string arg = argv[i];
  if (arg.rfind("--", 0) == 0 && arg.find('=') != std::string::npos) {
    return arg.substr(0, arg.find('='));
  }
  if (i > 1 && i < argc) {
    std::string previous = argv[i - 1];
    if (previous.size() > 1 && previous[0] == '-' && previous.find('=') == std::string::npos) {
      const CLI::Option* option = app.get_option_no_throw(previous);
      if (option != nullptr && option->get_type_size_max() > 0) return previous;
    }
  }
  if (arg.size() > 1 && arg[0] == '-') return "";  // the option name itself
  return "argument " + std::to_string(i);
}

// Refuses the first argument that is not valid UTF-8 or holds a control character: every
// argument may end up in a result (the command line is recorded, JSON is UTF-8) or on a line of
// the console.
void check_arguments(CLI::App& app, int argc, const char* const* argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const std::string problem = argument_problem(arg);
    if (problem.empty()) continue;
    const std::string owner = argument_owner(app, argc, argv, i);
    const std::size_t eq = arg.find('=');
    const std::string value =
        arg.rfind("--", 0) == 0 && eq != std::string::npos ? arg.substr(eq + 1) : arg;
    throw ConfigError((owner.empty() ? "" : escape_text(owner) + ": ") + "'" + escape_text(value) +
                      "' " + problem + " (arguments must be printable UTF-8 text)");
  }
}

// ---- Numbers ----------------------------------------------------------------------------------

enum class NumberKind { kSigned, kUnsigned, kFloat };

// "nan", "-inf", "Infinity": what strtod would take for a number that is not finite.
bool non_finite_word(std::string s) {
  if (!s.empty() && (s[0] == '+' || s[0] == '-')) s.erase(0, 1);
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s == "nan" || s == "inf" || s == "infinity";
}

bool all_digits(const std::string& s) {
  return !s.empty() && s.find_first_not_of("0123456789") == std::string::npos;
}

// Checks one value and rewrites it in the form CLI11 converts exactly (decimal, no '+', no
// leading zeros that strtoll would read as octal). Returns the error, or "".
std::string strict_number(NumberKind kind, std::string& value) {
  const std::string quoted = "'" + escape_text(value) + "'";
  if (kind == NumberKind::kFloat) {
    const bool decimal_syntax = !value.empty() &&
                                value.find_first_not_of("0123456789+-.eE") == std::string::npos &&
                                value.find_first_of("0123456789") != std::string::npos;
    errno = 0;
    char* end = nullptr;
    const double parsed = decimal_syntax ? std::strtod(value.c_str(), &end) : 0;
    if (!decimal_syntax || end != value.c_str() + value.size()) {
      return (non_finite_word(value) ? "must be a finite number, got " : "must be a number, got ") +
             quoted;
    }
    if (!std::isfinite(parsed)) return "must be a finite number, got " + quoted;
    return "";
  }
  std::string digits = value;
  bool negative = false;
  if (!digits.empty() && (digits[0] == '+' || digits[0] == '-')) {
    negative = digits[0] == '-';
    digits.erase(0, 1);
  }
  if (!all_digits(digits)) return "must be an integer, got " + quoted;
  if (negative && kind == NumberKind::kUnsigned) {
    return "must be an integer >= 0, got " + quoted;
  }
  digits.erase(0, std::min(digits.find_first_not_of('0'), digits.size() - 1));
  const std::string canonical = (negative ? "-" : "") + digits;
  errno = 0;
  if (kind == NumberKind::kSigned) {
    (void)std::strtoll(canonical.c_str(), nullptr, 10);
    if (errno == ERANGE) {
      return "must be an integer from " + std::to_string(std::numeric_limits<std::int64_t>::min()) +
             " to " + std::to_string(std::numeric_limits<std::int64_t>::max()) + ", got " + quoted;
    }
  } else {
    (void)std::strtoull(canonical.c_str(), nullptr, 10);
    if (errno == ERANGE) {
      return "must be an integer from 0 to " +
             std::to_string(std::numeric_limits<std::uint64_t>::max()) + ", got " + quoted;
    }
  }
  value = canonical;
  return "";
}

}  // namespace

// A library message as this program's user reads it: every "Owner::field" this program has a
// flag for spelled as the flag ("Try a smaller TrainingRun::batch_size" -> "--batch-size").
std::string in_flags(const CLI::App& app, const std::string& text) {
  static const std::regex field(R"(\b[A-Z][A-Za-z0-9]*::[a-z_][a-z0-9_]*\b)");
  std::string out;
  auto last = text.cbegin();
  for (std::sregex_iterator it(text.begin(), text.end(), field), end; it != end; ++it) {
    const std::string flag = flag_of(app, it->str());
    out.append(last, text.cbegin() + it->position());
    out += flag.rfind("--", 0) == 0 ? flag : it->str();
    last = text.cbegin() + it->position() + it->length();
  }
  out.append(last, text.cend());
  return out;
}

void install_stop_signal_handlers(const std::string& program) {
  static bool installed = false;
  if (installed) return;
  installed = true;
  std::strncpy(g_program_name, program.c_str(), sizeof g_program_name - 1);
  struct sigaction action {};
  action.sa_handler = on_stop_signal;
  sigemptyset(&action.sa_mask);
  for (const int s : kStopSignals) sigaddset(&action.sa_mask, s);
  for (const int s : kStopSignals) {
    struct sigaction previous {};
    if (::sigaction(s, nullptr, &previous) == 0 && previous.sa_handler == SIG_IGN) continue;
    ::sigaction(s, &action, nullptr);
  }
}

std::optional<double> parse_number_or_word(const std::string& text, const std::string& word,
                                           const std::string& field) {
  if (text == word) return std::nullopt;
  std::string value = text;
  if (!strict_number(NumberKind::kFloat, value).empty()) {
    throw ConfigError(field,
                      "must be a finite number or '" + word + "', got '" + escape_text(text) + "'");
  }
  return std::strtod(value.c_str(), nullptr);
}

void strict_numbers(CLI::App& app) {
  for (CLI::Option* option : app.get_options()) {
    const std::string type = option->get_type_name();
    NumberKind kind{};
    if (type == "INT") {
      kind = NumberKind::kSigned;
    } else if (type == "UINT") {
      kind = NumberKind::kUnsigned;
    } else if (type == "FLOAT") {
      kind = NumberKind::kFloat;
    } else {
      continue;
    }
    option->transform(
        CLI::Validator([kind](std::string& value) { return strict_number(kind, value); }, ""));
  }
}

CLI::Validator number_rule(const std::function<bool(double)>& ok, const std::string& rule) {
  return CLI::Validator(
      [ok, rule](std::string& value) -> std::string {
        char* end = nullptr;
        const double parsed = std::strtod(value.c_str(), &end);
        if (value.empty() || end != value.c_str() + value.size()) return "";  // not a number
        if (ok(parsed)) return "";
        return "must be " + rule + ", got '" + escape_text(value) + "'";
      },
      "");
}

int setup_failed(const char* program, std::ostream& err) noexcept {
  try {
    throw;
  } catch (const std::exception& e) {
    const std::string message = e.what();
    err << program << ": error: " << escape_text(message.substr(0, message.find('\n'))) << "\n";
  } catch (...) {
    err << program << ": error: an unknown exception\n";
  }
  return kExitFailure;
}

int run_program(CLI::App& app, int argc, const char* const* argv, const std::function<int()>& body,
                std::ostream& out, std::ostream& err) {
  if (app.get_option_no_throw("--version") == nullptr) {
    const std::string driver = nvidia_driver_version();
    app.set_version_flag(
        "--version", version_text(app.get_name(),
                                  "no LibTorch" + (driver.empty() ? std::string()
                                                                  : ", NVIDIA driver " + driver)));
  }
  install_stop_signal_handlers(app.get_name());
  strict_numbers(app);
  try {
    check_arguments(app, argc, argv);
  } catch (const ConfigError& e) {
    return fail(err, app, usage_message(app, e).c_str(), kExitUsage);
  }
  // --help and --version succeed only if their text arrived: a full disk (/dev/full) or a closed
  // standard output is a failure, said on stderr, not exit 0 with nothing written.
  const auto answered = [&](const std::string& text) {
    out << text << std::flush;
    if (out) return kExitOk;
    return fail(err, app, "cannot write to standard output", kExitFailure);
  };
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    return answered(app.help());
  } catch (const CLI::CallForAllHelp&) {
    return answered(app.help("", CLI::AppFormatMode::All));
  } catch (const CLI::CallForVersion& e) {
    return answered(std::string(e.what()) + "\n");
  } catch (const CLI::ParseError& e) {
    return fail(err, app, e.what(), kExitUsage);
  }
  try {
    const int code = body();
    // What the program printed must have arrived (a table, gpu_info's report): a full disk or
    // a closed standard output turns a success into a failure that says so.
    std::cout.flush();
    if (code == kExitOk && !std::cout) {
      return fail(err, app, "cannot write to standard output", kExitFailure);
    }
    return code;
  } catch (const ConfigError& e) {
    return fail(err, app, usage_message(app, e).c_str(), kExitUsage);
  } catch (const IoError& e) {
    return fail(err, app, in_flags(app, e.what()).c_str(), kExitUsage);
  } catch (const OutOfMemoryError& e) {
    return fail(err, app, in_flags(app, e.what()).c_str(), kExitOutOfMemory);
  } catch (const std::exception& e) {
    return fail(err, app, in_flags(app, e.what()).c_str(), kExitFailure);
  }
}

std::string version_text(const std::string& program, const std::string& software) {
  return program + " (gpuperf " + std::string(kBuildVersion) + ")\n" + software;
}

std::string join_command_line(int argc, const char* const* argv) {
  auto quote = [](const std::string& word) {
    if (!word.empty() &&
        word.find_first_not_of(
            "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_./=:,+") ==
            std::string::npos) {
      return word;
    }
    std::string quoted = "'";
    for (char c : word) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return quoted + "'";
  };
  std::string line;
  for (int i = 0; i < argc; ++i) line += (i ? " " : "") + quote(argv[i]);
  return line;
}

CLI::Option* add_switch(CLI::App& app, const std::string& name, bool& value,
                        const std::string& help) {
  return app.add_flag("--" + name + ",!--no-" + name, value,
                      help + " (default: " + (value ? "on" : "off") + ")");
}

std::string join_names(const std::vector<std::string>& names) {
  std::string joined;
  for (const auto& n : names) joined += (joined.empty() ? "" : "|") + n;
  return joined;
}

void ResultOutputs::add(const std::string& option, const std::string& path,
                        const std::string& what) {
  outputs_.push_back({option, path, what});
}

void ResultOutputs::check(const std::vector<std::string>& inputs) const {
  const Output* on_stdout = nullptr;
  for (std::size_t i = 0; i < outputs_.size(); ++i) {
    const Output& o = outputs_[i];
    if (o.path.empty()) continue;
    if (is_stdout_path(o.path)) {
      if (on_stdout) {
        throw ConfigError("--" + o.option + ": '-' (standard output) is also --" +
                          on_stdout->option + "'s; only one result can go to standard output");
      }
      on_stdout = &o;
      continue;
    }
    for (std::size_t j = 0; j < i; ++j) {
      const Output& earlier = outputs_[j];
      if (earlier.path.empty() || is_stdout_path(earlier.path)) continue;
      // One identity for every spelling (x.csv, ./x.csv, /abs/x.csv, d/../x.csv, a link).
      if (o.path == earlier.path || file_identity(o.path) == file_identity(earlier.path)) {
        throw ConfigError("--" + o.option + ": '" + o.path + "' is also the --" + earlier.option +
                          " file; give each output its own file");
      }
    }
    check_not_an_input(o.path, inputs, "--" + o.option);
    check_writable(o.path, o.option);
  }
}

bool ResultOutputs::wanted(const std::string& option) const {
  const Output* o = find(option);
  return o && !o->path.empty();
}

std::ostream& ResultOutputs::console() const {
  for (const auto& o : outputs_) {
    if (is_stdout_path(o.path)) return std::cerr;
  }
  return std::cout;
}

void ResultOutputs::write(const std::string& option, const std::string& text) const {
  const Output* o = find(option);
  if (!o || o->path.empty()) return;
  try {
    write_text_file_atomically(text, o->path);
  } catch (const std::exception& e) {
    std::string removed;
    for (const std::string& path : written_) {
      if (std::remove(path.c_str()) == 0) removed += (removed.empty() ? "" : ", ") + path;
    }
    throw Error("--" + option + ": the run finished, but its " + o->what + " was not written (" +
                e.what() + ")" +
                (removed.empty() ? "" : "; removed what it had written: " + removed));
  }
  if (!is_stdout_path(o->path)) {
    written_.push_back(o->path);
    console() << o->what << " written to " << o->path << "\n";
  }
}

void add_result_options(CLI::App& app, ResultPaths& paths, const std::string& json_help) {
  app.add_option("--json", paths.json, json_help + " ('-': standard output)");
  app.add_option("--csv", paths.csv,
                 "write one CSV row per measurement here ('-': standard output; default: none)");
  app.add_option("--benchmark-json", paths.benchmark_json,
                 "write Google Benchmark's JSON here, for its compare.py ('-': standard output; "
                 "default: none)");
}

ResultOutputs result_outputs(const ResultPaths& paths) {
  ResultOutputs outputs;
  outputs.add("json", paths.json, "Result");
  outputs.add("csv", paths.csv, "CSV");
  outputs.add("benchmark-json", paths.benchmark_json, "Google Benchmark JSON");
  return outputs;
}

const ResultOutputs::Output* ResultOutputs::find(const std::string& option) const {
  for (const auto& o : outputs_) {
    if (o.option == option) return &o;
  }
  return nullptr;
}

}  // namespace gpuperf::program
