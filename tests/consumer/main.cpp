// Trains the seed model for a few steps with an installed gpuperf and times them.
#include <gpuperf/gpuperf.h>

#include <cmath>
#include <iostream>

int main() {
  gpuperf::TrainStep step(gpuperf::ModelRegistry::global().create("simple"), torch::kCPU);
  gpuperf::SyntheticBatchOptions options;
  options.batch_size = 4;
  gpuperf::SyntheticBatches batches(options);
  auto timer = gpuperf::make_steady_clock_timer();
  gpuperf::MeasureOptions measure;
  measure.warmup = 1;
  measure.steps_per_window = 1;
  measure.windows = 2;
  float loss = 0;
  const auto m =
      gpuperf::measure([&] { loss = step(batches.next()).loss.item<float>(); }, 4, *timer, measure);
  std::cout << "gpuperf " << gpuperf::kVersion << ": " << m.throughput.median << " samples/s, loss "
            << loss << "\n";
  return std::isfinite(loss) && m.throughput.median > 0 ? 0 : 1;
}
