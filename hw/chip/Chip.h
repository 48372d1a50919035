#pragma once
// A chip: tensor core, vector unit, HBM controller, SRAM and the command processor that launches
// kernels, joined by the on-chip interconnect.
// Initiators (the workload driver's streams, the copy engines and switch ports) bind to socket().

#include <memory>
#include <string>
#include <systemc>

#include "hw/ChipInterconnect.h"
#include "hw/CommandProcessor.h"
#include "hw/RtlTensorCore.h"
#include "hw/Sram.h"
#include "hw/TensorCore.h"
#include "hw/VectorUnit.h"
#include "hw/chip/ChipConfig.h"
#include "hw/dram/MemoryController.h"
#include "hw/power/PowerManager.h"
#include "stats/StatsGroup.h"

namespace scoville::hw {

class Chip : public sc_core::sc_module {
 public:
  Chip(const sc_core::sc_module_name& name, const ChipConfig& config);
  Chip(const Chip&) = delete;
  Chip& operator=(const Chip&) = delete;

  /// The chip's entry point for transactions; any number of initiators may bind to it.
  auto& socket() { return m_interconnect.socket; }
  const ChipConfig& config() const { return m_config; }
  const stats::Group& stats() const { return m_stats; }
  /// Every unit of this chip emits its activity here; power and statistics listeners subscribe.
  tlm::ActivityBus& activityBus() { return m_activityBus; }
  /// The chip's power manager: core clock domain and operating point, power gating of tensor
  /// arrays, clock gating and DVFS governor. Phase policies and governors act through it.
  PowerManager& powerManager() { return m_powerManager; }
  const PowerManager& powerManager() const { return m_powerManager; }
  /// The HBM memory controller.
  MemoryController& hbm() { return m_hbm; }
  /// The core clock domain (tensor core and vector unit), which the power manager scales.
  const tlm::ClockDomain& coreClock() const { return m_powerManager.coreClock(); }
  /// RTL co-simulation (tensor_core.impl rtl or lockstep): what went wrong, "" if nothing did or
  /// the tensor core is the TLM model.
  std::string cosimFailure() const { return m_rtlTensorCore ? m_rtlTensorCore->failure() : std::string(); }

 private:
  /// Power gating: runs later GEMMs on `arrays` of the tensor core's arrays (1..count). Only the
  /// TLM tensor core can gate (std::logic_error with impl rtl or lockstep, unless arrays = count).
  void setActiveTensorArrays(int arrays);

  ChipConfig m_config;
  tlm::ActivityBus m_activityBus;
  PowerManager m_powerManager;
  ChipInterconnect m_interconnect;
  std::unique_ptr<TensorCore> m_tensorCore;        ///< impl tlm
  std::unique_ptr<RtlTensorCore> m_rtlTensorCore;  ///< impl rtl and lockstep
  VectorUnit m_vectorUnit;
  MemoryController m_hbm;
  Sram m_sram;
  CommandProcessor m_commandProcessor;
  stats::Group m_stats;
};

}  // namespace scoville::hw
