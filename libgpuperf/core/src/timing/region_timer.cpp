#include "gpuperf/timing/region_timer.h"

#include <string>

#include "gpuperf/base/error.h"

namespace gpuperf {

RegionTimer::RegionTimer(Timer& timer) : timer_(timer) { timer_.clear(); }

std::size_t RegionTimer::region_index(std::string_view name) {
  for (std::size_t i = 0; i < names_.size(); ++i) {
    if (names_[i] == name) return i;
  }
  names_.emplace_back(name);
  open_mark_.push_back(-1);
  return names_.size() - 1;
}

void RegionTimer::begin(std::string_view name) {
  const std::size_t region = region_index(name);
  if (open_mark_[region] >= 0) {
    throw ConfigError("RegionTimer: region '" + std::string(name) + "' is already open");
  }
  const std::size_t mark = timer_.mark();
  if (!started_) {
    started_ = true;
    first_mark_ = mark;
  }
  open_mark_[region] = static_cast<long>(mark);
}

void RegionTimer::end(std::string_view name) {
  const std::size_t region = region_index(name);
  if (open_mark_[region] < 0) {
    throw ConfigError("RegionTimer: region '" + std::string(name) + "' is not open");
  }
  intervals_.push_back({region, static_cast<std::size_t>(open_mark_[region]), timer_.mark()});
  open_mark_[region] = -1;
}

void RegionTimer::step_done(double samples) {
  const std::size_t mark = timer_.mark();
  if (!started_) {
    started_ = true;
    first_mark_ = mark;
  }
  last_step_mark_ = mark;
  ++steps_;
  samples_ += samples;
}

RegionTimer::Scope::Scope(RegionTimer& owner, std::string_view name) : owner_(owner), name_(name) {
  owner_.begin(name_);
}

// A destructor must not throw. A failed end() leaves the region open, and summary() says so; a
// region already ended by hand needs nothing more.
RegionTimer::Scope::~Scope() {
  try {
    owner_.end(name_);
  } catch (...) {
    // Nothing to add: see above.
  }
}

RegionSummary RegionTimer::summary() const {
  for (std::size_t i = 0; i < names_.size(); ++i) {
    if (open_mark_[i] >= 0) {
      throw ConfigError("RegionTimer: region '" + names_[i] + "' is still open");
    }
  }
  RegionSummary out;
  out.steps = steps_;
  out.samples = samples_;
  if (steps_ > 0) out.seconds = timer_.seconds(first_mark_, last_step_mark_);
  if (out.seconds > 0) out.throughput = samples_ / out.seconds;

  std::vector<std::vector<double>> per_region(names_.size());
  for (const Interval& interval : intervals_) {
    per_region[interval.region].push_back(timer_.seconds(interval.begin_mark, interval.end_mark));
  }
  for (std::size_t i = 0; i < names_.size(); ++i) {
    RegionSummary::Region region;
    region.name = names_[i];
    region.calls = per_region[i].size();
    for (double s : per_region[i]) region.total_seconds += s;
    if (!per_region[i].empty()) region.per_call = summarize(per_region[i]);
    if (out.seconds > 0) region.share = region.total_seconds / out.seconds;
    out.regions.push_back(std::move(region));
  }
  return out;
}

}  // namespace gpuperf
