#include "gpuperf/comm/launch_env.h"

#include <cstdlib>
#include <string>
#include <string_view>

#include "gpuperf/base/error.h"

namespace gpuperf {
namespace {

// The variables one launcher sets, by meaning.
struct LauncherVariables {
  const char* launcher;
  const char* rank;
  const char* world_size;
  const char* local_rank;
  const char* local_world_size;
};

constexpr LauncherVariables kTorchrun{"torchrun", "RANK", "WORLD_SIZE", "LOCAL_RANK",
                                      "LOCAL_WORLD_SIZE"};
constexpr LauncherVariables kMpi{"mpi", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE",
                                 "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_SIZE"};
// SLURM_NTASKS_PER_NODE can read "4(x2)"; one node (SLURM_NNODES=1) is what matters here.
constexpr LauncherVariables kSlurm{"slurm", "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID",
                                   nullptr};

class Environment {
 public:
  explicit Environment(const EnvironmentReader& getenv) : getenv_(getenv) {}

  [[nodiscard]] bool has(const char* name) const { return getenv_(name) != nullptr; }

  // An integer variable in [low, high]; ConfigError naming it otherwise.
  [[nodiscard]] int integer(const char* name, long low, long high) const {
    const char* text = getenv_(name);
    if (text == nullptr) throw ConfigError(std::string(name) + " is not set");
    // Digits only: strtol would take " +0" or "0x1" as numbers no launcher writes.
    const std::string_view digits(text);
    const bool plain = !digits.empty() && digits.size() <= 18 &&
                       digits.find_first_not_of("0123456789") == std::string_view::npos;
    char* end = nullptr;
    const long value = plain ? std::strtol(text, &end, 10) : -1;
    if (!plain || value < low || value > high) {
      throw ConfigError(std::string(name) + "='" + text + "': expected an integer in " +
                        std::to_string(low) + ".." + std::to_string(high));
    }
    return static_cast<int>(value);
  }

  [[nodiscard]] int integer_or(const char* name, int fallback, long low, long high) const {
    return has(name) ? integer(name, low, high) : fallback;
  }

  [[nodiscard]] std::string string_or(const char* name, const std::string& fallback) const {
    const char* text = getenv_(name);
    return text != nullptr && *text != '\0' ? std::string(text) : fallback;
  }

 private:
  const EnvironmentReader& getenv_;
};

constexpr long kMaxRanks = 1 << 20;

// torchrun's static rendezvous (its default, unless told standalone or a c10d rendezvous): the
// agent already serves the TCPStore at MASTER_ADDR:MASTER_PORT, and its workers share it under a
// prefix per restart (torch/distributed/rendezvous.py, _create_c10d_store).
constexpr const char* kUseAgentStore = "TORCHELASTIC_USE_AGENT_STORE";
constexpr const char* kRestartCount = "TORCHELASTIC_RESTART_COUNT";

void read_agent_store(const Environment& env, LaunchEnv& out) {
  const std::string use = env.string_or(kUseAgentStore, "False");
  if (use != "True" && use != "False") {
    throw ConfigError(std::string(kUseAgentStore) + "='" + use + "': expected True or False");
  }
  out.agent_store = use == "True";
  if (!out.agent_store) return;
  if (!env.has(kRestartCount)) {
    throw ConfigError(std::string(kUseAgentStore) + " is True but " + kRestartCount +
                      " is not set (launcher torchrun)");
  }
  out.store_prefix = "/worker/attempt_" + std::to_string(env.integer(kRestartCount, 0, 1L << 30));
}

// The launcher's name for the job, where it gives one: two jobs that meet on one MASTER_PORT
// (a stale port, a copied script) then refuse each other instead of training together.
std::string job_identity(const Environment& env) {
  if (std::string id = env.string_or("GPUPERF_JOB_ID", ""); !id.empty()) return id;
  if (const std::string id = env.string_or("TORCHELASTIC_RUN_ID", ""); !id.empty() && id != "none")
    return "torchrun:" + id;
  if (const std::string id = env.string_or("SLURM_JOB_ID", ""); !id.empty())
    return "slurm:" + id + "." + env.string_or("SLURM_STEP_ID", "");
  if (const std::string id = env.string_or("OMPI_MCA_ess_base_jobid", ""); !id.empty())
    return "mpi:" + id;
  return "";
}

LaunchEnv read_launcher(const Environment& env, const LauncherVariables& v) {
  LaunchEnv out;
  out.launcher = v.launcher;
  if (!env.has(v.world_size)) {
    throw ConfigError(std::string(v.rank) + " is set but " + v.world_size + " is not (launcher " +
                      v.launcher + ")");
  }
  out.world_size = env.integer(v.world_size, 1, kMaxRanks);
  out.rank = env.integer(v.rank, 0, out.world_size - 1);
  if (out.world_size == 1) return out;  // a single process: nothing to join
  // Every rank on this machine, as far as the launcher says; unknown (0) counts as several.
  out.local_world_size = 0;
  if (v.local_world_size != nullptr && env.has(v.local_world_size)) {
    out.local_world_size = env.integer(v.local_world_size, 1, out.world_size);
  } else if (env.has("SLURM_NNODES") && env.integer("SLURM_NNODES", 1, kMaxRanks) == 1) {
    out.local_world_size = out.world_size;
  }
  const bool one_machine = out.local_world_size == out.world_size;
  out.local_rank = env.integer_or(v.local_rank, 0, 0, out.world_size - 1);
  if (out.local_world_size > 0 && out.local_rank >= out.local_world_size) {
    throw ConfigError(
        std::string(v.local_rank) + "=" + std::to_string(out.local_rank) + " is not below the " +
        std::to_string(out.local_world_size) + " ranks on this machine (" +
        (v.local_world_size != nullptr ? v.local_world_size : "SLURM_NNODES=1") + ")");
  }
  out.master_port = env.integer_or("MASTER_PORT", 29500, 1, 65535);
  out.master_addr = env.string_or("MASTER_ADDR", "");
  if (out.master_addr.empty()) {
    if (!one_machine) {
      throw ConfigError(std::string("MASTER_ADDR is not set, and the ") + v.launcher +
                        " variables do not say that every rank runs on this machine: give rank "
                        "0's address (docs/distributed.md)");
    }
    out.master_addr = "127.0.0.1";  // every rank on this machine
  }
  return out;
}

}  // namespace

std::optional<LaunchEnv> read_launch_env(const EnvironmentReader& getenv) {
  const EnvironmentReader reader =
      getenv ? getenv : EnvironmentReader([](const char* name) { return std::getenv(name); });
  const Environment env(reader);
  // The innermost launcher wins: torchrun inside an srun or mpirun step sets RANK for its own
  // workers, and mpirun inside an sbatch allocation inherits the batch step's SLURM_PROCID.
  for (const LauncherVariables* v : {&kTorchrun, &kMpi, &kSlurm}) {
    // A world of several processes without this one's rank is a launch gone wrong, never a
    // single-process run (Slurm's allocation sets SLURM_NTASKS for the batch script too).
    if (!env.has(v->rank) && v != &kSlurm && env.has(v->world_size) &&
        env.string_or(v->world_size, "1") != "1") {
      throw ConfigError(std::string(v->world_size) + "='" + env.string_or(v->world_size, "") +
                        "' is set but " + v->rank + " is not (launcher " + v->launcher + ")");
    }
    if (!env.has(v->rank)) continue;
    LaunchEnv e = read_launcher(env, *v);
    if (e.world_size == 1) return std::nullopt;  // a one-task job is a single process
    // gpuperf's own launcher sets torchrun's variables and says so.
    if (v == &kTorchrun && env.string_or("GPUPERF_LAUNCHER", "") == "gpuperf")
      e.launcher = "gpuperf";
    if (e.launcher == "torchrun") read_agent_store(env, e);
    e.job_id = job_identity(env);
    return e;
  }
  return std::nullopt;
}

}  // namespace gpuperf
