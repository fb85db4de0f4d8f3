// The data set's samples and the epoch's order. The folder walk repeats torchvision 0.14's
// find_classes + make_dataset (os.scandir, sorted(os.walk(followlinks=True)), sorted file names),
// because a label that differs from PyTorch's for the same file would make an accuracy
// comparison meaningless without any error showing it.
#include "gpuperf/input/image_folder.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>
#include <system_error>
#include <utility>

#include "gpuperf/base/error.h"
#include "gpuperf/input/geometry.h"

namespace gpuperf {
namespace {

namespace fs = std::filesystem;

// is_dir() of os.scandir / os.walk: follows links, false on any error (a dangling link is a file).
bool is_folder(const fs::path& path) {
  std::error_code ec;
  return fs::is_directory(path, ec);
}

// The same for a listed entry: the type the listing gave (no stat per file, which counts with an
// ImageNet's 1.28 million files), a stat only for links.
bool is_folder(const fs::directory_entry& entry) {
  std::error_code ec;
  return entry.is_directory(ec);
}

// Every folder under `top` (top included, links followed, unreadable folders skipped as os.walk
// does) with its file names, as (root string, names).
void walk(const std::string& top,
          std::vector<std::pair<std::string, std::vector<std::string>>>& out,
          std::set<std::string>& visited, int depth) {
  // A link cycle would recurse forever (os.walk would too); the canonical path breaks it.
  std::error_code ec;
  const std::string canonical = fs::canonical(top, ec).string();
  if (ec || !visited.insert(canonical).second || depth > 64) return;
  fs::directory_iterator it(top, ec);
  if (ec) return;
  std::vector<std::string> files;
  std::vector<std::string> folders;
  for (const fs::directory_entry& entry : it) {
    const std::string name = entry.path().filename().string();
    (is_folder(entry) ? folders : files).push_back(name);
  }
  out.emplace_back(top, std::move(files));
  for (const std::string& folder : folders) {
    std::string path = top;
    path += '/';
    path += folder;
    walk(path, out, visited, depth + 1);
  }
}

std::string trim(const std::string& s) {
  const auto begin = s.find_first_not_of(" \t\r\n");
  if (begin == std::string::npos) return "";
  const auto end = s.find_last_not_of(" \t\r\n");
  return s.substr(begin, end - begin + 1);
}

}  // namespace

std::int64_t ImageFolder::num_classes() const {
  if (!class_names.empty()) return static_cast<std::int64_t>(class_names.size());
  std::int64_t largest = -1;
  for (const Sample& s : samples) largest = std::max(largest, s.label);
  return largest + 1;
}

bool has_jpeg_extension(const std::string& name) {
  std::string lower = name;
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  const auto ends_with = [&](const std::string& suffix) {
    return lower.size() >= suffix.size() &&
           lower.compare(lower.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  return ends_with(".jpg") || ends_with(".jpeg");
}

ImageFolder scan_image_folder(const std::string& root) {
  if (!is_folder(root)) {
    throw ConfigError("image folder", root, "not a readable folder");
  }
  std::error_code ec;
  fs::directory_iterator it(root, ec);
  if (ec) throw ConfigError("image folder", root, "cannot be listed: " + ec.message());
  ImageFolder data;
  data.root = root;
  for (const fs::directory_entry& entry : it) {
    if (is_folder(entry)) data.class_names.push_back(entry.path().filename().string());
  }
  // std::string compares as unsigned bytes: the order of Python's sorted() on the UTF-8 names.
  std::sort(data.class_names.begin(), data.class_names.end());
  if (data.class_names.empty()) {
    throw ConfigError("image folder", root, "has no class folders (one sub-folder per class)");
  }
  const std::string base =
      root.size() > 1 && root.back() == '/' ? root.substr(0, root.size() - 1) : root;
  for (std::size_t label = 0; label < data.class_names.size(); ++label) {
    std::vector<std::pair<std::string, std::vector<std::string>>> folders;
    std::set<std::string> visited;
    walk(base + "/" + data.class_names[label], folders, visited, 0);
    std::sort(folders.begin(), folders.end());
    std::size_t found = 0;
    for (auto& [folder, names] : folders) {
      std::sort(names.begin(), names.end());
      for (const std::string& name : names) {
        if (!has_jpeg_extension(name)) {
          ++data.other_files;
          continue;
        }
        std::string path = folder;
        path += '/';
        path += name;
        data.samples.push_back({std::move(path), static_cast<std::int64_t>(label)});
        ++found;
      }
    }
    if (found == 0) data.empty_classes.push_back(data.class_names[label]);
  }
  if (data.samples.empty()) {
    throw ConfigError("image folder", root,
                      "no JPEG file (.jpg, .jpeg) in its " +
                          std::to_string(data.class_names.size()) + " class folder(s)");
  }
  return data;
}

ImageFolder read_file_list(const std::string& list_path, const std::string& base) {
  std::ifstream in(list_path);
  if (!in) {
    throw IoError("file list " + list_path + ": cannot be read: " + std::strerror(errno));
  }
  const std::string folder = base.empty() ? fs::path(list_path).parent_path().string() : base;
  ImageFolder data;
  data.root = list_path;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    const std::string text = trim(line);
    if (text.empty() || text[0] == '#') continue;
    const std::string where = list_path + ":" + std::to_string(number);
    const auto space = text.find_last_of(" \t");
    if (space == std::string::npos) {
      throw ConfigError("file list", where, "expected '<path> <label>', got '" + text + "'");
    }
    const std::string path = trim(text.substr(0, space));
    const std::string label_text = text.substr(space + 1);
    const bool digits = !label_text.empty() && label_text.size() <= 10 &&
                        std::all_of(label_text.begin(), label_text.end(),
                                    [](unsigned char c) { return std::isdigit(c) != 0; });
    const long long label = digits ? std::stoll(label_text) : -1;
    if (label < 0 || label > 2147483647LL) {
      throw ConfigError("file list", where,
                        "the label must be an integer in 0..2147483647, got '" + label_text + "'");
    }
    const bool absolute = !path.empty() && path[0] == '/';
    std::string full = absolute || folder.empty() ? std::string() : folder + '/';
    full += path;
    data.samples.push_back({std::move(full), static_cast<std::int64_t>(label)});
  }
  if (in.bad()) throw IoError("file list " + list_path + ": read failed");
  if (data.samples.empty()) throw ConfigError("file list", list_path, "has no sample");
  return data;
}

void EpochOptions::validate() const {
  require_setting(epoch >= 0, "EpochOptions::epoch", epoch, ">= 0");
  require_setting(world_size >= 1, "EpochOptions::world_size", world_size, ">= 1");
  require_setting(rank >= 0 && rank < world_size, "EpochOptions::rank", rank,
                  "in 0..{world_size}-1");
}

std::vector<std::int64_t> epoch_permutation(std::int64_t n, std::uint64_t seed,
                                            std::int64_t epoch) {
  std::vector<std::int64_t> order(static_cast<std::size_t>(std::max<std::int64_t>(n, 0)));
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = static_cast<std::int64_t>(i);
  std::mt19937_64 engine(mix64(seed) ^ mix64(static_cast<std::uint64_t>(epoch) + 1));
  for (std::int64_t i = n - 1; i > 0; --i) {
    const std::uint64_t bound = static_cast<std::uint64_t>(i) + 1;
    const std::uint64_t reject_below = (0 - bound) % bound;  // 2^64 mod bound
    std::uint64_t draw = engine();
    while (draw < reject_below) draw = engine();
    std::swap(order[static_cast<std::size_t>(i)], order[draw % bound]);
  }
  return order;
}

std::int64_t samples_per_rank(std::int64_t n, int world_size, bool drop_last) {
  // DistributedSampler: ceil((n - w) / w) with drop_last and a remainder, which is floor(n / w).
  if (drop_last && n % world_size != 0) return n / world_size;
  return (n + world_size - 1) / world_size;
}

std::vector<std::int64_t> epoch_indices(std::int64_t n, const EpochOptions& options) {
  options.validate();
  std::vector<std::int64_t> order;
  if (options.shuffle) {
    order = epoch_permutation(n, options.seed, options.epoch);
  } else {
    order.resize(static_cast<std::size_t>(std::max<std::int64_t>(n, 0)));
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = static_cast<std::int64_t>(i);
  }
  const std::int64_t per_rank = samples_per_rank(n, options.world_size, options.drop_last);
  const std::int64_t total = per_rank * options.world_size;
  std::vector<std::int64_t> mine;
  if (n <= 0) return mine;
  mine.reserve(static_cast<std::size_t>(per_rank));
  // Position p of the padded (or cut) order is order[p mod n]: padding repeats from the start.
  for (std::int64_t p = options.rank; p < total; p += options.world_size) {
    mine.push_back(order[static_cast<std::size_t>(p % n)]);
  }
  return mine;
}

}  // namespace gpuperf
