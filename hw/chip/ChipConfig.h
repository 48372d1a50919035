#pragma once
// One chip type: its units' configurations, its fabric ports and its power (the chip YAML).

#include <cstdint>
#include <optional>
#include <string>

#include "config/Schema.h"
#include "hw/CommandProcessorConfig.h"
#include "hw/InterconnectConfig.h"
#include "hw/SramConfig.h"
#include "hw/TensorCoreConfig.h"
#include "hw/VectorUnitConfig.h"
#include "hw/dram/MemoryControllerConfig.h"
#include "hw/network/NetworkConfig.h"
#include "power/PowerConfig.h"
#include "power/ThermalConfig.h"

namespace scoville::hw {

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
  CommandProcessorConfig commandProcessor;
  std::optional<power::ChipEnergyConfig> power;  ///< absent: the chip's power is not modelled
  std::optional<power::ThermalConfig> thermal;   ///< absent: no thermal model (needs power)

  static const config::Schema<ChipConfig>& schema();
};

}  // namespace scoville::hw
