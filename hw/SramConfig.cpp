#include "hw/SramConfig.h"

namespace scoville::hw {

using namespace scoville::config;

const Schema<SramConfig>& SramConfig::schema() {
  static const Schema<SramConfig> s =
      Schema<SramConfig>("sram", "On-chip SRAM staging operands between HBM and the tensor cores.")
          .quantity("capacity", &SramConfig::capacityBytes, dim::kBytes, required(), positive(),
                    "capacity; the decode driver stages operands in it")
          .integer("banks", &SramConfig::banks, required(), between(1, 4096), "independently accessed banks")
          .quantity("interleave", &SramConfig::interleaveBytes, dim::kBytes, optional("64 B"), between(8, 1 << 20),
                    "address interleaving granule across banks")
          .quantity("bandwidth", &SramConfig::bandwidthBytesPerS, dim::kBandwidth, required(), positive(),
                    "aggregate bandwidth of all banks")
          .quantity("latency", &SramConfig::latencyS, dim::kTime, required(), nonNegative(), "access latency")
          .integer("staging_buffers", &SramConfig::stagingBuffers, optional("2"), between(2, 64),
                   "buffers the capacity is split into; 2 = double buffering (one computes, one loads)")
          .choice("load_issue", &SramConfig::loadIssue,
                  {{"overlapped", LoadIssue::kOverlapped}, {"serial", LoadIssue::kSerial}}, optional("overlapped"),
                  "how the load stream sends a tile's HBM requests: overlapped (a DMA engine: once a staging "
                  "buffer is free, while earlier tiles' data is still in flight, so each HBM channel works through "
                  "its queue) or serial (each request once the previous one's data is in: kernels one after "
                  "another, as the GPU chips are calibrated)");
  return s;
}

}  // namespace scoville::hw
