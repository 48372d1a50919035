#pragma once
// A chip: tensor core and HBM controller joined by the on-chip interconnect. Initiators (the
// workload driver today, switch ports later) bind to socket().

#include <systemc>

#include "hw/ChipConfig.h"
#include "hw/ChipInterconnect.h"
#include "hw/MemoryController.h"
#include "hw/TensorCore.h"
#include "tlm/stats/StatsGroup.h"

namespace scoville::hw {

class Chip : public sc_core::sc_module {
 public:
  Chip(const sc_core::sc_module_name& name, const ChipConfig& config);
  Chip(const Chip&) = delete;
  Chip& operator=(const Chip&) = delete;

  /// The chip's entry point for transactions.
  tlm_utils::simple_target_socket<ChipInterconnect>& socket() { return m_interconnect.socket; }
  const ChipConfig& config() const { return m_config; }
  const stats::Group& stats() const { return m_stats; }

 private:
  ChipConfig m_config;
  ChipInterconnect m_interconnect;
  TensorCore m_tensorCore;
  MemoryController m_hbm;
  stats::Group m_stats;
};

}  // namespace scoville::hw
