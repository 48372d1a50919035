#pragma once
// A chip's attachment to the inter-chip fabric: a TLM-2.0 target for the chip's sends and the
// chip's end of one full-duplex link to a Switch port.
//
// Link model: each direction is a FIFO wire that carries one message's packet stream at a time,
// tracked by a busy-until time. tx (chip -> switch) is held from the moment a message starts
// until its last byte has left the chip, which includes any time the switch's credit loop
// stalled it; rx (switch -> chip) is held by the switch's output port while it forwards a
// message. The arithmetic of a message's timeline lives in Switch, which sees both ends; this
// class owns the state and statistics of its link.

#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>
#include <cstdint>
#include <string>
#include <systemc>
#include <tlm>

#include "hw/network/NetworkConfig.h"
#include "tlm/OpExtension.h"
#include "stats/StatsGroup.h"

namespace scoville::hw {

/// One direction of a full-duplex link: state and counters of a FIFO wire.
class LinkDirection {
 public:
  /// Registers this direction's counters in `group` as "<prefix>_<stat>".
  LinkDirection(stats::Group& group, const std::string& prefix, const std::string& what);
  LinkDirection(const LinkDirection&) = delete;
  LinkDirection& operator=(const LinkDirection&) = delete;

  /// When the last reserved byte has left the sending end.
  sc_core::sc_time busyUntil() const { return m_busyUntil; }

  /// What one message adds to a direction: made once, it can be applied to several directions
  /// (the ports of an alike rotation).
  struct Hold {
    sc_core::sc_time end;
    double payloadBytes = 0, wireBytes = 0, packets = 0, serialisationS = 0, queueS = 0, stallS = 0;
  };
  /// The hold of the wire over [start, end) by one message that asked for it at `requested` and
  /// needs `serialisationS` of pure transfer time; end - start - serialisationS is counted as stall.
  static Hold hold(const sc_core::sc_time& requested, const sc_core::sc_time& start, const sc_core::sc_time& end,
                   uint64_t payloadBytes, uint64_t wireBytes, uint64_t packets, double serialisationS);
  void occupy(const Hold& hold);
  void occupy(const sc_core::sc_time& requested, const sc_core::sc_time& start, const sc_core::sc_time& end,
              uint64_t payloadBytes, uint64_t wireBytes, uint64_t packets, double serialisationS) {
    occupy(hold(requested, start, end, payloadBytes, wireBytes, packets, serialisationS));
  }

 private:
  sc_core::sc_time m_busyUntil = sc_core::SC_ZERO_TIME;
  stats::Counter& m_messages;
  stats::Counter& m_bytes;
  stats::Counter& m_wireBytes;
  stats::Counter& m_packets;
  stats::Counter& m_busyTime;
  stats::Counter& m_queueTime;
  stats::Counter& m_stallTime;
};

class SwitchPort : public sc_core::sc_module {
 public:
  /// Accepts kSend payloads with srcChip == chip(), dstChip != chip() and bytes > 0; anything else
  /// is answered TLM_COMMAND_ERROR_RESPONSE. A destination not attached to the switch is answered
  /// TLM_ADDRESS_ERROR_RESPONSE. The annotated delay returned is the arrival of the message's last
  /// byte at the destination chip's port.
  tlm_utils::simple_target_socket<SwitchPort> fromChip;
  /// Toward the switch; bound by Switch::attach.
  tlm_utils::simple_initiator_socket<SwitchPort> toSwitch;

  SwitchPort(const sc_core::sc_module_name& name, const LinkConfig& config, int chip);
  SwitchPort(const SwitchPort&) = delete;
  SwitchPort& operator=(const SwitchPort&) = delete;

  int chip() const { return m_chip; }
  const LinkConfig& config() const { return m_config; }
  /// The link's one-way latency on the kernel's time grid (rounded up once, not per message).
  const sc_core::sc_time& latency() const { return m_latency; }
  const stats::Group& stats() const { return m_stats; }

  /// Fabric side, driven by the attached Switch: chip -> switch and switch -> chip directions.
  LinkDirection& tx() { return m_tx; }
  LinkDirection& rx() { return m_rx; }
  const LinkDirection& tx() const { return m_tx; }
  const LinkDirection& rx() const { return m_rx; }

 private:
  void bTransport(::tlm::tlm_generic_payload& payload, sc_core::sc_time& delay);

  LinkConfig m_config;
  sc_core::sc_time m_latency;
  int m_chip;
  stats::Group m_stats;
  LinkDirection m_tx;
  LinkDirection m_rx;
};

}  // namespace scoville::hw
