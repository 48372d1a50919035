#include "tlm/ActivityBus.h"

namespace scoville::tlm {

const char* activityName(Activity activity) {
  switch (activity) {
    case Activity::kMacs: return "macs";
    case Activity::kOperandBytes: return "operand_bytes";
    case Activity::kVectorOps: return "vector_ops";
    case Activity::kSramReadBytes: return "sram_read_bytes";
    case Activity::kSramWriteBytes: return "sram_write_bytes";
    case Activity::kDramActivates: return "dram_activates";
    case Activity::kDramPrecharges: return "dram_precharges";
    case Activity::kDramReadBursts: return "dram_read_bursts";
    case Activity::kDramWriteBursts: return "dram_write_bursts";
    case Activity::kDramRefreshes: return "dram_refreshes";
    case Activity::kNocMemoryBytes: return "noc_memory_bytes";
    case Activity::kNocSramBytes: return "noc_sram_bytes";
    case Activity::kLinkBytes: return "link_bytes";
    case Activity::kSwitchBytes: return "switch_bytes";
    case Activity::kSwitchPackets: return "switch_packets";
    case Activity::kClockActive: return "clock_active";
    case Activity::kWakeArrays: return "wake_arrays";
    case Activity::kConvertOps: return "convert_ops";
  }
  return "?";
}

}  // namespace scoville::tlm
