#include "hw/dram/DataBus.h"

#include "hw/dram/AddressDecoder.h"

namespace scoville::hw {

DataBus::DataBus(const MemoryControllerConfig& config)
    : m_t(config.timing),
      m_burstBytes(static_cast<uint64_t>(config.burstBytes)),
      m_burstShift(log2Exact(m_burstBytes)),
      // Reciprocals and integer bursts: divisions here were a third of a segment's cost.
      m_secondsPerBurst(config.burstBytes / config.channelBandwidth()) {}

}  // namespace scoville::hw
