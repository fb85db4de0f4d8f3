// The batch-size search. Out-of-memory tries bound the search from above; a try that fails in
// another way is retried, because a search that read every failure as "too large" would report
// a batch that is small for a reason unrelated to memory.
#include "gpuperf/plan/batch_search.h"

#include <cmath>

#include "gpuperf/base/error.h"
#include "gpuperf/base/format.h"

namespace gpuperf {
namespace {

// Runs `batch` until it fits or runs out of memory, recording every try; throws Error after
// more than `retries` other failures in a row.
TrialOutcome attempt(const std::function<Trial(std::int64_t)>& run, std::int64_t batch, int retries,
                     BatchSearchResult& result) {
  for (int i = 0;; ++i) {
    const Trial t = run(batch);
    result.tries.push_back({batch, t.outcome, t.peak_bytes, t.message});
    if (t.outcome != TrialOutcome::kError) return t.outcome;
    if (i >= retries) {
      throw Error("batch search: batch " + std::to_string(batch) + " failed " +
                  std::to_string(i + 1) +
                  " time(s) with an error that is not out of memory: " + t.message);
    }
  }
}

}  // namespace

std::string to_string(TrialOutcome value) {
  switch (value) {
    case TrialOutcome::kFits:
      return "fits";
    case TrialOutcome::kOutOfMemory:
      return "out of memory";
    case TrialOutcome::kError:
      return "error";
  }
  return "?";
}

void BatchSearchOptions::validate() const {
  require_setting(start >= 1, "BatchSearchOptions::start", start, ">= 1");
  require_setting(max_batch >= start, "BatchSearchOptions::max_batch", max_batch, ">= {start}");
  require_setting(retries_on_error >= 0 && retries_on_error <= 100,
                  "BatchSearchOptions::retries_on_error", retries_on_error, "0..100");
}

BatchSearchResult largest_batch_that_fits(const std::function<Trial(std::int64_t)>& run,
                                          const BatchSearchOptions& options) {
  options.validate();
  BatchSearchResult result;
  const int retries = options.retries_on_error;
  // Doubling: the first out-of-memory try bounds the search.
  std::int64_t batch = options.start;
  while (true) {
    if (attempt(run, batch, retries, result) == TrialOutcome::kOutOfMemory) {
      result.smallest_failing = batch;
      break;
    }
    result.largest_fitting = batch;
    if (batch == options.max_batch) return result;
    batch = batch > options.max_batch / 2 ? options.max_batch : batch * 2;
  }
  // Bisection between a batch that ran (0: none yet, when the start batch failed) and one that
  // did not, until they are adjacent.
  while (result.smallest_failing - result.largest_fitting > 1) {
    const std::int64_t mid =
        result.largest_fitting + (result.smallest_failing - result.largest_fitting) / 2;
    if (attempt(run, mid, retries, result) == TrialOutcome::kFits) {
      result.largest_fitting = mid;
    } else {
      result.smallest_failing = mid;
    }
  }
  if (result.largest_fitting == 0) {
    const BatchTry& last = result.tries.back();
    throw OutOfMemoryError("batch search: batch 1 does not fit" +
                           (std::isnan(last.peak_bytes)
                                ? std::string()
                                : " (peak " + format_number(last.peak_bytes / 1e9) + " GB)") +
                           (last.message.empty() ? "" : ": " + last.message) +
                           "; shard the model states, checkpoint activations or offload");
  }
  return result;
}

}  // namespace gpuperf
