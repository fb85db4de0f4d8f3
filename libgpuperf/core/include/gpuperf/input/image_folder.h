#pragma once
// The samples of an image data set and their order per epoch and rank. A folder is read as
// torchvision's ImageFolder reads it (one sub-folder per class, labels by sorted class name,
// files in sorted order), so that a label here is the label PyTorch gives the same file; a file
// list gives the labels itself. The epoch's order is a seeded shuffle that is the same on every
// machine and standard library, and sharding follows torch.utils.data.DistributedSampler.
//
//   const gpuperf::ImageFolder data = gpuperf::scan_image_folder("/data/imagenet/train");
//   gpuperf::EpochOptions epoch;
//   epoch.seed = 42;
//   epoch.epoch = 3;
//   epoch.rank = 1;
//   epoch.world_size = 8;
//   for (std::int64_t i : gpuperf::epoch_indices(data.samples.size(), epoch)) {
//     const gpuperf::Sample& s = data.samples[i];  // s.path, s.label
//   }

#include <cstdint>
#include <string>
#include <vector>

namespace gpuperf {

/// One image file and its class.
struct Sample {
  std::string path;        ///< the file, as found (root joined with the relative path)
  std::int64_t label = 0;  ///< the class index, 0-based
};

/// A data set: its samples and classes.
struct ImageFolder {
  std::string root;                      ///< the folder scanned, or the file list read
  std::vector<std::string> class_names;  ///< by label; empty for a file list
  std::vector<Sample> samples;           ///< in ImageFolder's order (class, then sorted path)
  /// Class folders without one JPEG file. They keep their label (as torchvision's class_to_idx
  /// does), so that the other labels match PyTorch's; torchvision refuses such a folder, gpuperf
  /// reports it.
  std::vector<std::string> empty_classes;
  /// Files skipped at the scan because of their extension (not .jpg/.jpeg).
  std::int64_t other_files = 0;

  /// The number of classes (class_names.size(), or 1 + the largest label of a file list).
  [[nodiscard]] std::int64_t num_classes() const;
};

/// Whether `name` ends in .jpg or .jpeg, in any case (torchvision's IMG_EXTENSIONS check,
/// `filename.lower().endswith(...)`, restricted to JPEG).
[[nodiscard]] bool has_jpeg_extension(const std::string& name);

/// Reads an ImageNet-style folder like torchvision.datasets.ImageFolder: classes are the
/// sub-folders of `root` (symbolic links followed), sorted by name as bytes (Python's sorted()
/// of the names), label = position; each class folder is walked recursively (links followed),
/// the folders in sorted path order, the files of each sorted by name, keeping the names that
/// has_jpeg_extension() accepts. Files are not opened: a bad file is found when it is decoded.
/// Throws ConfigError naming the folder when it is not a readable folder, has no class folders,
/// or no JPEG file at all.
[[nodiscard]] ImageFolder scan_image_folder(const std::string& root);

/// Reads a file list: one "<path> <label>" per line (the label is the last field, so a path may
/// hold spaces; blank lines and lines starting with '#' are skipped). A relative path is taken
/// relative to `base` (default: the list's folder). Throws IoError when the list cannot be read
/// and ConfigError naming "<list>:<line>" for a line without a label or with a label that is
/// not an integer in 0..2^31-1, and when the list has no sample.
[[nodiscard]] ImageFolder read_file_list(const std::string& list_path,
                                         const std::string& base = "");

/// Which samples an epoch visits on a rank, and in which order.
struct EpochOptions {
  std::uint64_t seed = 0;  ///< the run's seed
  std::int64_t epoch = 0;  ///< the epoch (>= 0): a new order each epoch, like set_epoch()
  bool shuffle = true;     ///< false: the samples in data-set order
  int rank = 0;            ///< this rank, 0..world_size-1
  int world_size = 1;      ///< data-parallel ranks sharing the epoch (>= 1)
  /// DistributedSampler's drop_last: false pads the epoch by repeating its first samples until
  /// every rank has ceil(n / world_size); true drops the tail so that every rank has
  /// floor(n / world_size) and no sample appears twice.
  bool drop_last = false;

  /// Throws ConfigError naming the first bad field: epoch >= 0, world_size >= 1, 0 <= rank <
  /// world_size.
  void validate() const;
};

/// The epoch's permutation of 0..n-1: std::mt19937_64 (whose output the C++ standard fixes)
/// seeded with mix64(seed) ^ mix64(epoch + 1), and a Fisher-Yates shuffle from the last
/// position down, each swap partner drawn without bias by rejection (a draw below 2^64 mod m is
/// redrawn, then taken mod m). std::shuffle is not used: its draws differ between standard
/// libraries.
[[nodiscard]] std::vector<std::int64_t> epoch_permutation(std::int64_t n, std::uint64_t seed,
                                                          std::int64_t epoch);

/// The sample indices of `options.rank` for the epoch, as DistributedSampler(shuffle, seed,
/// drop_last) gives them with this library's permutation: the epoch's order (shuffled or not),
/// padded by repetition or cut to num_samples * world_size, then every world_size-th position
/// starting at rank. The ranks' lists are disjoint (without padding) and have equal lengths.
[[nodiscard]] std::vector<std::int64_t> epoch_indices(std::int64_t n, const EpochOptions& options);

/// The length of each rank's list for `n` samples: ceil(n / world_size), or with drop_last
/// floor(n / world_size).
[[nodiscard]] std::int64_t samples_per_rank(std::int64_t n, int world_size, bool drop_last);

}  // namespace gpuperf
