// The CPU loader. One mutex guards the schedule (which batch and slot is next, which buffers are
// free) and the counters; decoding runs outside it. Samples are claimed one at a time: a decode
// takes milliseconds, the lock microseconds. Every sample's content is a function of (seed,
// epoch, position), so the order in which threads finish never shows in a batch.
#include "gpuperf/input/cpu_loader.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdlib>
#include <exception>
#include <map>
#include <mutex>
#include <new>
#include <thread>
#include <utility>

#include "gpuperf/base/error.h"

namespace gpuperf {
namespace {

constexpr std::size_t kAlignment = 64;

std::size_t round_up(std::size_t bytes) {
  return (bytes + kAlignment - 1) / kAlignment * kAlignment;
}

// Consecutive bad files tried for one slot before the loader gives up: a folder where this many
// files in a row do not decode is not a data set with a few bad files.
constexpr std::int64_t kMaxSubstitutions = 1024;

// What a GPU decoder gets: baseline 3-component YCbCr files that end properly. Grayscale, CMYK,
// progressive and damaged files take libjpeg's path, whose conversions and verdicts are PIL's.
bool for_gpu(const JpegHeader& header, const std::vector<std::uint8_t>& bytes) {
  return header.components == 3 && header.color_space == JpegColorSpace::kYCbCr &&
         !header.progressive && has_jpeg_end_marker(bytes.data(), bytes.size());
}

}  // namespace

HostAllocator HostAllocator::aligned() {
  HostAllocator a;
  a.allocate = [](std::size_t bytes) {
    void* p = std::aligned_alloc(kAlignment, round_up(std::max<std::size_t>(bytes, 1)));
    if (p == nullptr) throw std::bad_alloc();
    return p;
  };
  a.release = [](void* p, std::size_t) { std::free(p); };
  return a;
}

void CpuLoaderOptions::validate() const {
  require_setting(batch_size >= 1, "CpuLoaderOptions::batch_size", batch_size, ">= 1");
  require_setting(threads >= 0 && threads <= 1024, "CpuLoaderOptions::threads", threads,
                  "in 0..1024");
  require_setting(prefetch_batches >= 1 && prefetch_batches <= 64,
                  "CpuLoaderOptions::prefetch_batches", prefetch_batches, "in 1..64");
  require_setting(first_epoch >= 0, "CpuLoaderOptions::first_epoch", first_epoch, ">= 0");
  require_setting(epochs >= 1, "CpuLoaderOptions::epochs", epochs, ">= 1");
  require_setting(world_size >= 1, "CpuLoaderOptions::world_size", world_size, ">= 1");
  require_setting(rank >= 0 && rank < world_size, "CpuLoaderOptions::rank", rank,
                  "in 0..{world_size}-1");
  require_setting(host_share >= 0 && host_share <= 1, "CpuLoaderOptions::host_share", host_share,
                  "in 0..1");
  if (adaptive_host_share && output != LoaderOutput::kEncoded) {
    throw ConfigError("CpuLoaderOptions::adaptive_host_share", "true",
                      "applies to LoaderOutput::kEncoded only (a GPU decoder takes the rest)");
  }
  require_setting(max_reported_skips >= 0, "CpuLoaderOptions::max_reported_skips",
                  max_reported_skips, ">= 0");
  if (!allocator.allocate || !allocator.release) {
    throw ConfigError("CpuLoaderOptions::allocator", "needs both allocate and release");
  }
  transform.validate();
}

struct CpuLoader::State {
  // One batch buffer and what is being assembled in it.
  struct Slot {
    void* memory = nullptr;
    std::int64_t batch = -1;  // global batch number held; -1: free
    int remaining = 0;        // samples not yet finished
    int host_slots = 0;       // kEncoded: the first slots the threads decode whatever the file
    ImageBatch view;
    // Errors of this batch by slot position: the lowest is rethrown (deterministic).
    int error_position = -1;
    std::exception_ptr error;
  };

  CpuLoaderOptions options;
  std::vector<Sample> samples;
  std::size_t sample_bytes = 0;
  std::size_t image_bytes = 0;  // per slot
  std::size_t slot_bytes = 0;
  std::int64_t per_rank = 0;
  std::int64_t per_epoch = 0;  // batches
  std::int64_t total_batches = 0;

  mutable std::mutex mutex;
  std::condition_variable work_ready;   // workers wait: a slot freed, or stop
  std::condition_variable batch_ready;  // the consumer waits: a batch finished
  bool stopping = false;
  std::exception_ptr fatal;  // a worker's error outside any sample
  std::vector<Slot> slots;
  std::int64_t filling = 0;      // the batch whose samples are being claimed
  int next_position = 0;         // the next unclaimed sample of `filling`
  bool filling_started = false;  // `filling` has its slot
  int host_slots_now = 0;        // kEncoded: host slots of the next batch to start (a full one)
  bool threads_idle = false;     // a thread found no batch to start since the last delivery
  bool device_ran_dry = false;   // reported (device_ran_dry()) since the last delivery
  std::int64_t delivered = 0;    // batches handed to the consumer
  bool holding = false;          // the consumer holds batch delivered - 1
  std::map<std::int64_t, std::shared_ptr<const std::vector<std::int64_t>>> orders;
  CpuLoaderStats stats;
  std::vector<std::thread> threads;

  std::shared_ptr<const std::vector<std::int64_t>> order_of(std::int64_t epoch) {
    auto it = orders.find(epoch);
    if (it != orders.end()) return it->second;
    EpochOptions e;
    e.seed = options.seed;
    e.epoch = epoch;
    e.shuffle = options.shuffle;
    e.rank = options.rank;
    e.world_size = options.world_size;
    e.drop_last = options.drop_last;
    auto order = std::make_shared<const std::vector<std::int64_t>>(
        epoch_indices(static_cast<std::int64_t>(samples.size()), e));
    // Two orders are kept (the batches in flight usually span at most two epochs); a worker
    // still using a dropped one holds its own reference, and one asked for again is recomputed
    // (the same order: it depends only on seed and epoch).
    while (orders.size() >= 2) orders.erase(orders.begin());
    orders.emplace(epoch, order);
    return order;
  }

  // One claimed sample: everything the decode needs, copied out under the lock.
  struct Work {
    Slot* slot;
    std::int64_t epoch;
    std::int64_t batch;
    int position;                // in the batch
    int host_slots;              // kEncoded: the batch's first slots the threads decode
    std::int64_t rank_position;  // in the rank's epoch list
    std::shared_ptr<const std::vector<std::int64_t>> order;
  };

  // The buffer batch `batch` is assembled in.
  Slot& slot_of(std::int64_t batch) {
    return slots[static_cast<std::size_t>(batch % static_cast<std::int64_t>(slots.size()))];
  }

  // Under the lock: whether the threads have a batch to start but no buffer for it (the consumer
  // still holds or awaits the batch in it): they are ahead of the consumer.
  bool waiting_for_a_buffer() {
    return filling < total_batches && !filling_started && slot_of(filling).batch != -1;
  }

  // Under the lock: the next sample to decode, or false when there is none (yet).
  bool claim(Work& work) {
    if (waiting_for_a_buffer()) {
      threads_idle = true;
      return false;
    }
    if (filling >= total_batches) return false;
    Slot& slot = slot_of(filling);
    if (!filling_started) {
      const std::int64_t epoch = options.first_epoch + filling / per_epoch;
      const std::int64_t index = filling % per_epoch;
      slot.batch = filling;
      slot.view.epoch = epoch;
      slot.view.index_in_epoch = index;
      slot.view.size = static_cast<int>(
          std::min<std::int64_t>(options.batch_size, per_rank - index * options.batch_size));
      slot.view.images = slot.memory;
      slot.view.labels =
          reinterpret_cast<std::int64_t*>(static_cast<char*>(slot.memory) + image_bytes);
      slot.view.sample_ids.assign(static_cast<std::size_t>(slot.view.size), -1);
      slot.view.substituted = 0;
      slot.remaining = slot.view.size;
      slot.host_slots = options.adaptive_host_share ? std::min(host_slots_now, slot.view.size)
                                                    : host_slots(slot.view.size);
      slot.error_position = -1;
      slot.error = nullptr;
      filling_started = true;
      next_position = 0;
    }
    work.slot = &slot;
    work.epoch = slot.view.epoch;
    work.batch = filling;
    work.position = next_position;
    work.host_slots = slot.host_slots;
    work.rank_position = slot.view.index_in_epoch * options.batch_size + next_position;
    work.order = order_of(work.epoch);
    if (++next_position == slot.view.size) {
      ++filling;
      filling_started = false;
    }
    return true;
  }

  // A worker that fails outside a sample's decode (no memory for an epoch's order) stops the
  // loader; next() rethrows the error.
  void worker(int thread_index) {
    try {
      work_loop(thread_index);
    } catch (...) {
      std::lock_guard<std::mutex> lock(mutex);
      if (!fatal) fatal = std::current_exception();
      stopping = true;
      batch_ready.notify_all();
      work_ready.notify_all();
    }
  }

  void work_loop(int thread_index) {
    ImageTransformer transformer(options.transform);
    std::vector<std::uint8_t> bytes;
    std::unique_lock<std::mutex> lock(mutex);
    while (true) {
      Work work{};
      work_ready.wait(lock, [&] { return stopping || claim(work); });
      if (stopping) return;
      lock.unlock();
      const auto start = std::chrono::steady_clock::now();
      Outcome outcome = decode(work, transformer, bytes);
      const double seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      lock.lock();
      stats.decode_seconds_per_thread[static_cast<std::size_t>(thread_index)] += seconds;
      record(outcome, thread_index);
      Slot& slot = *work.slot;
      if (outcome.substituted) ++slot.view.substituted;
      if (outcome.error && (slot.error_position < 0 || work.position < slot.error_position)) {
        slot.error_position = work.position;
        slot.error = outcome.error;
      }
      if (--slot.remaining == 0) batch_ready.notify_all();
    }
  }

  struct Outcome {
    std::int64_t decoded = 0;
    std::int64_t warnings = 0;
    std::int64_t bytes = 0;
    std::int64_t pixels = 0;
    std::int64_t encoded = 0;
    bool substituted = false;
    std::vector<SkippedFile> skipped;
    std::exception_ptr error;
  };

  // Outside the lock: fills the slot's sample, from the first file from the sample's position
  // on in the rank's list that decodes. The slot's own draws are used for any file.
  Outcome decode(const Work& work, ImageTransformer& transformer,
                 std::vector<std::uint8_t>& bytes) {
    Outcome outcome;
    const std::vector<std::int64_t>& order = *work.order;
    const std::int64_t global_position =
        options.rank + work.rank_position * static_cast<std::int64_t>(options.world_size);
    const SampleRandom random =
        SampleRandom::draw(options.seed, static_cast<std::uint64_t>(work.epoch),
                           static_cast<std::uint64_t>(global_position));
    ImageBatch& view = work.slot->view;
    void* out =
        static_cast<char*>(view.images) + sample_bytes * static_cast<std::size_t>(work.position);
    const std::int64_t attempts = std::min<std::int64_t>(per_rank, kMaxSubstitutions);
    for (std::int64_t a = 0; a < attempts; ++a) {
      const std::int64_t id = order[static_cast<std::size_t>((work.rank_position + a) % per_rank)];
      const Sample& sample = samples[static_cast<std::size_t>(id)];
      try {
        // kEncoded: the file goes over as bytes and a plan unless the thread decodes it (its
        // slot is in the host share, or a GPU decoder should not get it). A host-share slot's
        // header and plan come from the transform, not from a separate read.
        EncodedSample* encoded = options.output == LoaderOutput::kEncoded
                                     ? &view.encoded[static_cast<std::size_t>(work.position)]
                                     : nullptr;
        std::vector<std::uint8_t>& file = encoded != nullptr ? encoded->bytes : bytes;
        read_image_file(sample.path, file);
        outcome.bytes += static_cast<std::int64_t>(file.size());
        bool on_host = true;
        if (encoded != nullptr) {
          encoded->random = random;
          encoded->path = sample.path;
          if (work.position >= work.host_slots) {
            encoded->header = read_jpeg_header(file.data(), file.size(), options.transform.decode);
            on_host = !for_gpu(encoded->header, file);
            if (!on_host) {
              encoded->plan = sample_plan(encoded->header.height, encoded->header.width,
                                          options.transform, random);
            }
          }
          encoded->on_host = on_host;
        }
        if (on_host) {
          const TransformReport report =
              transformer.transform(file.data(), file.size(), random, out);
          outcome.warnings += report.decode.warnings;
          outcome.pixels += report.decoded_pixels;
          if (encoded != nullptr) {
            encoded->header = report.header;
            encoded->plan = report.plan;
          }
        } else {
          outcome.encoded = 1;
        }
        outcome.decoded = 1;
        view.labels[work.position] = sample.label;
        view.sample_ids[static_cast<std::size_t>(work.position)] = id;
        outcome.substituted = a > 0;
        return outcome;
      } catch (const BadImageError& e) {
        const std::string path = e.path().empty() ? sample.path : e.path();
        outcome.skipped.push_back({path, e.reason(), e.detail()});
        if (options.strict) {
          outcome.error = std::make_exception_ptr(e.path().empty() ? e.with_path(path) : e);
          return outcome;
        }
      } catch (...) {
        outcome.error = std::current_exception();
        return outcome;
      }
    }
    // Bad input, not a fault of the loader: an IoError (the programs' exit code 2).
    outcome.error = std::make_exception_ptr(IoError(
        "CpuLoader: " + std::to_string(attempts) + " files in a row from " +
        samples[static_cast<std::size_t>(order[static_cast<std::size_t>(work.rank_position)])]
            .path +
        " do not decode (the last: " + outcome.skipped.back().path + ": " +
        to_string(outcome.skipped.back().reason) + ")"));
    return outcome;
  }

  // kEncoded: the slots of a batch of `size` the threads decode whatever the file.
  [[nodiscard]] int host_slots(int size) const {
    return static_cast<int>(std::lround(options.host_share * size));
  }

  // Under the lock.
  void record(const Outcome& outcome, int thread_index) {
    stats.images_decoded += outcome.decoded;
    stats.images_per_thread[static_cast<std::size_t>(thread_index)] += outcome.decoded;
    stats.warnings += outcome.warnings;
    stats.bytes_read += outcome.bytes;
    stats.decoded_pixels += outcome.pixels;
    stats.images_encoded += outcome.encoded;
    stats.skipped += static_cast<std::int64_t>(outcome.skipped.size());
    for (const SkippedFile& s : outcome.skipped) {
      if (static_cast<int>(stats.first_skipped.size()) < options.max_reported_skips) {
        stats.first_skipped.push_back(s);
      }
    }
  }

  void stop() {
    {
      std::lock_guard<std::mutex> lock(mutex);
      stopping = true;
    }
    work_ready.notify_all();
    batch_ready.notify_all();
    for (std::thread& t : threads) {
      if (t.joinable()) t.join();
    }
    threads.clear();
  }
};

CpuLoader::CpuLoader(std::vector<Sample> samples, const CpuLoaderOptions& options)
    : state_(std::make_unique<State>()) {
  options.validate();
  if (samples.empty()) throw ConfigError("CpuLoader: no samples to load");
  State& s = *state_;
  s.options = options;
  s.samples = std::move(samples);
  const auto n = static_cast<std::int64_t>(s.samples.size());
  s.per_rank = samples_per_rank(n, options.world_size, options.drop_last);
  s.per_epoch = options.drop_last_batch
                    ? s.per_rank / options.batch_size
                    : (s.per_rank + options.batch_size - 1) / options.batch_size;
  if (s.per_epoch == 0) {
    throw ConfigError("CpuLoaderOptions::batch_size", std::to_string(options.batch_size),
                      "gives no batch: each rank has " + std::to_string(s.per_rank) +
                          " samples per epoch and {drop_last_batch} is set");
  }
  s.total_batches = s.per_epoch * options.epochs;
  s.sample_bytes = options.transform.sample_bytes();
  s.image_bytes = round_up(s.sample_bytes * static_cast<std::size_t>(options.batch_size));
  s.slot_bytes = s.image_bytes + round_up(sizeof(std::int64_t) * options.batch_size);
  s.slots.resize(static_cast<std::size_t>(options.prefetch_batches) + 1);
  if (options.output == LoaderOutput::kEncoded) {
    for (State::Slot& slot : s.slots) {
      slot.view.encoded.resize(static_cast<std::size_t>(options.batch_size));
    }
  }
  try {
    for (State::Slot& slot : s.slots) slot.memory = options.allocator.allocate(s.slot_bytes);
  } catch (...) {
    for (State::Slot& slot : s.slots) {
      if (slot.memory != nullptr) options.allocator.release(slot.memory, s.slot_bytes);
    }
    throw;
  }
  s.stats.host_bytes = s.slot_bytes * s.slots.size();
  s.host_slots_now = s.host_slots(options.batch_size);
  if (options.output == LoaderOutput::kEncoded) {
    s.stats.host_share_now = static_cast<double>(s.host_slots_now) / options.batch_size;
  }
  const int threads = options.threads > 0
                          ? options.threads
                          : std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  s.stats.decode_seconds_per_thread.assign(static_cast<std::size_t>(threads), 0.0);
  s.stats.images_per_thread.assign(static_cast<std::size_t>(threads), 0);
  for (int t = 0; t < threads; ++t) s.threads.emplace_back([this, t] { state_->worker(t); });
}

CpuLoader::~CpuLoader() {
  State& s = *state_;
  s.stop();
  for (State::Slot& slot : s.slots) {
    if (slot.memory != nullptr) s.options.allocator.release(slot.memory, s.slot_bytes);
  }
}

const ImageBatch* CpuLoader::next() {
  State& s = *state_;
  std::unique_lock<std::mutex> lock(s.mutex);
  if (s.holding) {
    // The consumer is done with the previous batch: its buffer goes back to the pool.
    s.slot_of(s.delivered - 1).batch = -1;
    s.holding = false;
    s.work_ready.notify_all();
  }
  if (s.delivered >= s.total_batches) return nullptr;
  State::Slot& slot = s.slot_of(s.delivered);
  const auto ready = [&] { return slot.batch == s.delivered && slot.remaining == 0; };
  const bool waited = !ready();
  s.batch_ready.wait(lock, [&] { return s.stopping || ready(); });
  if (s.fatal) {
    const std::exception_ptr error = s.fatal;
    lock.unlock();
    s.stop();
    std::rethrow_exception(error);
  }
  if (s.stopping) return nullptr;
  if (slot.error) {
    const std::exception_ptr error = slot.error;
    lock.unlock();
    s.stop();
    std::rethrow_exception(error);
  }
  ++s.delivered;
  ++s.stats.batches_delivered;
  s.stats.samples_delivered += slot.view.size;
  if (s.options.output == LoaderOutput::kEncoded) {
    s.stats.host_share_slots += slot.host_slots;
    if (s.options.adaptive_host_share) {
      s.host_slots_now = next_host_slots(s.host_slots_now, s.options.batch_size, waited,
                                         s.threads_idle, std::exchange(s.device_ran_dry, false));
      s.stats.host_share_now = static_cast<double>(s.host_slots_now) / s.options.batch_size;
    }
  }
  // Threads that can start no batch now stay idle into the next interval.
  s.threads_idle = s.waiting_for_a_buffer();
  s.holding = true;
  return &slot.view;
}

void CpuLoader::device_ran_dry() {
  State& s = *state_;
  const std::lock_guard<std::mutex> lock(s.mutex);
  s.device_ran_dry = true;
}

int next_host_slots(int slots, int batch_size, bool consumer_waited, bool threads_idle,
                    bool device_ran_dry) {
  const int step = std::max(1, batch_size / 32);
  if (consumer_waited) return device_ran_dry ? std::max(0, slots - step) : slots;
  if (threads_idle || device_ran_dry) return std::min(batch_size, slots + step);
  return slots;
}

double host_share_between(const CpuLoaderStats& before, const CpuLoaderStats& after, double none) {
  const std::int64_t samples = after.samples_delivered - before.samples_delivered;
  if (samples <= 0) return none;
  return static_cast<double>(after.host_share_slots - before.host_share_slots) /
         static_cast<double>(samples);
}

CpuLoaderStats CpuLoader::stats() const {
  std::lock_guard<std::mutex> lock(state_->mutex);
  return state_->stats;
}

std::int64_t CpuLoader::batches_per_epoch() const { return state_->per_epoch; }

std::int64_t CpuLoader::samples_per_epoch() const { return state_->per_rank; }

std::size_t CpuLoader::host_bytes() const { return state_->stats.host_bytes; }

}  // namespace gpuperf
