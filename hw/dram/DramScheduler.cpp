#include "hw/dram/DramScheduler.h"

#include <utility>

#include "hw/dram/PolicyTable.h"

namespace scoville::hw {

namespace {

/// First come, first served: the oldest part.
class Fcfs : public DramScheduler {
 public:
  std::size_t pick(std::size_t, const std::function<bool(std::size_t)>&) const override { return 0; }
};

/// First ready, first come first served: the oldest part that hits an open row, else the oldest.
class FrFcfs : public DramScheduler {
 public:
  std::size_t pick(std::size_t queued, const std::function<bool(std::size_t)>& isRowHit) const override {
    for (std::size_t i = 0; i < queued; ++i) {
      if (isRowHit(i)) return i;
    }
    return 0;
  }
};

using SchedulerFactory = std::unique_ptr<DramScheduler> (*)();
const PolicyTable<SchedulerFactory>& schedulers() {
  static const PolicyTable<SchedulerFactory> kRegistry{
      {"fcfs", [] { return std::unique_ptr<DramScheduler>(new Fcfs()); }},
      {"frfcfs", [] { return std::unique_ptr<DramScheduler>(new FrFcfs()); }},
  };
  return kRegistry;
}

}  // namespace

std::unique_ptr<DramScheduler> makeDramScheduler(const std::string& name) {
  return policyFactory(schedulers(), name, "HBM scheduler")();
}

const std::vector<std::string>& dramSchedulerNames() {
  static const std::vector<std::string> kNames = policyNames(schedulers());
  return kNames;
}

}  // namespace scoville::hw
