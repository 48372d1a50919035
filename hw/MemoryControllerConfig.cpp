#include "hw/MemoryControllerConfig.h"

#include <cmath>

namespace scoville::hw {

using namespace scoville::config;

const Schema<MemoryControllerConfig>& MemoryControllerConfig::schema() {
  static const Schema<MemoryControllerConfig> s =
      Schema<MemoryControllerConfig>("hbm", "High-bandwidth memory behind one controller, split into channels.")
          .quantity("capacity", &MemoryControllerConfig::capacityBytes, dim::kBytes, required(), positive(),
                    "usable capacity")
          .quantity("bandwidth", &MemoryControllerConfig::bandwidthBytesPerS, dim::kBandwidth, required(), positive(),
                    "aggregate peak bandwidth of all channels")
          .integer("channels", &MemoryControllerConfig::channels, required(), between(1, 4096),
                   "independent channels (or pseudo-channels) sharing the bandwidth equally")
          .quantity("interleave", &MemoryControllerConfig::interleaveBytes, dim::kBytes, optional("256 B"),
                    between(32, 1 << 20), "address interleaving granule across channels")
          .quantity("access_latency", &MemoryControllerConfig::accessLatencyS, dim::kTime, required(), nonNegative(),
                    "latency from request to first data (row activation, CAS, PHY), overlapped across requests")
          .rule("interleave", "interleave must be a whole number of bytes",
                [](const MemoryControllerConfig& c) { return std::floor(c.interleaveBytes) == c.interleaveBytes; });
  return s;
}

}  // namespace scoville::hw
