#include "torch_version.h"

#include "gpuperf/device/device.h"
#include "program.h"

namespace gpuperf::program {

void add_torch_version_flag(CLI::App& app) {
  // A callback: the versions are read only when --version is asked for.
  app.set_version_flag("--version",
                       [name = app.get_name()] { return version_text(name, software_versions()); });
}

}  // namespace gpuperf::program
