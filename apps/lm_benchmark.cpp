// Language-model training throughput: GPT-2 124M by default (sequence 1024, batch 16, bf16,
// AdamW with betas 0.9/0.95 and weight decay 0.1, the whole step in a CUDA graph), on synthetic
// tokens or random windows of a token file. Prints sequences/s, tokens/s and MFU (training
// FLOPs 6N + 6 x layers x width x sequence per token, against the datasheet's dense peak), and
// writes a JSON result. `lm_benchmark --help` lists the options; --model llama-1b, gpt2-large...
#include "training_program.h"

int main(int argc, char** argv) {
  gpuperf::program::TrainingDefaults defaults;
  defaults.program = "lm_benchmark";
  defaults.description = "gpuperf language-model training benchmark (GPT-2, Llama-style)";
  defaults.run.model = "gpt2";
  defaults.run.batch_size = 16;
  defaults.run.sequence_length = 1024;
  defaults.run.precision = gpuperf::Precision::kBf16;
  defaults.run.optimizer = gpuperf::OptimizerKind::kAdamW;
  defaults.run.learning_rate = 6e-4;
  defaults.run.adam_beta2 = 0.95;
  defaults.run.weight_decay = 0.1;
  defaults.run.measure.warmup = 10;
  defaults.run.measure.steps_per_window = 10;
  defaults.run.measure.windows = 5;
  defaults.unit = "sequences/s";
  return gpuperf::program::run_training_program(argc, argv, defaults);
}
