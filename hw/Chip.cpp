#include "hw/Chip.h"

namespace scoville::hw {

Chip::Chip(const sc_core::sc_module_name& name, const ChipConfig& config)
    : sc_core::sc_module(name),
      m_config(config),
      m_interconnect("interconnect", config.interconnect),
      m_tensorCore("tensor_core", config.tensorCore),
      m_hbm("hbm", config.hbm),
      m_stats(basename(), "chip " + config.name) {
  m_interconnect.toMemory.bind(m_hbm.socket);
  m_interconnect.toTensorCore.bind(m_tensorCore.socket);
  m_stats.addChild(m_interconnect.stats());
  m_stats.addChild(m_tensorCore.stats());
  m_stats.addChild(m_hbm.stats());
}

}  // namespace scoville::hw
