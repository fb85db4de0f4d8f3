#pragma once
// --nproc-per-node N: gpuperf as its own launcher, for users without torchrun. Starts N copies
// of this program with torchrun's variables (RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE,
// MASTER_ADDR=127.0.0.1, MASTER_PORT=a free port, and OMP_NUM_THREADS = cores / N unless set)
// and waits for them; when one fails, the others are stopped (SIGTERM, then SIGKILL after a
// grace period) and the failure is named.

#include <ostream>
#include <string>
#include <vector>

namespace gpuperf::program {

/// argv without `option` and its value ("--opt N" or "--opt=N").
[[nodiscard]] std::vector<std::string> strip_option(int argc, const char* const* argv,
                                                    const std::string& option);

/// Runs `args` (args[0] is replaced by this executable) as `nproc` local ranks and returns the
/// exit code: 0 when all succeed, else the first failing rank's code (1 when it was killed by a
/// signal), after one line on `err` naming the rank, its pid and how it ended.
int launch_local_ranks(const std::vector<std::string>& args, int nproc, std::ostream& err);

}  // namespace gpuperf::program
