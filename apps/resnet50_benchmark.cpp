// ResNet-50 training throughput on synthetic ImageNet batches (3x224x224, 1000 classes) with
// the usual recipe: AMP, channels_last, SGD with momentum. Prints img/s and the projected time
// for 90 epochs of ImageNet-1k (1,281,167 images), and writes a JSON result.
// `resnet50_benchmark --help` lists the options.
#include "training_program.h"

int main(int argc, char** argv) {
  gpuperf::program::TrainingDefaults defaults;
  defaults.program = "resnet50_benchmark";
  defaults.description = "gpuperf ResNet-50 training benchmark (synthetic ImageNet)";
  defaults.run.model = "resnet50";
  defaults.run.batch_size = 256;
  defaults.run.memory_format = gpuperf::MemoryFormat::kChannelsLast;
  defaults.run.optimizer = gpuperf::OptimizerKind::kSgd;
  defaults.run.learning_rate = 0.1;
  defaults.run.measure.warmup = 15;
  defaults.run.measure.steps_per_window = 10;
  defaults.run.measure.windows = 8;
  defaults.unit = "img/s";
  return gpuperf::program::run_training_program(argc, argv, defaults);
}
