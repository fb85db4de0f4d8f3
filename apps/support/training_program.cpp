#include "training_program.h"

#include <torch/cuda.h>
#include <unistd.h>

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

#include "gpuperf/base/files.h"
#include "gpuperf/distributed/data_parallel_run.h"
#include "gpuperf/models/registry.h"
#include "gpuperf/report/console.h"
#include "gpuperf/telemetry/snapshot.h"
#include "local_launcher.h"
#include "kernel_trace_option.h"
#include "memory_errors.h"
#include "program.h"
#include "torch_version.h"

namespace gpuperf::program {
namespace {

// The variable through which --nproc-per-node hands its own command line to the ranks it starts.
constexpr const char* kLaunchCommandVariable = "GPUPERF_LAUNCH_COMMAND";

// The command that re-runs this job: the launcher's, where a launcher started this process, so
// that a rank's record does not read as a single-process run. --nproc-per-node passes its command
// line in GPUPERF_LAUNCH_COMMAND; torchrun's agent (TORCHELASTIC_RUN_ID set) is the parent
// process, whose command line /proc gives. Otherwise, or where that cannot be read, `own`.
std::string launcher_command_line(const std::string& own) {
  const char* launcher = std::getenv("GPUPERF_LAUNCHER");
  const char* handed = std::getenv(kLaunchCommandVariable);
  if (launcher != nullptr && std::string(launcher) == "gpuperf" && handed != nullptr &&
      *handed != '\0') {
    return handed;
  }
  if (std::getenv("TORCHELASTIC_RUN_ID") != nullptr) {
    std::ifstream in("/proc/" + std::to_string(::getppid()) + "/cmdline", std::ios::binary);
    const std::string raw((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::vector<std::string> args;
    std::string::size_type start = 0;
    while (start < raw.size()) {
      const auto end = raw.find('\0', start);
      args.push_back(raw.substr(start, end == std::string::npos ? std::string::npos : end - start));
      if (end == std::string::npos) break;
      start = end + 1;
    }
    if (!args.empty()) {
      std::vector<const char*> argv;
      argv.reserve(args.size());
      for (const auto& a : args) argv.push_back(a.c_str());
      return join_command_line(static_cast<int>(argv.size()), argv.data());
    }
  }
  return own;
}

// Limits of values the run would otherwise overflow on their way (seconds to a clock's integer
// ticks, MiB to bytes) or that would start a process per unit.
constexpr double kDay = 86400;
constexpr int kMaxLocalRanks = 64;

// The options as typed: enums and switches stay text until parsed, once, into the run.
struct TrainingOptions {
  TrainingRun run;
  std::string batch_size;  // a count, or "max"
  std::string precision = "auto";
  std::string memory_format;
  std::string optimizer;
  std::string fused = "auto";
  std::string fuse = "auto";
  std::string graph = "auto";
  std::string decode = "auto";
  std::string host_decode_share = "0";  // a share, or "auto"
  ResultPaths results;
  bool list_models = false;
  // Data-parallel runs.
  int nproc_per_node = 0;
  std::string dist_backend = "auto";
  DataParallelRun data_parallel;
  double bucket_mib = 25;
};

// --help lists the options of one kind of model under its own heading (every program takes every
// registered model: lm_benchmark --model resnet50 reads --data).
void add_model_options(CLI::App& app, TrainingOptions& o) {
  TrainingRun& r = o.run;
  app.add_option("--device", r.device, "auto, cpu, cuda or cuda:N (auto: a GPU if there is one)");
  app.add_option("--model", r.model, "registered model name (see --list-models)");
  app.add_flag("--list-models", o.list_models, "print the registered models and exit");
  app.add_option("--batch-size,-b", o.batch_size,
                 "samples per step, or 'max': the largest batch that trains on the device, found "
                 "by doubling from the default and bisecting with real steps (each try in the "
                 "log), then measured");
  app.add_option("--accumulation-steps", r.accumulation_steps,
                 "gradient accumulation: each step's batch runs forward and backward in this "
                 "many micro-batches, then one optimizer step (1..batch size; less memory for "
                 "the same batch)");
  app.add_option("--num-classes", r.num_classes,
                 "classes of the synthetic targets (0: model default)");
  app.add_option("--precision", o.precision,
                 "auto|" + join_names(precision_names()) +
                     " (auto: fp16 on CUDA; on the CPU bf16 where it has native bf16 (AVX512-BF16, "
                     "AMX, Arm BF16), "
                     "else fp32)");
  app.add_option("--memory-format", o.memory_format, join_names(memory_format_names()))
      ->group("Image models");
  app.add_option("--optimizer", o.optimizer, join_names(optimizer_names()));
  app.add_option("--lr", r.learning_rate, "learning rate");
  app.add_option("--momentum", r.momentum, "SGD momentum");
  app.add_option("--beta1", r.adam_beta1, "Adam/AdamW: decay of the gradient average");
  app.add_option("--beta2", r.adam_beta2, "Adam/AdamW: decay of the squared-gradient average");
  app.add_option("--weight-decay", r.weight_decay, "weight decay (every parameter)");
  app.add_option("--seq-len", r.sequence_length, "tokens per sequence (0: the model's context)")
      ->group("Language models");
  app.add_option("--data", r.data,
                 "train on the JPEG files of this ImageNet-style folder (one "
                 "sub-folder per class) ('': synthetic images)")
      ->group("Image models");
  app.add_option("--loader-threads", r.loader_threads,
                 "--data: loader threads (0: every core); they decode on the CPU path and read "
                 "files on the GPU path")
      ->group("Image models");
  app.add_option("--decode", o.decode,
                 "--data: where the JPEGs are decoded: gpu (nvJPEG, the hardware decoder where "
                 "the GPU has one), cpu (libjpeg-turbo on the loader threads) or auto (gpu on a "
                 "CUDA device when the build has nvJPEG)")
      ->group("Image models");
  app.add_option("--host-decode-share", o.host_decode_share,
                 "--data decoded on the GPU: the share of each batch (0..1) the loader threads "
                 "decode instead, beside the GPU's decoder; auto: from 1, moved after each "
                 "batch toward the most the threads decode without the GPU running out of work "
                 "(which files each decodes then varies between runs)")
      ->group("Image models");
  app.add_option("--gpu-batches-per-call", r.gpu_batches_per_call,
                 "--data decoded on the GPU: loader batches nvJPEG decodes in one call (1..16)")
      ->group("Image models");
  app.add_option("--gpu-decode-threads", r.gpu_decode_threads,
                 "--data decoded on the GPU: threads with nvJPEG handles of their own, taking "
                 "the loader's batches in turn (1..8; default 1)")
      ->group("Image models");
  app.add_flag("--compare-synthetic", r.compare_synthetic,
               "--data: time the same steps on synthetic batches afterwards and record the "
               "files' share of that rate")
      ->group("Image models");
  app.add_option("--token-file", r.token_file,
                 "uint16 token file (nanoGPT/llm.c .bin) to draw random "
                 "windows from ('': synthetic tokens)")
      ->group("Language models");
  add_switch(app, "cudnn-benchmark", r.cudnn_benchmark, "cuDNN autotuning");
  app.add_flag("--activation-checkpointing", r.activation_checkpointing,
               "keep only each transformer block's input and run the block "
               "again in the backward pass (less memory, about a third more compute)")
      ->group("Language models");
  add_switch(app, "optimizer-in-backward", r.optimizer_in_backward,
             "with AdamW in gpuperf's kernel on a GPU: start each parameter's "
             "update while backward still runs (the same results to the bit)")
      ->group("Language models");
  add_switch(app, "timed-gemm-algorithms", r.timed_gemm_algorithms,
             "on a GPU: each matrix product takes the fastest of cuBLASLt's candidate "
             "algorithms, timed at its first call (off: PyTorch's products, cuBLAS's own choice)")
      ->group("Language models");
  add_switch(app, "oom-back-off", r.back_off_on_out_of_memory,
             "out of device memory: halve the batch (in micro-batches: double them) and run "
             "again, saying so (single-process runs)");
  add_switch(
      app, "predict-memory", r.predict_memory,
      "CUDA: predict the step's peak memory and record it beside the measured peaks (an "
      "image model's activations measured by two short steps at a quarter and half the batch "
      "first)");
  app.add_option("--fused", o.fused,
                 "auto|on|off: fused optimizer kernels, no host sync per step (auto: where "
                 "LibTorch has them)");
  app.add_option(
      "--graph", o.graph,
      "auto|on|off: capture the whole step in a CUDA graph (auto: on CUDA when --fused)");
  app.add_option("--fuse,--fuse-conv", o.fuse,
                 "auto|on|off: the model's training-safe kernel fusion, the same function and "
                 "gradients in fewer launches: convolution + bias + ReLU as one cuDNN call "
                 "(simple); BatchNorm + add + ReLU, conv1 + shortcut as one GEMM node, and "
                 "gpuperf's own kernels for the max pool, the average pool, the stem's input "
                 "padded to 4 channels and the autocast weight casts (resnet*, channels_last); "
                 "the record's kernel_fusion says what ran (auto: on CUDA; --fuse-conv is the "
                 "old name)")
      ->group("Image models");
}

void add_measure_options(CLI::App& app, TrainingOptions& o) {
  TrainingRun& r = o.run;
  MeasureOptions& m = r.measure;
  app.add_option("--warmup", m.warmup, "untimed warm-up steps");
  app.add_option("--steps-per-window", m.steps_per_window, "steps per timed window");
  app.add_option("--windows", m.windows, "timed windows (fixed mode)");
  app.add_flag("--adaptive", m.adaptive,
               "time windows until the 95% CI is within --target-ci or --max-seconds pass");
  app.add_option("--target-ci", m.target_relative_ci, "adaptive: relative CI half-width to reach");
  app.add_option("--max-seconds", m.max_seconds, "adaptive: timed seconds at most");
  app.add_option("--min-windows", m.min_windows, "adaptive: windows at least");
  app.add_option("--max-windows", m.max_windows, "adaptive: windows at most");
  app.add_option("--seed", r.seed, "random seed for weights and synthetic data");
  app.add_option("--threads", r.threads, "CPU intra-op threads (0: LibTorch's default)");
  add_result_options(app, o.results, "write the result here ('' for none)");
  app.add_flag("--quiet,-q", r.quiet, "no progress lines");
  add_switch(app, "telemetry", r.telemetry,
             "sample power, energy, clocks and throttling through NVML while timing (GPU only)");
  app.add_option("--telemetry-period", r.telemetry_period, "seconds between telemetry samples")
      ->check(number_rule([](double v) { return v > 0 && v <= kDay; }, "> 0 and <= 86400 (a day)"));
  add_kernel_trace_option(app, r.kernel_trace, "run --steps-per-window more steps");
}

void add_distributed_options(CLI::App& app, TrainingOptions& o) {
  app.add_option("--nproc-per-node", o.nproc_per_node,
                 "start N data-parallel ranks on this machine (one per GPU; Gloo processes on the "
                 "CPU); under torchrun, mpirun or srun the launcher's variables say it instead "
                 "(docs/distributed.md)")
      ->check(number_rule([](double v) { return v >= 0 && v <= kMaxLocalRanks; },
                          ">= 0 and <= " + std::to_string(kMaxLocalRanks) + " (0: none)"));
  app.add_option("--dist-backend", o.dist_backend, "auto|nccl|gloo (auto: NCCL on GPUs)");
  app.add_option("--dist-timeout", o.data_parallel.group.timeout_seconds,
                 "seconds a rank waits for the others before failing")
      ->check(number_rule([](double v) { return v >= 1e-3 && v <= kDay; },
                          ">= 0.001 and <= 86400 (a day)"));
  app.add_option("--bucket-mib", o.bucket_mib, "gradient bucket size for the all-reduce, MiB")
      ->check(
          number_rule([](double v) { return v > 0 && v <= 65536; }, "> 0 and <= 65536 (64 GiB)"));
  add_switch(app, "overlap", o.data_parallel.sync.overlap,
             "all-reduce gradient buckets during backward");
  app.add_option("--baseline-throughput", o.data_parallel.baseline_throughput,
                 "single-GPU samples/s to judge scaling against (0: none)");
}

// The data-parallel settings, parsed once.
DataParallelRun typed_data_parallel(const TrainingOptions& o) {
  DataParallelRun dp = o.data_parallel;
  dp.group.backend = parse_c10d_backend(o.dist_backend, "ProcessGroupOptions::backend");
  require_setting(dp.group.timeout_seconds > 0 && std::isfinite(dp.group.timeout_seconds),
                  "dist-timeout", dp.group.timeout_seconds, "> 0");
  require_setting(o.bucket_mib > 0 && std::isfinite(o.bucket_mib), "bucket-mib", o.bucket_mib,
                  "> 0");
  dp.sync.bucket_bytes = o.bucket_mib * 1024 * 1024;
  require_setting(dp.baseline_throughput >= 0, "baseline-throughput", dp.baseline_throughput,
                  ">= 0 (0: none)");
  if (!(dp.baseline_throughput > 0)) dp.baseline_throughput = kNotAvailable;
  return dp;
}

void print_and_write(const CLI::App& app, const RunRecord& record, const ResultOutputs& outputs,
                     const std::string& unit) {
  RunRecord shown = record;  // the console in the program's words, the record in the library's
  for (auto& warning : shown.warnings) warning = in_flags(app, warning);
  write_text(outputs.console(), shown, unit);
  if (record.telemetry.available) write_telemetry_summary(outputs.console(), record.telemetry);
  write_results(outputs, record);
}

// --batch-size: a whole number (the run checks its range), or "max" (nullopt; the run keeps the
// default to start from).
std::optional<std::int64_t> parse_batch_size(const std::string& text) {
  if (text == "max") return std::nullopt;
  std::int64_t value = 0;
  const char* end = text.data() + text.size();
  const auto [stop, error] = std::from_chars(text.data(), end, value);
  if (text.empty() || error != std::errc() || stop != end) {
    throw ConfigError("batch-size", "must be a whole number >= 1 or 'max', got '" + text + "'");
  }
  return value;
}

// The text options, parsed once into the run's typed fields.
TrainingRun typed_run(const TrainingOptions& o) {
  TrainingRun run = o.run;
  if (const auto batch = parse_batch_size(o.batch_size)) run.batch_size = *batch;
  if (const auto share = parse_number_or_word(o.host_decode_share, "auto", "host-decode-share")) {
    run.host_decode_share = *share;
  } else {
    run.adaptive_host_decode_share = true;
    run.host_decode_share = kAutoHostShareStart;
  }
  if (o.precision != "auto") run.precision = parse_precision(o.precision);
  run.memory_format = parse_memory_format(o.memory_format);
  run.optimizer = parse_optimizer(o.optimizer);
  run.fused_optimizer = parse_switch(o.fused, "fused");
  run.cuda_graph = parse_switch(o.graph, "graph");
  run.kernel_fusion = parse_switch(o.fuse, "fuse");
  run.decode = parse_image_decode(o.decode, "decode");
  return run;
}

}  // namespace

int run_training_program(int argc, const char* const* argv, const TrainingDefaults& defaults) {
  TrainingOptions o;
  o.run = defaults.run;
  o.run.command_line = launcher_command_line(join_command_line(argc, argv));
  if (defaults.run.precision) o.precision = to_string(*defaults.run.precision);
  o.memory_format = to_string(defaults.run.memory_format);
  o.optimizer = to_string(defaults.run.optimizer);
  o.results.json = defaults.program + ".json";
  o.batch_size = std::to_string(defaults.run.batch_size);
  o.run.back_off_on_out_of_memory = true;
  o.data_parallel.baseline_throughput = 0;  // none; "nan" would read badly in --help

  CLI::App app(defaults.description, defaults.program);
  app.option_defaults()->always_capture_default();
  add_model_options(app, o);
  add_measure_options(app, o);
  add_distributed_options(app, o);
  add_torch_version_flag(app);
  return run_program(app, argc, argv, [&] {
    if (o.list_models) {
      write_text(std::cout, ModelRegistry::global());
      return kExitOk;
    }
    const TrainingRun run = typed_run(o);
    const bool largest_batch = o.batch_size == "max";
    const DataParallelRun data_parallel = typed_data_parallel(o);
    require_setting(o.nproc_per_node >= 0, "nproc-per-node", o.nproc_per_node, ">= 0 (0: none)");
    const std::optional<LaunchEnv> env = read_launch_env();
    // Refuse a bad output path before a long run, not after it; run_training() validates the
    // rest before anything runs.
    const ResultOutputs outputs = result_outputs(o.results);
    if (env && o.nproc_per_node > 1) {
      throw ConfigError("--nproc-per-node: " + std::to_string(o.nproc_per_node) +
                        " inside a job that " + env->launcher + " started (rank " +
                        std::to_string(env->rank) + " of " + std::to_string(env->world_size) +
                        "): the launcher already chose the processes");
    }
    if (largest_batch &&
        (run.device == "cpu" || (run.device == "auto" && !torch::cuda::is_available()))) {
      throw ConfigError("batch-size",
                        "'max' searches a GPU's memory for the largest batch; this run is on the "
                        "CPU (give a number)");
    }
    if (largest_batch && (env || o.nproc_per_node > 1)) {
      throw ConfigError("batch-size",
                        "'max' is for single-process runs; give a number to a "
                        "data-parallel run");
    }
    if (!run.kernel_trace.empty() && (env || o.nproc_per_node > 1)) {
      throw ConfigError("--kernel-trace: single-process runs only, got '" + run.kernel_trace +
                        "' in a data-parallel run");
    }
    if (!env || env->rank == 0) {
      outputs.check();
      check_kernel_trace(run.kernel_trace);
    }
    if (o.nproc_per_node > 1 && !env) {
      // A bad setting is said once, by the launcher, not once per rank after the fork.
      check_data_parallel_run(run, data_parallel);
      // Each rank's record keeps the command that re-runs the whole job, --nproc-per-node in it.
      ::setenv(kLaunchCommandVariable, o.run.command_line.c_str(), 1);
      return launch_local_ranks(strip_option(argc, argv, "--nproc-per-node"), o.nproc_per_node,
                                std::cerr);
    }
    // A batch the host cannot hold is named (a GPU's is, with its figures, by the run itself).
    return with_memory_errors("--batch-size " + o.batch_size, [&] {
      if (env) {
        const RunRecord record = run_data_parallel_training(run, *env, data_parallel);
        if (env->rank == 0) print_and_write(app, record, outputs, defaults.unit);
        return kExitOk;
      }
      if (!largest_batch) {
        print_and_write(app, run_training(run), outputs, defaults.unit);
        return kExitOk;
      }
      BatchSearchOptions search;
      search.start = run.batch_size;
      const RunRecord record = run_training_at_largest_batch(run, search);
      print_and_write(app, record, outputs, defaults.unit);
      return kExitOk;
    });
  });
}

}  // namespace gpuperf::program
