#include <chrono>
#include <string>
#include <vector>

#include "gpuperf/base/error.h"
#include "gpuperf/timing/timer.h"

namespace gpuperf {
namespace {

class SteadyClockTimer final : public Timer {
 public:
  std::size_t mark() override {
    marks_.push_back(std::chrono::steady_clock::now());
    return marks_.size() - 1;
  }
  double seconds(std::size_t from, std::size_t to) override {
    if (from >= marks_.size() || to >= marks_.size()) {
      throw ConfigError("SteadyClockTimer: no such mark " + std::to_string(std::max(from, to)));
    }
    return std::chrono::duration<double>(marks_[to] - marks_[from]).count();
  }
  void clear() override { marks_.clear(); }
  [[nodiscard]] std::size_t size() const override { return marks_.size(); }
  [[nodiscard]] std::string name() const override { return "steady-clock"; }

 private:
  std::vector<std::chrono::steady_clock::time_point> marks_;
};

}  // namespace

std::unique_ptr<Timer> make_steady_clock_timer() { return std::make_unique<SteadyClockTimer>(); }

}  // namespace gpuperf
