#pragma once
// On-chip interconnect: a multi-initiator target socket (driver streams, copy engines, switch
// ports) and one initiator socket per unit. Routing: GEMMs to the tensor core, vector ops to the
// vector unit, kernel launches to the command processor, memory and KV ops by address — [kSramBaseAddress, +sram
// capacity) to the SRAM, everything below to HBM; each unit sees addresses relative to its own window. Every traversal
// adds the hop latency in each direction. Data to or from a memory unit also crosses that unit's port at `bandwidth`:
// each port serves transfers in arrival order (busy-until), and a transfer's response is held until its bytes have
// crossed, so a port slower than its memory caps the memory's achieved bandwidth. Both timing modes are forwarded;
// approximately-timed responses return to the initiator they came from, and requests from several initiators to one
// unit are held in order while that unit has not yet granted END_REQ to the previous one (request exclusion on the hop
// to the unit).

#include <tlm_utils/multi_passthrough_target_socket.h>
#include <tlm_utils/simple_initiator_socket.h>
#include <deque>
#include <systemc>
#include <tlm>
#include <unordered_map>

#include "hw/InterconnectConfig.h"
#include "hw/SramConfig.h"
#include "stats/StatsGroup.h"
#include "tlm/ActivityBus.h"
#include "tlm/OpExtension.h"

namespace scoville::hw {

class ChipInterconnect : public sc_core::sc_module {
 public:
  /// Zero bindings are allowed: a chip nothing runs on (an idle replica) stays unbound.
  tlm_utils::multi_passthrough_target_socket<ChipInterconnect, 32, ::tlm::tlm_base_protocol_types, 0,
                                             sc_core::SC_ZERO_OR_MORE_BOUND>
      socket;
  tlm_utils::simple_initiator_socket<ChipInterconnect> toMemory;
  tlm_utils::simple_initiator_socket<ChipInterconnect> toSram;
  tlm_utils::simple_initiator_socket<ChipInterconnect> toTensorCore;
  tlm_utils::simple_initiator_socket<ChipInterconnect> toVectorUnit;
  tlm_utils::simple_initiator_socket<ChipInterconnect> toCommandProcessor;

  ChipInterconnect(const sc_core::sc_module_name& name, const InterconnectConfig& config, double sramCapacityBytes);
  ChipInterconnect(const ChipInterconnect&) = delete;
  ChipInterconnect& operator=(const ChipInterconnect&) = delete;

  const stats::Group& stats() const { return m_stats; }
  /// Sends the interconnect's activity (bytes through unit ports) to `bus`.
  void attachActivity(const tlm::ActivityBus& bus) { m_activity.attach(bus, name()); }

 private:
  enum Port { kMemory, kSram, kTensorCore, kVectorUnit, kCommandProcessor, kNone, kPorts = kNone };

  Port route(::tlm::tlm_generic_payload& payload) const;
  tlm_utils::simple_initiator_socket<ChipInterconnect>& portSocket(Port port);
  /// Where a unit's address space starts in the chip's (subtracted on the way to the unit).
  static uint64_t baseOf(Port port);
  /// Reserves the port for the payload's bytes from `arrival`; returns when they have crossed.
  sc_core::sc_time crossPort(Port port, const tlm::OpExtension& op, const sc_core::sc_time& arrival);

  void bTransport(int id, ::tlm::tlm_generic_payload& payload, sc_core::sc_time& delay);
  ::tlm::tlm_sync_enum nbTransportFw(int id, ::tlm::tlm_generic_payload& payload, ::tlm::tlm_phase& phase,
                                     sc_core::sc_time& delay);
  ::tlm::tlm_sync_enum nbTransportBw(::tlm::tlm_generic_payload& payload, ::tlm::tlm_phase& phase,
                                     sc_core::sc_time& delay);
  /// Sends BEGIN_REQ to the unit; returns the status for the initiator's call.
  ::tlm::tlm_sync_enum forwardRequest(Port port, ::tlm::tlm_generic_payload& payload, ::tlm::tlm_phase& phase,
                                      sc_core::sc_time& delay);
  /// Forwards held requests to a unit that has granted END_REQ.
  void drainPending(Port port);

  InterconnectConfig m_config;
  double m_sramCapacity;
  sc_core::sc_time m_hopLatency;
  sc_core::sc_time m_portBusyUntil[kPorts];
  struct InFlight {
    int initiator;
    Port port;
    sc_core::sc_time dataCrossed;
  };
  struct Held {
    ::tlm::tlm_generic_payload* payload;
    sc_core::sc_time arrival;
  };
  std::unordered_map<const ::tlm::tlm_generic_payload*, InFlight> m_inFlight;  // AT backward routing
  std::deque<Held> m_held[kPorts];    // requests waiting for the unit's END_REQ
  bool m_awaitingEndRequest[kPorts];  // the unit has a request it has not yet granted END_REQ

  tlm::ActivitySource m_activity;
  stats::Group m_stats;
  stats::Counter* m_routed[kPorts];
  stats::Counter& m_portBusyTime;
};

}  // namespace scoville::hw
