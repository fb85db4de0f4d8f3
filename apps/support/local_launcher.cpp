#include "local_launcher.h"

#include <sys/prctl.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>  // NOLINT(modernize-deprecated-headers): sigaction is POSIX, not <csignal>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include "gpuperf/base/error.h"

namespace gpuperf::program {
namespace {

volatile std::sig_atomic_t g_stop_signal = 0;

extern "C" void remember_signal(int signal) { g_stop_signal = signal; }

// A port the kernel says is free now (the ranks bind it a moment later; a clash fails loudly
// at the rendezvous, never silently).
int free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) throw Error("--nproc-per-node: cannot open a socket to find a free port");
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = 0;
  socklen_t length = sizeof address;
  const bool ok = ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0 &&
                  ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0;
  ::close(fd);
  if (!ok) throw Error("--nproc-per-node: cannot find a free port on 127.0.0.1");
  return ntohs(address.sin_port);
}

[[noreturn]] void exec_rank(const std::vector<std::string>& args, int rank, int nproc, int port,
                            pid_t launcher) {
  // A rank ends with its launcher, however the launcher ends (SIGKILL included): SIGTERM, whose
  // handler removes the rank's temporary files, so that no rank runs on, or writes a result,
  // after the job is gone. The setting survives execv; a launcher that died before it took
  // effect is seen by the parent check.
  ::prctl(PR_SET_PDEATHSIG, SIGTERM);
  if (::getppid() != launcher) ::_exit(128 + SIGTERM);
  const std::string world = std::to_string(nproc);
  ::setenv("RANK", std::to_string(rank).c_str(), 1);
  ::setenv("LOCAL_RANK", std::to_string(rank).c_str(), 1);
  ::setenv("WORLD_SIZE", world.c_str(), 1);
  ::setenv("LOCAL_WORLD_SIZE", world.c_str(), 1);
  ::setenv("MASTER_ADDR", "127.0.0.1", 1);
  ::setenv("MASTER_PORT", std::to_string(port).c_str(), 1);
  ::setenv("GPUPERF_LAUNCHER", "gpuperf", 1);
  // This job's identity in the store: a rank of another job on the same port is refused.
  ::setenv("GPUPERF_JOB_ID",
           ("gpuperf-" + std::to_string(launcher) + "-" + std::to_string(port)).c_str(), 1);
  // As torchrun does: ranks that each took every core would fight over them (CPU ranks,
  // data loading); the user's own setting stands.
  const long cores = ::sysconf(_SC_NPROCESSORS_ONLN);
  ::setenv("OMP_NUM_THREADS", std::to_string(std::max(1L, cores / nproc)).c_str(), 0);
  std::vector<char*> argv;
  argv.reserve(args.size() + 1);
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  ::execv("/proc/self/exe", argv.data());
  ::_exit(127);
}

std::string how_it_ended(int status) {
  if (WIFSIGNALED(status)) return "was killed by signal " + std::to_string(WTERMSIG(status));
  return "exited with code " + std::to_string(WEXITSTATUS(status));
}

void stop_all(const std::vector<pid_t>& pids, const std::vector<bool>& running) {
  for (std::size_t i = 0; i < pids.size(); ++i) {
    if (running[i]) ::kill(pids[i], SIGTERM);
  }
}

}  // namespace

std::vector<std::string> strip_option(int argc, const char* const* argv,
                                      const std::string& option) {
  std::vector<std::string> out;
  for (int i = 0; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == option) {
      ++i;  // and its value
      continue;
    }
    if (a.rfind(option + "=", 0) == 0) continue;
    out.push_back(a);
  }
  return out;
}

int launch_local_ranks(const std::vector<std::string>& args, int nproc, std::ostream& err) {
  const int port = free_port();
  // While the ranks run, a stop signal is passed on to them (each removes its own temporary
  // files and says so); afterwards the program's own handlers (run_program()) are back.
  struct sigaction remember {};
  remember.sa_handler = remember_signal;
  sigemptyset(&remember.sa_mask);
  constexpr int kForwarded[] = {SIGINT, SIGTERM, SIGHUP};
  struct sigaction previous[std::size(kForwarded)]{};
  for (std::size_t i = 0; i < std::size(kForwarded); ++i) {
    ::sigaction(kForwarded[i], nullptr, &previous[i]);
    if (previous[i].sa_handler != SIG_IGN) ::sigaction(kForwarded[i], &remember, nullptr);
  }
  std::vector<pid_t> pids;
  std::vector<bool> running;
  const pid_t parent = ::getpid();
  for (int rank = 0; rank < nproc; ++rank) {
    const pid_t pid = ::fork();
    if (pid < 0) {
      stop_all(pids, running);
      throw Error("--nproc-per-node: fork failed for rank " + std::to_string(rank));
    }
    if (pid == 0) exec_rank(args, rank, nproc, port, parent);
    pids.push_back(pid);
    running.push_back(true);
  }
  int exit_code = 0;
  int alive = nproc;
  bool stopping = false;
  auto stop_deadline = std::chrono::steady_clock::time_point::max();
  constexpr auto kGrace = std::chrono::seconds(10);
  while (alive > 0) {
    int status = 0;
    const pid_t pid = ::waitpid(-1, &status, WNOHANG);
    if (pid > 0) {
      for (std::size_t rank = 0; rank < pids.size(); ++rank) {
        if (pids[rank] != pid) continue;
        running[rank] = false;
        --alive;
        const bool failed = !(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        if (failed && !stopping) {
          err << "gpuperf launcher: rank " << rank << " (pid " << pid << ") "
              << how_it_ended(status) << "; stopping the other ranks\n";
          exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 1;
          stopping = true;
          stop_deadline = std::chrono::steady_clock::now() + kGrace;
          stop_all(pids, running);
        }
      }
      continue;
    }
    if (g_stop_signal != 0 && !stopping) {
      err << "gpuperf launcher: signal " << g_stop_signal << "; stopping the ranks\n";
      exit_code = 128 + g_stop_signal;
      stopping = true;
      stop_deadline = std::chrono::steady_clock::now() + kGrace;
      stop_all(pids, running);
    }
    if (stopping && std::chrono::steady_clock::now() > stop_deadline) {
      for (std::size_t i = 0; i < pids.size(); ++i) {
        if (running[i]) ::kill(pids[i], SIGKILL);
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  for (std::size_t i = 0; i < std::size(kForwarded); ++i) {
    ::sigaction(kForwarded[i], &previous[i], nullptr);
  }
  return exit_code;
}

}  // namespace gpuperf::program
