#pragma once
// On-chip interconnect: one target socket facing initiators, one initiator socket per unit.
// Routes by OpExtension::kind: memory and KV ops to the HBM controller, GEMMs to the tensor core.
// Each traversal adds the hop latency on the way in and on the way back.

#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>
#include <systemc>
#include <tlm>

#include "hw/ChipConfig.h"
#include "tlm/stats/StatsGroup.h"

namespace scoville::hw {

class ChipInterconnect : public sc_core::sc_module {
 public:
  tlm_utils::simple_target_socket<ChipInterconnect> socket;
  tlm_utils::simple_initiator_socket<ChipInterconnect> toMemory;
  tlm_utils::simple_initiator_socket<ChipInterconnect> toTensorCore;

  ChipInterconnect(const sc_core::sc_module_name& name, const InterconnectConfig& config);
  ChipInterconnect(const ChipInterconnect&) = delete;
  ChipInterconnect& operator=(const ChipInterconnect&) = delete;

  const stats::Group& stats() const { return m_stats; }

 private:
  void bTransport(::tlm::tlm_generic_payload& payload, sc_core::sc_time& delay);

  sc_core::sc_time m_hopLatency;
  stats::Group m_stats;
  stats::Counter& m_toMemory;
  stats::Counter& m_toTensorCore;
};

}  // namespace scoville::hw
