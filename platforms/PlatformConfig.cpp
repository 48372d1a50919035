#include "platforms/PlatformConfig.h"

namespace scoville::platform {

using namespace scoville::config;

const Schema<PlatformConfig>& PlatformConfig::schema() {
  static const Schema<PlatformConfig> s =
      Schema<PlatformConfig>("platform", "Root of a platform file (platforms/*.yaml).")
          .text("name", &PlatformConfig::name, required(), "platform name, used in reports")
          .text("description", &PlatformConfig::description, required(), "one line on what this platform is")
          .child("chip", &PlatformConfig::chip, hw::ChipConfig::schema(), required(), "the chip type");
  return s;
}

}  // namespace scoville::platform
