#pragma once

#include <cstdint>
#include <optional>

#include "config/Schema.h"
#include "power/PowerConfig.h"

namespace scoville::hw {

/// A full-duplex point-to-point link between a chip's switch port and a switch (see Switch.h for
/// the timing model). Both directions have the same parameters and are independent.
struct LinkConfig {
  double bandwidthBytesPerS = 0.0;  ///< wire rate per direction, headers included
  double latencyS = 0.0;            ///< SerDes + FEC + time of flight, paid once per traversal
  double mtuBytes = 0.0;            ///< largest payload carried by one packet
  double headerBytes = 0.0;         ///< per-packet framing, routing and CRC overhead on the wire

  /// Packets needed to carry `bytes` of payload (0 for an empty message).
  uint64_t packetsFor(uint64_t bytes) const;
  /// Bytes on the wire for a `bytes` message: payload plus one header per packet.
  uint64_t wireBytesFor(uint64_t bytes) const;
  /// Wire size of the largest packet of a `bytes` message.
  uint64_t largestPacketFor(uint64_t bytes) const;

  static const config::Schema<LinkConfig>& schema();
};

/// How a switch keeps its input buffers from overflowing.
enum class FlowControl {
  kCredit,        ///< per-input credit loop: a sender stalls when the input buffer is full
  kOutputQueued,  ///< unbounded output queues: a sender never stalls
};

/// A single-stage packet switch (see Switch.h for the timing model).
struct SwitchConfig {
  int ports = 0;                  ///< radix: chips that can attach
  double hopLatencyS = 0.0;       ///< header arrival to header departure (routing, arbitration, crossbar)
  double inputBufferBytes = 0.0;  ///< per input port; bounds bytes in flight under credit flow control
  FlowControl flowControl = FlowControl::kCredit;
  std::optional<power::SwitchEnergyConfig> power;  ///< absent: the switch's power is not modelled

  static const config::Schema<SwitchConfig>& schema();
};

/// The inter-chip fabric: identical links from every chip to one switch.
struct NetworkConfig {
  LinkConfig link;
  SwitchConfig fabricSwitch;

  static const config::Schema<NetworkConfig>& schema();
};

}  // namespace scoville::hw
