#pragma once
// Request scheduling policies of an HBM channel queue (approximately-timed mode), chosen by the
// `hbm.scheduler.impl` key and built by makeDramScheduler() from an explicit table.

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace scoville::hw {

/// Contract: given a non-empty queue of `queued` parts in arrival order (index 0 is the oldest)
/// and a predicate telling whether part i would hit an open row, return the index of the part the
/// channel serves next. Must be deterministic and must not starve: returning 0 always is valid.
class DramScheduler {
 public:
  virtual ~DramScheduler() = default;
  virtual std::size_t pick(std::size_t queued, const std::function<bool(std::size_t)>& isRowHit) const = 0;
};

/// Builds the policy named `name` ("fcfs", "frfcfs"); throws std::invalid_argument otherwise.
std::unique_ptr<DramScheduler> makeDramScheduler(const std::string& name);
/// The names makeDramScheduler() accepts, for the configuration schema.
const std::vector<std::string>& dramSchedulerNames();

}  // namespace scoville::hw
