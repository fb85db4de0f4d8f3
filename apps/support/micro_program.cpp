#include "micro_program.h"

#include <iostream>
#include <sstream>
#include <string>

#include "gpuperf/base/files.h"
#include "gpuperf/micro/micro_run.h"
#include "gpuperf/report/micro_markdown.h"
#include "gpuperf/results/micro_parse.h"
#include "gpuperf/specs/specs.h"
#include "memory_errors.h"
#include "program.h"
#include "torch_version.h"

namespace gpuperf::program {
namespace {

// Sizes beyond any device or host, and before their products overflow 64 bits: a GEMM edge of
// 2^20 makes 2^40-element operands (8 TiB in fp64), a buffer of 2^20 MiB is 1 TiB.
constexpr std::int64_t kMaxGemmEdge = 1 << 20;
constexpr std::int64_t kMaxBufferMib = 1 << 20;
// Collective ranks on the CPU are threads, on GPUs one per device.
constexpr int kMaxRanks = 64;

CLI::Validator at_most(std::int64_t limit, const std::string& low_rule, double low) {
  return number_rule([=](double v) { return v >= low && v <= static_cast<double>(limit); },
                     low_rule + " and <= " + std::to_string(limit));
}

// The options as typed: lists and shapes stay text until parsed, once, into the run.
struct MicroOptionsText {
  MicroRun run;
  std::int64_t gemm_size = 0;
  std::string gemm_shape;
  std::string dtypes;
  std::string collectives;
  std::string collective_sizes;
  ResultPaths results{"microbench.json", "", ""};
  std::string markdown_path;
};

void add_options(CLI::App& app, MicroOptionsText& o) {
  MicroRun& r = o.run;
  app.add_option("--device", r.device, "auto, cpu, cuda or cuda:N (auto: a GPU if there is one)");
  app.add_option("--gemm-size", o.gemm_size,
                 "square GEMM edge N (default 8192 on a GPU, 1024 on the CPU)")
      ->check(at_most(kMaxGemmEdge, "> 0", 1));
  app.add_option("--gemm-shape", o.gemm_shape, "MxNxK instead of a square --gemm-size");
  app.add_option(
      "--dtypes", o.dtypes,
      "comma-separated: fp64,fp32,tf32,fp16,bf16,int8,fp8 (default: all the device runs)");
  app.add_option("--memory-size-mib", r.memory_size_mib,
                 "buffer for the device copy/read/write (default 1024 on a GPU, 256 on the CPU)")
      ->check(at_most(kMaxBufferMib, ">= 1 (0: the default)", 0));
  app.add_option("--host-size-mib", r.host_size_mib, "buffer for host<->device transfers")
      ->check(at_most(kMaxBufferMib, "> 0", 1));
  add_switch(app, "gemm", r.gemm, "run the GEMM benchmarks");
  add_switch(app, "memory", r.memory, "run the memory benchmarks");
  add_switch(app, "interconnect", r.interconnect,
             "P2P copies between GPUs and collectives (NCCL; on the CPU: Gloo over loopback)");
  app.add_option("--collectives", o.collectives,
                 "comma-separated: all-reduce,all-gather,reduce-scatter "
                 "(default all; implies --interconnect)");
  app.add_option("--collective-sizes", o.collective_sizes,
                 "sizes S (nccl-tests' size) or sweeps A..B[:F]: default 1M..1G on "
                 "GPUs, 64K..4M on the CPU (implies --interconnect)");
  app.add_option("--p2p-size-mib", r.p2p_size_mib,
                 "buffer of the P2P bandwidth copies (implies --interconnect)")
      ->check(at_most(kMaxBufferMib, "> 0", 1));
  app.add_option("--ranks", r.ranks,
                 "collective ranks: GPUs 0..N-1, or threads on the CPU (default: "
                 "every GPU, 2 on the CPU; implies --interconnect)")
      ->check(number_rule([](double v) { return v == 0 || (v >= 2 && v <= kMaxRanks); },
                          ">= 2 and <= " + std::to_string(kMaxRanks) + " (0: the default)"));
  app.add_option("--warmup", r.timing.warmup, "untimed calls before each measurement");
  app.add_option("--calls-per-window", r.timing.calls_per_window, "calls per timed window");
  app.add_option("--windows", r.timing.windows, "timed windows per measurement");
  app.add_option("--seed", r.seed, "random seed for the operands");
  app.add_option("--specs", r.specs_path, "datasheet file (default: the shipped gpu_specs.json)");
  add_result_options(app, o.results, "write the results here ('' for none)");
  app.add_option("--markdown", o.markdown_path,
                 "write the Markdown tables here too ('-': standard output)");
  app.add_flag("--quiet,-q", r.quiet, "no progress lines");
}

// The text options, parsed once into the run's typed fields.
MicroRun typed_run(const CLI::App& app, const MicroOptionsText& o) {
  MicroRun run = o.run;
  const bool size_given = app.get_option("--gemm-size")->count() > 0;
  const bool shape_given = app.get_option("--gemm-shape")->count() > 0;
  if (size_given && shape_given) {
    throw ConfigError("--gemm-shape: give either --gemm-size or --gemm-shape, got both ('" +
                      o.gemm_shape + "' and " + std::to_string(o.gemm_size) + ")");
  }
  if (size_given) {
    require_setting(o.gemm_size > 0, "gemm-size", o.gemm_size, "> 0");
    run.gemm_shape = GemmShape{o.gemm_size, o.gemm_size, o.gemm_size};
  }
  if (shape_given) {
    run.gemm_shape = parse_gemm_shape(o.gemm_shape, "gemm-shape");
    const GemmShape& s = *run.gemm_shape;
    if (s.m > kMaxGemmEdge || s.n > kMaxGemmEdge || s.k > kMaxGemmEdge) {
      throw ConfigError("--gemm-shape: each of M, N, K must be <= " + std::to_string(kMaxGemmEdge) +
                        ", got '" + o.gemm_shape + "'");
    }
  }
  // Given but empty is an error, not the default: "--dtypes ''" is a mistake, not a choice.
  for (const char* option : {"--dtypes", "--collectives", "--collective-sizes"}) {
    const CLI::Option* given = app.get_option(option);
    if (given->count() > 0 && given->as<std::string>().empty()) {
      throw ConfigError(std::string(option) +
                        ": empty value ''; leave the option out for the "
                        "default");
    }
  }
  if (!o.dtypes.empty()) run.dtypes = parse_gemm_dtypes(o.dtypes, "dtypes");
  if (!o.collectives.empty()) run.collectives = parse_collectives(o.collectives, "collectives");
  if (!o.collective_sizes.empty()) {
    run.collective_sizes = parse_byte_sizes(o.collective_sizes, "collective-sizes");
  }
  for (const char* option : {"--collectives", "--collective-sizes", "--p2p-size-mib", "--ranks"}) {
    if (app.get_option(option)->count() > 0) run.interconnect = true;
  }
  return run;
}

// The size options as given, for the line that says what did not fit in memory.
std::string sizes_setting(const CLI::App& app) {
  std::string given;
  for (const char* option : {"--gemm-size", "--gemm-shape", "--memory-size-mib", "--host-size-mib",
                             "--p2p-size-mib", "--collective-sizes"}) {
    const CLI::Option* opt = app.get_option(option);
    if (opt->count() > 0) {
      given += (given.empty() ? "" : " ") + std::string(option) + " " + opt->as<std::string>();
    }
  }
  return given.empty() ? "the default sizes" : given;
}

// The library reports a GEMM whose operands the host cannot allocate as "unsupported", like an
// op the build lacks; that is a failure of the settings (exit 1, no result), not a property of
// the device.
void refuse_allocation_failures(const MicroReport& report, const std::string& setting) {
  for (const MicroResult& r : report.results) {
    if (r.status.find("can't allocate memory") == std::string::npos) continue;
    const std::size_t start = r.status.find("DefaultCPUAllocator");
    throw Error("out of host memory with " + setting + " (" + r.name + " " + r.shape + "): " +
                r.status.substr(start == std::string::npos ? 0 : start) + ". Try a smaller value.");
  }
}

// The result files: the common ones and the Markdown tables.
ResultOutputs micro_outputs(const MicroOptionsText& o) {
  ResultOutputs outputs = result_outputs(o.results);
  outputs.add("markdown", o.markdown_path, "Markdown");
  return outputs;
}

// Bad output paths and a bad datasheet file are refused before the run, not after it; an output
// that is the datasheet file would overwrite it.
void check_files(const MicroOptionsText& o, const ResultOutputs& outputs) {
  outputs.check({o.run.specs_path});
  if (!o.run.specs_path.empty()) {
    try {
      (void)SpecDatabase::load_file(o.run.specs_path);
    } catch (const Error& e) {
      throw ConfigError(std::string("--specs: ") + e.what());
    }
  }
}

}  // namespace

int run_micro_program(int argc, const char* const* argv) {
  MicroOptionsText o;
  o.run.command_line = join_command_line(argc, argv);
  CLI::App app("GEMM throughput per data type and memory bandwidth, against the datasheet",
               "microbench");
  app.option_defaults()->always_capture_default();
  add_options(app, o);
  add_torch_version_flag(app);
  return run_program(app, argc, argv, [&] {
    const MicroRun run = typed_run(app, o);
    const ResultOutputs outputs = micro_outputs(o);
    check_files(o, outputs);  // run_micro() validates the rest before anything runs
    const std::string sizes = sizes_setting(app);
    MicroReport report;
    (void)with_memory_errors(sizes, [&] {
      report = run_micro(run);
      return kExitOk;
    });
    refuse_allocation_failures(report, sizes);
    std::ostringstream markdown;
    MicroReport shown = report;  // the tables in the program's words, the JSON in the library's
    for (auto& warning : shown.warnings) warning = in_flags(app, warning);
    write_markdown(markdown, shown);
    // The tables are the console text; with --markdown - they are that output instead.
    if (!is_stdout_path(o.markdown_path)) outputs.console() << markdown.str() << "\n";
    outputs.write("markdown", markdown.str());
    write_results(outputs, report);
    return kExitOk;
  });
}

}  // namespace gpuperf::program
