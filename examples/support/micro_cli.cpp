#include "micro_cli.h"

#include "parse_command_line.h"

#include <string>

#include "training_cli.h"
#include "gpuperf/base/error.h"
#include "gpuperf/results/interconnect_result.h"
#include "gpuperf/results/micro_result.h"

namespace gpuperf {
namespace {

using detail::require;

void check_ranges(const MicrobenchArgs& a, bool size_given, bool shape_given) {
  if (size_given) require(a.gemm_size > 0, "gemm-size", a.gemm_size, "> 0");
  require(a.memory_size_mib >= 0, "memory-size-mib", a.memory_size_mib, ">= 1 (0: the default)");
  require(a.host_size_mib > 0, "host-size-mib", a.host_size_mib, "> 0");
  require(a.warmup >= 0, "warmup", a.warmup, ">= 0");
  require(a.calls_per_window >= 1, "calls-per-window", a.calls_per_window, ">= 1");
  require(a.windows >= 1, "windows", a.windows, ">= 1");
  if (size_given && shape_given) {
    throw ConfigError("--gemm-shape: give either --gemm-size or --gemm-shape, got both ('" +
                      a.gemm_shape + "' and " + std::to_string(a.gemm_size) + ")");
  }
  if (shape_given) (void)parse_gemm_shape(a.gemm_shape, "gemm-shape");
  if (!a.dtypes.empty()) (void)parse_gemm_dtypes(a.dtypes, "dtypes");
  require(a.p2p_size_mib > 0, "p2p-size-mib", a.p2p_size_mib, "> 0");
  require(a.ranks == 0 || a.ranks >= 2, "ranks", a.ranks, ">= 2 (0: the default)");
  if (!a.collectives.empty()) (void)parse_collectives(a.collectives, "collectives");
  if (!a.collective_sizes.empty()) (void)parse_byte_sizes(a.collective_sizes, "collective-sizes");
  if (!a.gemm && !a.memory && !a.interconnect) {
    throw ConfigError(
        "--no-gemm: nothing left to run with --no-memory as well (add --interconnect)");
  }
}

}  // namespace

ParsedMicrobenchArgs parse_microbench_args(int argc, const char* const* argv, std::ostream& out,
                                           std::ostream& err) {
  ParsedMicrobenchArgs parsed;
  MicrobenchArgs& a = parsed.args;
  a.command_line = join_command_line(argc, argv);

  CLI::App app("GEMM throughput per data type and memory bandwidth, against the datasheet",
               "microbench");
  app.option_defaults()->always_capture_default();
  app.add_option("--device", a.device, "auto, cpu, cuda or cuda:N (auto: a GPU if there is one)");
  auto* size = app.add_option("--gemm-size", a.gemm_size,
                              "square GEMM edge N (default 8192 on a GPU, 1024 on the CPU)");
  auto* shape =
      app.add_option("--gemm-shape", a.gemm_shape, "MxNxK instead of a square --gemm-size");
  app.add_option(
      "--dtypes", a.dtypes,
      "comma-separated: fp64,fp32,tf32,fp16,bf16,int8,fp8 (default: all the device runs)");
  app.add_option("--memory-size-mib", a.memory_size_mib,
                 "buffer for the device copy/read/write (default 1024 on a GPU, 256 on the CPU)");
  app.add_option("--host-size-mib", a.host_size_mib, "buffer for host<->device transfers");
  app.add_flag("--gemm,!--no-gemm", a.gemm, "run the GEMM benchmarks");
  app.add_flag("--memory,!--no-memory", a.memory, "run the memory benchmarks");
  app.add_flag("--interconnect,!--no-interconnect", a.interconnect,
               "P2P copies between GPUs and collectives (NCCL; on the CPU: Gloo over loopback)");
  auto* collectives = app.add_option("--collectives", a.collectives,
                                     "comma-separated: all-reduce,all-gather,reduce-scatter "
                                     "(default all; implies --interconnect)");
  auto* sizes = app.add_option("--collective-sizes", a.collective_sizes,
                               "sizes S (nccl-tests' size) or sweeps A..B[:F]: default 1M..1G on "
                               "GPUs, 64K..4M on the CPU (implies --interconnect)");
  auto* p2p_size = app.add_option("--p2p-size-mib", a.p2p_size_mib,
                                  "buffer of the P2P bandwidth copies (implies --interconnect)");
  auto* ranks = app.add_option("--ranks", a.ranks,
                               "collective ranks: GPUs 0..N-1, or threads on the CPU (default: "
                               "every GPU, 2 on the CPU; implies --interconnect)");
  app.add_option("--warmup", a.warmup, "untimed calls before each measurement");
  app.add_option("--calls-per-window", a.calls_per_window, "calls per timed window");
  app.add_option("--windows", a.windows, "timed windows per measurement");
  app.add_option("--seed", a.seed, "random seed for the operands");
  app.add_option("--specs", a.specs_path, "datasheet file (default: the shipped gpu_specs.json)");
  app.add_option("--json", a.json_path, "write the results here ('' for none)");
  app.add_option("--markdown", a.markdown_path, "write the Markdown tables here too");
  app.add_flag("--quiet,-q", a.quiet, "no progress lines");

  parsed.exit_code = detail::parse_command_line(
      app, argc, argv,
      [&] {
        if (collectives->count() + sizes->count() + p2p_size->count() + ranks->count() > 0)
          a.interconnect = true;
        check_ranges(a, size->count() > 0, shape->count() > 0);
      },
      out, err);
  return parsed;
}

}  // namespace gpuperf
