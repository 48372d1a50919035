#pragma once
// The elaborated platform: the SystemC netlist built from a PlatformConfig.

#include <memory>
#include <systemc>

#include "hw/Chip.h"
#include "platforms/PlatformConfig.h"

namespace scoville::platform {

class Platform : public sc_core::sc_module {
 public:
  /// Elaborates the chips and their wiring. Call once per process, before sc_start().
  Platform(const sc_core::sc_module_name& name, const PlatformConfig& config);
  Platform(const Platform&) = delete;
  Platform& operator=(const Platform&) = delete;

  const PlatformConfig& config() const { return m_config; }
  hw::Chip& chip() { return m_chip; }
  const hw::Chip& chip() const { return m_chip; }

 private:
  PlatformConfig m_config;
  hw::Chip m_chip;
};

}  // namespace scoville::platform
