#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "hw/dram/MemoryControllerConfig.h"
#include "hw/TensorCoreConfig.h"
#include "hw/VectorUnitConfig.h"
#include "hw/network/NetworkConfig.h"
#include "config/Schema.h"
#include "power/PowerConfig.h"

namespace scoville::hw {

/// Where a chip's SRAM starts in its address space; HBM occupies [0, hbm capacity).
inline constexpr uint64_t kSramBaseAddress = uint64_t{1} << 48;

/// The on-chip network joining a chip's units.
struct InterconnectConfig {
  double hopLatencyS = 0.0;         ///< added on the way to a unit and again on the way back
  double bandwidthBytesPerS = 0.0;  ///< per unit port: data to or from one unit

  static const config::Schema<InterconnectConfig>& schema();
};

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

/// The chip's ports on the inter-chip fabric (SerDes links to switches or to other chips).
struct FabricPortsConfig {
  int count = 0;    ///< ports; the topology decides where each one goes
  LinkConfig link;  ///< one port's link

  /// Injection bandwidth of the chip into the fabric, per direction.
  double bandwidthBytesPerS() const { return count * link.bandwidthBytesPerS; }
  /// Ports that go to plane `plane` when they are spread as evenly as possible over `planes`
  /// switch planes (the first count % planes planes get one more).
  int portsInPlane(int planes, int plane) const { return count / planes + (plane < count % planes ? 1 : 0); }
  static const config::Schema<FabricPortsConfig>& schema();
};

/// One chip type: its units and its power rating.
struct ChipConfig {
  std::string name;
  double ratedPowerW = 0.0;
  TensorCoreConfig tensorCore;
  VectorUnitConfig vectorUnit;
  MemoryControllerConfig hbm;
  SramConfig sram;
  InterconnectConfig interconnect;
  FabricPortsConfig fabricPorts;
  std::optional<power::ChipEnergyConfig> power;  ///< absent: the chip's power is not modelled

  static const config::Schema<ChipConfig>& schema();
};

}  // namespace scoville::hw
