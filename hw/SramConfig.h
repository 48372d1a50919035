#pragma once
// The configuration of a chip's SRAM (Sram) and where it sits in the chip's address space.

#include <cstdint>

#include "config/Schema.h"

namespace scoville::hw {

/// Where a chip's SRAM starts in its address space; HBM occupies [0, hbm capacity).
inline constexpr uint64_t kSramBaseAddress = uint64_t{1} << 48;

/// How a chip's load stream issues the staging buffers' reads (SramConfig::loadIssue).
enum class LoadIssue {
  kOverlapped,  ///< a DMA engine: a tile's requests go out once a buffer is free, earlier tiles' still in flight
  kSerial,      ///< each request once the previous one's data is in (kernels one after another)
};

/// On-chip SRAM used as the staging buffer between HBM and the tensor cores.
struct SramConfig {
  double capacityBytes = 0.0;
  int banks = 0;
  double interleaveBytes = 0.0;
  double bandwidthBytesPerS = 0.0;  ///< aggregate over all banks
  double latencyS = 0.0;
  int stagingBuffers = 0;  ///< operand tiles in flight: one is computed on while the others load
  LoadIssue loadIssue = LoadIssue::kOverlapped;

  /// Bytes of one staging buffer: the largest operand tile streamed from HBM in one piece.
  double bufferBytes() const { return capacityBytes / stagingBuffers; }
  static const config::Schema<SramConfig>& schema();
};

}  // namespace scoville::hw
