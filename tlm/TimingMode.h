#pragma once

#include <string>
#include <utility>
#include <vector>

namespace scoville::tlm {

/// How initiators talk to targets. Chosen per run (`scoville run --timing`).
enum class TimingMode {
  kLooselyTimed,        ///< b_transport with time annotation and a quantum keeper: fast; contention
                        ///< resolved in call order
  kApproximatelyTimed,  ///< nb_transport with the four-phase base protocol: queues, scheduling
                        ///< policies and backpressure act at simulated time
};

inline const std::vector<std::pair<std::string, TimingMode>>& timingModeNames() {
  static const std::vector<std::pair<std::string, TimingMode>> kNames{{"lt", TimingMode::kLooselyTimed},
                                                                      {"at", TimingMode::kApproximatelyTimed}};
  return kNames;
}

}  // namespace scoville::tlm
