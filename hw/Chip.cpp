#include "hw/Chip.h"

namespace scoville::hw {

Chip::Chip(const sc_core::sc_module_name& name, const ChipConfig& config)
    : sc_core::sc_module(name),
      m_config(config),
      m_interconnect("interconnect", config.interconnect, config.sram.capacityBytes),
      m_tensorCore("tensor_core", config.tensorCore),
      m_vectorUnit("vector_unit", config.vectorUnit),
      m_hbm("hbm", config.hbm),
      m_sram("sram", config.sram),
      m_stats(basename(), "chip " + config.name) {
  m_interconnect.toMemory.bind(m_hbm.socket);
  m_interconnect.toSram.bind(m_sram.socket);
  m_interconnect.toTensorCore.bind(m_tensorCore.socket);
  m_interconnect.toVectorUnit.bind(m_vectorUnit.socket);
  m_interconnect.attachActivity(m_activityBus);
  m_tensorCore.setClockDomain(m_coreClock);
  m_vectorUnit.setClockDomain(m_coreClock);
  m_tensorCore.attachActivity(m_activityBus);
  m_vectorUnit.attachActivity(m_activityBus);
  m_hbm.attachActivity(m_activityBus);
  m_sram.attachActivity(m_activityBus);
  m_stats.addChild(m_interconnect.stats());
  m_stats.addChild(m_tensorCore.stats());
  m_stats.addChild(m_vectorUnit.stats());
  m_stats.addChild(m_hbm.stats());
  m_stats.addChild(m_sram.stats());
}

}  // namespace scoville::hw
