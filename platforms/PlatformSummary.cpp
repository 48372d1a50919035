#include "platforms/PlatformSummary.h"

#include <fmt/format.h>

#include "tlm/Precision.h"
#include "tlm/config/Units.h"

namespace scoville::platform {

using config::formatQuantity;
namespace dim = config::dim;

nlohmann::ordered_json summarize(const PlatformConfig& config) {
  const hw::ChipConfig& chip = config.chip;
  nlohmann::ordered_json peak = nlohmann::ordered_json::object();
  for (const auto& [name, precision] : tlm::precisionNames()) {
    if (chip.tensorCore.macsPerCell.of(precision) > 0) peak[name] = chip.tensorCore.peakFlops(precision);
  }
  return {{"name", config.name},
          {"chips", 1},
          {"chip_type", chip.name},
          {"peak_flops_per_s", peak},
          {"hbm_bandwidth_bytes_per_s", chip.hbm.bandwidthBytesPerS},
          {"hbm_capacity_bytes", chip.hbm.capacityBytes},
          {"rated_power_w", chip.ratedPowerW}};
}

void printTree(std::ostream& out, const PlatformConfig& config) {
  const hw::ChipConfig& chip = config.chip;
  const hw::TensorCoreConfig& tc = chip.tensorCore;
  out << fmt::format("platform {} — {}\n", config.name, config.description);
  out << fmt::format("└─ chip0 ({}), rated {}\n", chip.name, formatQuantity(chip.ratedPowerW, dim::kPower));
  out << fmt::format("   ├─ tensor_core: {} x {}x{} arrays @ {}\n", tc.count, tc.arrayRows, tc.arrayCols,
                     formatQuantity(tc.clockHz, dim::kFrequency));
  for (const auto& [name, precision] : tlm::precisionNames()) {
    if (tc.macsPerCell.of(precision) > 0) {
      out << fmt::format("   │    peak {:<4} {}\n", name, formatQuantity(tc.peakFlops(precision), dim::kFlopRate));
    }
  }
  out << fmt::format("   ├─ vector_unit: {} lanes @ {}\n", chip.vectorUnit.lanes,
                     formatQuantity(chip.vectorUnit.clockHz, dim::kFrequency));
  out << fmt::format("   ├─ hbm: {}, {} in {} channels x {} banks ({} groups), {} rows, {} scheduling\n",
                     formatQuantity(chip.hbm.capacityBytes, dim::kBytes),
                     formatQuantity(chip.hbm.bandwidthBytesPerS, dim::kBandwidth), chip.hbm.channels, chip.hbm.banks(),
                     chip.hbm.bankGroups, formatQuantity(chip.hbm.rowBytes, dim::kBytes),
                     chip.hbm.scheduler);
  out << fmt::format("   ├─ sram: {} in {} banks, {}, latency {}\n",
                     formatQuantity(chip.sram.capacityBytes, dim::kBytes), chip.sram.banks,
                     formatQuantity(chip.sram.bandwidthBytesPerS, dim::kBandwidth),
                     formatQuantity(chip.sram.latencyS, dim::kTime));
  out << fmt::format("   └─ interconnect: hop latency {}, {} per unit port\n",
                     formatQuantity(chip.interconnect.hopLatencyS, dim::kTime),
                     formatQuantity(chip.interconnect.bandwidthBytesPerS, dim::kBandwidth));
  out << fmt::format(
      "totals: 1 chip, HBM {} / {}, rated power {}\n", formatQuantity(chip.hbm.capacityBytes, dim::kBytes),
      formatQuantity(chip.hbm.bandwidthBytesPerS, dim::kBandwidth), formatQuantity(chip.ratedPowerW, dim::kPower));
}

}  // namespace scoville::platform
