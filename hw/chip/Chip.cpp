#include "hw/chip/Chip.h"

#include <stdexcept>

namespace scoville::hw {

Chip::Chip(const sc_core::sc_module_name& name, const ChipConfig& config)
    : sc_core::sc_module(name),
      m_config(config),
      m_powerManager("power_manager", config.power ? &*config.power : nullptr, config.tensorCore.count,
                     [this](int arrays) { setActiveTensorArrays(arrays); }),
      m_interconnect("interconnect", config.interconnect, config.sram.capacityBytes),
      m_vectorUnit("vector_unit", config.vectorUnit, config.tensorCore.computeUnits()),
      m_hbm("hbm", config.hbm),
      m_sram("sram", config.sram),
      m_commandProcessor("command_processor", config.commandProcessor),
      m_stats(basename(), "chip " + config.name) {
  // The power manager hears the units first: a decision it takes on an event's arrival is
  // announced before any power listener prices the event.
  m_powerManager.attach(m_activityBus);
  m_powerManager.setRefreshControl([this](double timeS, double rate) { m_hbm.setRefreshRate(timeS, rate); });
  m_interconnect.toMemory.bind(m_hbm.socket);
  m_interconnect.toSram.bind(m_sram.socket);
  // The TLM model or the RTL co-simulation: the same socket, clock domain and activity either way.
  const auto connect = [this](auto& core) {
    m_interconnect.toTensorCore.bind(core.socket);
    core.setClockDomain(m_powerManager.coreClock());
    core.attachActivity(m_activityBus);
  };
  if (config.tensorCore.impl == TensorCoreImpl::kTlm) {
    m_tensorCore = std::make_unique<TensorCore>("tensor_core", config.tensorCore);
    connect(*m_tensorCore);
  } else {
    m_rtlTensorCore = std::make_unique<RtlTensorCore>("tensor_core", config.tensorCore);
    connect(*m_rtlTensorCore);
  }
  m_interconnect.toVectorUnit.bind(m_vectorUnit.socket);
  m_interconnect.toCommandProcessor.bind(m_commandProcessor.socket);
  m_interconnect.attachActivity(m_activityBus);
  m_vectorUnit.setClockDomain(m_powerManager.coreClock());
  m_vectorUnit.attachActivity(m_activityBus);
  m_hbm.attachActivity(m_activityBus);
  m_sram.attachActivity(m_activityBus);
  m_stats.addChild(m_interconnect.stats());
  m_stats.addChild(m_tensorCore ? m_tensorCore->stats() : m_rtlTensorCore->stats());
  m_stats.addChild(m_vectorUnit.stats());
  m_stats.addChild(m_hbm.stats());
  m_stats.addChild(m_sram.stats());
  m_stats.addChild(m_powerManager.stats());
  if (config.commandProcessor.launchesKernels()) m_stats.addChild(m_commandProcessor.stats());
}

void Chip::setActiveTensorArrays(int arrays) {
  if (m_tensorCore) {
    m_tensorCore->setActiveArrays(arrays);
  } else if (arrays != m_config.tensorCore.count) {
    throw std::logic_error(name() + std::string(": the RTL tensor core cannot power arrays off"));
  }
}

}  // namespace scoville::hw
