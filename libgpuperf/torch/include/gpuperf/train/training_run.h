#pragma once
// A training benchmark as one typed call: describe the run, get a plain record back.
//
//   gpuperf::TrainingRun run;
//   run.model = "resnet50";
//   run.batch_size = 256;
//   run.memory_format = gpuperf::MemoryFormat::kChannelsLast;
//   run.optimizer = gpuperf::OptimizerKind::kSgd;
//   run.learning_rate = 0.1;
//   gpuperf::RunRecord record = gpuperf::run_training(run);
//   std::cout << record.throughput.median << " img/s\n";
//
// A language model trains the same way on token sequences:
//
//   run.model = "gpt2";                  // ModelTask::kLanguageModel in the registry
//   run.batch_size = 16;                 // sequences per step
//   run.sequence_length = 1024;
//   run.optimizer = gpuperf::OptimizerKind::kAdamW;
//   run.adam_beta2 = 0.95;
//   record.metrics["tokens_per_second"], record.metrics["fraction_of_datasheet_peak"] (MFU)
//
// The run is validated once, resolved once (device, `auto` precision and switches: the record
// says what ran), measured, and enriched once (efficiency, ImageNet projection, warnings).

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "gpuperf/base/choices.h"
#include "gpuperf/base/run_basics.h"
#include "gpuperf/plan/batch_search.h"
#include "gpuperf/results/run_record.h"
#include "gpuperf/timing/measure.h"
#include "gpuperf/train/gradient_sync.h"

namespace gpuperf {

/// What a training measurement runs (device, seed, threads, quiet, command line: RunBasics).
struct TrainingRun : RunBasics {
  std::string model = "simple";   ///< a name in ModelRegistry::global()
  std::int64_t batch_size = 256;  ///< samples per optimizer step (all micro-batches together)
  /// Gradient accumulation: each step's batch_size samples run forward and backward in this many
  /// micro-batches (TrainStepOptions::accumulation_steps), one optimizer step after the last;
  /// 1..batch_size. The record's config says it where it is above 1.
  int accumulation_steps = 1;
  std::int64_t num_classes = 0;  ///< 0: the model's default
  /// nullopt: fp16 on CUDA; on the CPU bf16 where it multiplies bf16 natively
  /// (cpu_computes_bf16()), else fp32.
  std::optional<Precision> precision;
  MemoryFormat memory_format = MemoryFormat::kContiguous;
  OptimizerKind optimizer = OptimizerKind::kAdam;
  double learning_rate = 1e-3;
  double momentum = 0.9;      ///< SGD only
  double adam_beta1 = 0.9;    ///< Adam, AdamW
  double adam_beta2 = 0.999;  ///< Adam, AdamW
  double weight_decay = 0;
  /// Language models: tokens per sequence (0: the model's context); the samples are sequences.
  std::int64_t sequence_length = 0;
  /// Language models: a pre-tokenised file (uint16 tokens, nanoGPT's or llm.c's .bin layout) to
  /// draw random windows from; "" for synthetic tokens (one random batch, as for images).
  std::string token_file;
  /// Image models at 3x224x224: train on the JPEG files of this ImageNet-style folder
  /// (ImageFolderBatches) instead of synthetic batches; "" for synthetic. num_classes 0
  /// takes the folder's class count.
  std::string data;
  int loader_threads = 0;  ///< data: decoding threads (0: every core)
  /// data: where the files are decoded (auto: on the GPU with nvJPEG where the run is on a CUDA
  /// device and the build has it, else on the CPU threads).
  ImageDecode decode = ImageDecode::kAuto;
  /// data, decoded on the GPU: the share of each batch the loader threads decode instead
  /// (ImageFolderBatchOptions::host_decode_share), 0..1.
  double host_decode_share = 0;
  /// data, decoded on the GPU: host_decode_share is where the share starts and it follows the
  /// pace of the loader threads and of training (ImageFolderBatchOptions::adaptive_host_share);
  /// the record gives the share that ran.
  bool adaptive_host_decode_share = false;
  /// data, decoded on the GPU: loader batches nvJPEG decodes in one call
  /// (ImageFolderBatchOptions::gpu_batches_per_call), 1..16.
  int gpu_batches_per_call = 1;
  /// data, decoded on the GPU: decode threads, each with nvJPEG handles of its own
  /// (ImageFolderBatchOptions::gpu_decode_threads), 1..8; another value than 1 is refused for
  /// runs that do not decode on the GPU.
  int gpu_decode_threads = 1;
  /// data: after the run on the files, the same step timed again on synthetic batches (same
  /// measurement settings, same model and CUDA graph), recorded as synthetic_images_per_second
  /// and data_to_synthetic_ratio (the files' median over the synthetic median).
  bool compare_synthetic = false;
  /// Language models: per-block activation checkpointing (each block keeps only its input and
  /// runs again in the backward pass: less memory, about a third more compute).
  bool activation_checkpointing = false;
  /// Language models: the optimizer's update starts while backward still runs
  /// (TrainStepOptions::optimizer_in_backward; where it does not apply, after backward). The
  /// record's kernel_fusion says "beside backward" where it ran so.
  bool optimizer_in_backward = true;
  /// Language models on a GPU: each matrix product's cuBLASLt algorithm the fastest of the
  /// heuristic's candidates, timed at its first call (set_timed_gemm_algorithms(), for the run);
  /// off: ATen's products (cuBLAS's own choice), the same in every process. The record's
  /// kernel_fusion says "GEMMs: timed algorithms" where they were.
  bool timed_gemm_algorithms = false;
  /// On CUDA: predict the step's peak memory (training_memory.h) and record it beside the
  /// measured peaks. An image model's activation slope is measured first by two short eager
  /// steps at a quarter and half the batch (not in the figures).
  bool predict_memory = true;
  /// Out of memory at batch_size: halve the batch and run again, saying so in the record
  /// (warnings, metrics "requested_batch_size"), instead of failing; a run in micro-batches
  /// (accumulation_steps > 1) keeps its batch and doubles the micro-batches instead (metrics
  /// "requested_accumulation_steps"), up to one sample each. Not in data-parallel runs (every
  /// rank must run one batch size): there the error stands.
  bool back_off_on_out_of_memory = false;
  bool cudnn_benchmark = true;
  Switch fused_optimizer = Switch::kAuto;  ///< auto: where LibTorch has the fused kernels
  Switch kernel_fusion = Switch::kAuto;    ///< the model's cuDNN fusion; auto: on CUDA
  Switch cuda_graph = Switch::kAuto;       ///< whole step in a graph; auto: CUDA + fused
  MeasureOptions measure;                  ///< warm-up, windows, adaptive stopping
  bool telemetry = true;                   ///< sample NVML while timing (GPU only)
  double telemetry_period = 0.1;           ///< seconds between samples
  // kernel_trace (RunBasics): after the timed windows, steps_per_window more steps are traced.

  /// Throws ConfigError naming the first bad field ("TrainingRun::batch_size") and its value.
  void validate() const;
};

class TrainStep;

/// Where a layer above (data-parallel training) joins run_training()'s pipeline.
struct TrainingHooks {
  /// Called once the step exists, before the first step: the gradient sync to install, or null.
  std::function<std::shared_ptr<GradientSync>(TrainStep& step)> gradient_sync;
  /// Added to the seed of the synthetic batches (not of the weights): each rank its own data.
  std::uint64_t data_seed_offset = 0;
  /// Runs on files (TrainingRun::data): this rank's share of each epoch, of data_world_size.
  int data_rank = 0;
  int data_world_size = 1;
  /// Called after the timed windows, before enrichment, with the step and the measured record.
  std::function<void(TrainStep& step, RunRecord& record)> after_measure;
};

/// Runs the training measurement and returns its record (no file; unless run.quiet, a start line
/// and a line per window logged to stderr at level info). Throws
/// ConfigError for bad or unsatisfiable options (before anything runs) and OutOfMemoryError,
/// with the batch size and the device's memory figures, when the device runs out of memory
/// (unless run.back_off_on_out_of_memory finds a batch that fits).
[[nodiscard]] RunRecord run_training(const TrainingRun& run, const TrainingHooks& hooks = {});

/// The largest batch_size of `run` that trains on its device, found with real steps: each try
/// is run_training() at that batch (the run's settings; its warm-up, CUDA-graph capture included,
/// and one timed step; quiet, no telemetry, no back-off), an out-of-memory error is caught, the
/// allocator's cache emptied and the try recorded with its peak reserved bytes.
/// largest_batch_that_fits() (plan/batch_search.h) doubles from options.start, then bisects.
/// Throws ConfigError for a bad run (before any try) and OutOfMemoryError when batch 1 does not
/// fit.
[[nodiscard]] BatchSearchResult find_largest_batch(const TrainingRun& run,
                                                   const BatchSearchOptions& options = {});

/// find_largest_batch(), then run_training() at the largest batch found (an image model without
/// the memory prediction's probe, which at the edge of the memory would leave the run too little).
/// If that longer run still runs out of memory (autotuning may pick another algorithm and
/// workspace), the next largest batch that fit a try is measured and a warning says so. The
/// record adds the metrics batch_search_largest_fitting, batch_search_smallest_failing and
/// batch_search_tries.
[[nodiscard]] RunRecord run_training_at_largest_batch(const TrainingRun& run,
                                                      const BatchSearchOptions& options = {});

}  // namespace gpuperf
