// make_jpeg_folder: writes an ImageNet-like folder of generated JPEGs (one sub-folder per class)
// for measuring the input pipeline without ImageNet; --bad-files also plants the bad-input cases
// the loaders must survive. Torch-free: links gpuperf::core (libjpeg-turbo) only.
//
//   make_jpeg_folder --out /tmp/fake-imagenet --classes 10 --images-per-class 100 --seed 1
//   make_jpeg_folder --out /tmp/bad --classes 2 --images-per-class 3 --seed 1 --bad-files
#include <CLI/CLI.hpp>

#include <cmath>
#include <cstdint>
#include <iostream>
#include <string>

#include "gpuperf/input/synthetic_data.h"
#include "program.h"

int main(int argc, char** argv) try {
  CLI::App app("Writes an ImageNet-like folder of generated JPEGs", "make_jpeg_folder");
  gpuperf::SyntheticFolderOptions options;
  app.add_option("--out", options.out, "The folder to create (must not exist, or be empty)")
      ->required();
  app.add_option("--classes", options.classes, "Class folders")->capture_default_str();
  app.add_option("--images-per-class", options.images_per_class, "JPEG files per class")
      ->capture_default_str();
  app.add_option("--seed", options.seed, "Everything written follows from it")
      ->capture_default_str();
  app.add_option("--quality", options.quality, "libjpeg quality, 1..100")->capture_default_str();
  app.add_flag("--bad-files", options.bad_files,
               "Also plant the bad-input cases into class_0000 (truncated, corrupt, CMYK, "
               "grayscale, progressive, PNG named .jpg, empty, decompression bomb, unreadable) "
               "and an empty class folder");
  return gpuperf::program::run_program(app, argc, argv, [&] {
    // Checked before anything is written: a bad option leaves no folder behind.
    options.validate();
    const gpuperf::SyntheticFolderReport r = gpuperf::write_synthetic_folder(options);
    std::cout << "Wrote " << r.files << " JPEG files to " << options.out << ": mean "
              << static_cast<std::int64_t>(r.mean_file_bytes) << " bytes, mean size "
              << std::lround(r.mean_width) << " x " << std::lround(r.mean_height)
              << " pixels, quality " << options.quality << "\n";
    if (r.planted > 0) std::cout << "Planted " << r.planted << " bad-input files\n";
    return 0;
  });
} catch (...) {
  return gpuperf::program::setup_failed("make_jpeg_folder");
}
