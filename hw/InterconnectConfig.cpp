#include "hw/InterconnectConfig.h"

namespace scoville::hw {

using namespace scoville::config;

const Schema<InterconnectConfig>& InterconnectConfig::schema() {
  static const Schema<InterconnectConfig> s =
      Schema<InterconnectConfig>("interconnect", "On-chip network between the chip's units.")
          .quantity("hop_latency", &InterconnectConfig::hopLatencyS, dim::kTime, required(), nonNegative(),
                    "latency of one traversal; a transaction pays it to the unit and back")
          .quantity("bandwidth", &InterconnectConfig::bandwidthBytesPerS, dim::kBandwidth, required(), positive(),
                    "data rate of the port to each unit (HBM, SRAM): transfers through it share it");
  return s;
}

}  // namespace scoville::hw
