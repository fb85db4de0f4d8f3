// ResNet-50 training throughput on synthetic ImageNet batches (3x224x224, 1000 classes) with
// the usual recipe: AMP, channels_last, SGD with momentum. Prints img/s and the projected time
// for 90 epochs of ImageNet-1k (1,281,167 images), and writes a JSON result.
// `resnet50_benchmark --help` lists the options.
#include "training_program.h"

int main(int argc, char** argv) {
  gpuperf::TrainingBenchmarkDefaults defaults;
  defaults.program = "resnet50_benchmark";
  defaults.description = "gpuperf ResNet-50 training benchmark (synthetic ImageNet)";
  defaults.model = "resnet50";
  defaults.batch_size = 256;
  defaults.memory_format = "channels_last";
  defaults.optimizer = "sgd";
  defaults.learning_rate = 0.1;
  defaults.warmup_steps = 15;
  defaults.steps_per_window = 10;
  defaults.windows = 8;
  defaults.unit = "img/s";
  defaults.imagenet_projection = true;
  return gpuperf::run_training_benchmark(argc, argv, defaults);
}
