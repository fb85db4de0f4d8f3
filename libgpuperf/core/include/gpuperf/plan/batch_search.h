#pragma once
// The largest batch that fits, found with real tries: the batch doubles until a try runs out of
// memory, then bisects between the last batch that ran and the first that did not. The caller
// injects the try (a training step at that batch size that catches its own out-of-memory error
// and empties the allocator), so the search itself is torch-free and testable with a fake.
//
//   auto result = gpuperf::largest_batch_that_fits([&](std::int64_t batch) {
//     return run_steps_catching_oom(batch);   // -> Trial{TrialOutcome::kFits, peak_bytes}
//   });
//   std::cout << result.largest_fitting << " runs, " << result.smallest_failing << " does not\n";

#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

namespace gpuperf {

/// How one try at a batch size ended.
enum class TrialOutcome {
  kFits,         ///< the steps ran
  kOutOfMemory,  ///< the device ran out of memory
  kError,        ///< another failure (retried; a repeated one ends the search)
};

/// "fits", "out of memory", "error".
[[nodiscard]] std::string to_string(TrialOutcome value);

/// What a try reports.
struct Trial {
  TrialOutcome outcome = TrialOutcome::kFits;  ///< how the try ended
  /// Peak device bytes of the try (allocated or reserved, as the caller measures); NaN unknown.
  double peak_bytes = std::numeric_limits<double>::quiet_NaN();
  std::string message;  ///< the error's text for kOutOfMemory and kError
};

/// One try, as recorded.
struct BatchTry {
  std::int64_t batch = 0;                                        ///< the batch size tried
  TrialOutcome outcome = TrialOutcome::kFits;                    ///< how it ended
  double peak_bytes = std::numeric_limits<double>::quiet_NaN();  ///< as the try reported it
  std::string message;                                           ///< the error's text, if any
};

/// Where the search starts and stops.
struct BatchSearchOptions {
  std::int64_t start = 1;            ///< the first batch tried (doubling from there)
  std::int64_t max_batch = 1 << 20;  ///< never tries beyond this
  int retries_on_error = 1;          ///< repeats of a try that failed with kError (not OOM)

  /// Throws ConfigError naming the first bad field: start >= 1, max_batch >= start,
  /// retries_on_error >= 0.
  void validate() const;
};

/// The outcome of largest_batch_that_fits().
struct BatchSearchResult {
  std::int64_t largest_fitting = 0;  ///< the largest batch that ran
  /// The smallest batch that ran out of memory; 0 when every try up to max_batch ran.
  std::int64_t smallest_failing = 0;
  std::vector<BatchTry> tries;  ///< every try, in order (retries included)
};

/// Doubles from `options.start` until a try runs out of memory (or max_batch runs), then bisects
/// until the batch that ran and the one that did not are adjacent (below the start batch when
/// it fails). Throws OutOfMemoryError when batch 1 does not fit, and Error when a try fails other
/// than by out of memory more than `retries_on_error` times in a row (the message names the batch
/// and the error); ConfigError for bad options.
[[nodiscard]] BatchSearchResult largest_batch_that_fits(
    const std::function<Trial(std::int64_t batch)>& run, const BatchSearchOptions& options = {});

}  // namespace gpuperf
