// The seed benchmark in C++: the seed's small CNN, batch 256 of 3x32x32, Adam 1e-3,
// cross-entropy, AMP with a GradScaler (fp16 on a GPU; bf16 or fp32 on a CPU), measured properly:
// warm-up excluded, timed windows, statistics over windows. Prints "Throughput: N samples/sec"
// and its spread, and writes a JSON result. `seed_benchmark --help` lists the options.
#include "training_program.h"

int main(int argc, char** argv) {
  gpuperf::program::TrainingDefaults defaults;
  defaults.program = "seed_benchmark";
  defaults.description = "gpuperf seed benchmark: SimpleModel training throughput with AMP";
  defaults.run.model = "simple";
  defaults.run.batch_size = 256;
  defaults.run.optimizer = gpuperf::OptimizerKind::kAdam;
  defaults.run.learning_rate = 1e-3;
  // A step takes ~2 ms on a fast GPU: windows of 50 steps keep launch jitter out of the spread.
  defaults.run.measure.warmup = 20;
  defaults.run.measure.steps_per_window = 50;
  defaults.run.measure.windows = 10;
  return gpuperf::program::run_training_program(argc, argv, defaults);
}
