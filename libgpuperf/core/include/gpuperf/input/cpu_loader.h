#pragma once
// The CPU input pipeline: a pool of threads reads, decodes and transforms JPEGs into batch
// buffers, a bounded number of batches ahead of the consumer, and hands the batches over in
// order. A batch's content depends only on (seed, epoch, position in the epoch): the same for
// any thread count and any timing. Bad files never crash the loader and never give a sample a
// wrong label: a bad file's slot is filled from the next file of the rank's epoch list that
// decodes (with the slot's own random crop), and the file is reported; `strict` makes the first
// bad file an error instead.
//
//   gpuperf::CpuLoaderOptions options;
//   options.batch_size = 256;
//   options.threads = 8;
//   options.seed = 42;
//   gpuperf::CpuLoader loader(gpuperf::scan_image_folder("/data/imagenet/train").samples,
//                             options);
//   while (const gpuperf::ImageBatch* batch = loader.next()) {
//     // batch->images: size x 224 x 224 x 3 floats (NHWC); batch->labels: size int64
//   }
//   const gpuperf::CpuLoaderStats stats = loader.stats();

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "gpuperf/input/image_file.h"
#include "gpuperf/input/image_folder.h"
#include "gpuperf/input/jpeg_decoder.h"

namespace gpuperf {

/// Where batch buffers come from. The default is 64-byte aligned pageable memory; the LibTorch
/// side supplies pinned host memory (cudaHostAlloc) so batches copy to the GPU asynchronously.
struct HostAllocator {
  /// Returns `bytes` bytes, 64-byte aligned (throws on failure).
  std::function<void*(std::size_t bytes)> allocate;
  /// Frees what allocate() returned.
  std::function<void(void* pointer, std::size_t bytes)> release;

  /// std::aligned_alloc / std::free.
  [[nodiscard]] static HostAllocator aligned();
};

/// What the loader's threads hand over for each sample.
enum class LoaderOutput {
  kPixels,  ///< decoded and transformed samples (ImageBatch::images)
  /// The file's bytes and the sample's plan (ImageBatch::encoded), for a GPU decoder; files a
  /// GPU decoder should not get (not baseline YCbCr with 3 components, or without an end
  /// marker) are decoded and transformed on the thread as in kPixels.
  kEncoded,
};

/// How a CpuLoader runs.
struct CpuLoaderOptions {
  int batch_size = 256;  ///< samples per batch (>= 1)
  int threads = 0;       ///< decoding threads; 0: std::thread::hardware_concurrency()
  /// Batches prepared ahead of the one the consumer holds (>= 1). Host memory is
  /// (prefetch_batches + 1) batch buffers (host_bytes()).
  int prefetch_batches = 2;
  std::uint64_t seed = 0;        ///< the shuffle and every sample's random crop follow from it
  std::int64_t first_epoch = 0;  ///< the first epoch delivered (>= 0)
  std::int64_t epochs = 1;       ///< epochs delivered (>= 1), back to back
  bool shuffle = true;           ///< a new permutation per epoch (epoch_permutation())
  int rank = 0;                  ///< this data-parallel rank, 0..world_size-1
  int world_size = 1;            ///< ranks sharing each epoch (DistributedSampler's sharding)
  bool drop_last = false;        ///< DistributedSampler's drop_last (see EpochOptions)
  bool drop_last_batch = false;  ///< leave out a last batch smaller than batch_size
  /// The first bad file is an error (BadImageError naming it, from next() at its batch)
  /// instead of being skipped and replaced.
  bool strict = false;
  ImageTransformOptions transform;              ///< training or validation transform, output type
  LoaderOutput output = LoaderOutput::kPixels;  ///< decoded samples or encoded files
  /// kEncoded: the share of each batch's slots (the first round(host_share x size)) the threads
  /// decode themselves even where a GPU decoder could, so that the host's cores and the GPU's
  /// decoder work on each batch side by side. 0..1; 0: only the files a GPU should not get.
  double host_share = 0;
  /// kEncoded: host_share is where the share starts, and each delivered batch moves it for the
  /// batches started from then on (next_host_slots()): fewer slots for the threads when next()
  /// had to wait for the batch and the device the batches feed ran out of work meanwhile
  /// (device_ran_dry(): the threads hold training back), more when a thread found no batch to
  /// start since the previous delivery or the device ran dry without next() waiting (the GPU
  /// decoder is behind). From a share of 1 the threads then decode as much of each batch as they
  /// can without the device running dry, and the GPU decoder the rest. Which slots the threads
  /// decode then depends on timing: a pixel may differ by the decoders' few levels between runs,
  /// and a file that only the GPU path decodes (damaged scan data past the crop) may be replaced
  /// on the host by the next good file, label and all. Crops and flips stay a function of the
  /// seed.
  bool adaptive_host_share = false;
  HostAllocator allocator = HostAllocator::aligned();  ///< the batch buffers
  int max_reported_skips = 16;  ///< skipped files listed in the stats (the count is complete)

  /// Throws ConfigError naming the first bad field: batch_size >= 1, threads 0..1024,
  /// prefetch_batches 1..64, first_epoch >= 0, epochs >= 1, 0 <= rank < world_size, host_share
  /// 0..1, the transform, an allocator with both functions.
  void validate() const;
};

/// One sample of a LoaderOutput::kEncoded batch.
struct EncodedSample {
  /// true: the thread decoded it (its pixels are in ImageBatch::images at its position); false:
  /// `bytes` holds the file for a GPU decoder.
  bool on_host = false;
  std::vector<std::uint8_t> bytes;  ///< the JPEG file (on_host false)
  std::string path;                 ///< where it was read (a GPU decoder's errors name it)
  JpegHeader header;                ///< the file's header
  SampleRandom random;              ///< the sample's draws (a decoder's fallback repeats them)
  SamplePlan plan;                  ///< sample_plan(header.height, header.width, transform, random)
};

/// A batch as next() hands it over; valid until the next call of next() (or the loader's end).
struct ImageBatch {
  std::int64_t epoch = 0;           ///< the epoch it belongs to
  std::int64_t index_in_epoch = 0;  ///< 0-based batch number within the epoch
  int size = 0;                     ///< samples (batch_size, or fewer for an epoch's last batch)
  /// size x crop_size x crop_size x 3 elements (NHWC) of the transform's SampleType.
  void* images = nullptr;
  std::int64_t* labels = nullptr;        ///< size labels
  std::vector<std::int64_t> sample_ids;  ///< the data-set index each slot holds
  int substituted = 0;                   ///< slots filled from another file because theirs was bad
  /// LoaderOutput::kEncoded: per slot, the file or the note that `images` holds it decoded.
  std::vector<EncodedSample> encoded;
};

/// A file that gave no sample.
struct SkippedFile {
  std::string path;       ///< the file
  BadImageReason reason;  ///< why
  std::string detail;     ///< the reader's or libjpeg's words
};

/// What the loader did so far.
struct CpuLoaderStats {
  std::int64_t images_decoded = 0;         ///< samples produced
  std::int64_t skipped = 0;                ///< failed decode attempts (a bad file counts each time)
  std::int64_t warnings = 0;               ///< libjpeg warnings in images that were kept
  std::int64_t bytes_read = 0;             ///< file bytes read
  std::int64_t decoded_pixels = 0;         ///< pixels libjpeg produced (after DCT scaling and crop)
  std::int64_t images_encoded = 0;         ///< kEncoded: samples handed over as files
  std::int64_t batches_delivered = 0;      ///< batches next() returned
  std::vector<SkippedFile> first_skipped;  ///< the first max_reported_skips skipped files
  /// Per thread: seconds spent reading, decoding and transforming (images_decoded / the sum is
  /// images per second per busy core).
  std::vector<double> decode_seconds_per_thread;
  std::vector<std::int64_t> images_per_thread;  ///< per thread: samples produced
  std::size_t host_bytes = 0;                   ///< batch buffer bytes held (images and labels)
  std::int64_t samples_delivered = 0;           ///< samples in the batches next() returned
  /// kEncoded: of those, the slots host_share gave the threads (files a GPU should not get
  /// are not counted unless in these slots); over samples_delivered, the share that ran.
  std::int64_t host_share_slots = 0;
  /// kEncoded: the host share for the next batch to start (adaptive_host_share: where it moved).
  double host_share_now = 0;
};

/// The share of the samples delivered between two stats() of one loader (`before` taken first)
/// that host_share gave the threads: the change in host_share_slots over the change in
/// samples_delivered; `none` where nothing was delivered between.
[[nodiscard]] double host_share_between(const CpuLoaderStats& before, const CpuLoaderStats& after,
                                        double none);

/// The host slots of the batches started after a delivery, under adaptive_host_share: `slots`
/// less `step` when the consumer waited for the delivered batch and the device ran dry since the
/// previous delivery (the threads hold training back); unchanged when the consumer waited and
/// the device kept working (the threads are the loader's pace, and it is enough); else more by
/// `step` when a thread found no batch to start since the previous delivery (the threads are
/// ahead) or the device ran dry (the GPU decoder is behind); else unchanged. Within
/// 0..batch_size; step = max(1, batch_size / 32).
[[nodiscard]] int next_host_slots(int slots, int batch_size, bool consumer_waited,
                                  bool threads_idle, bool device_ran_dry);

/// The loader. Threads start in the constructor; the destructor stops and joins them (a
/// consumer may stop early at any point).
class CpuLoader {
 public:
  /// Loads from `samples` (scan_image_folder() or read_file_list()). Throws ConfigError for bad
  /// options, no samples, or a rank share that gives no batch.
  CpuLoader(std::vector<Sample> samples, const CpuLoaderOptions& options);
  ~CpuLoader();
  CpuLoader(const CpuLoader&) = delete;
  CpuLoader& operator=(const CpuLoader&) = delete;

  /// The next batch in order, or nullptr after the last. Gives the previous batch's buffer back
  /// to the pool. Rethrows, at the batch where it happened, a BadImageError in strict mode and
  /// any error that is not a bad file (the loader is stopped then).
  const ImageBatch* next();
  /// The device the batches feed ran out of work while its thread waited for a batch (the GPU
  /// path reports it from the training thread): the next delivery's adaptive_host_share step
  /// takes it into account. Any thread.
  void device_ran_dry();
  /// What the loader did so far.
  [[nodiscard]] CpuLoaderStats stats() const;
  /// Batches in one epoch on this rank.
  [[nodiscard]] std::int64_t batches_per_epoch() const;
  /// Samples in one epoch on this rank (samples_per_rank()).
  [[nodiscard]] std::int64_t samples_per_epoch() const;
  /// Bytes of batch buffers held: (prefetch_batches + 1) x (images + labels).
  [[nodiscard]] std::size_t host_bytes() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace gpuperf
