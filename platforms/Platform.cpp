#include "platforms/Platform.h"

namespace scoville::platform {

Platform::Platform(const sc_core::sc_module_name& name, const PlatformConfig& config)
    : sc_core::sc_module(name), m_config(config), m_chip("chip0", config.chip) {}

}  // namespace scoville::platform
