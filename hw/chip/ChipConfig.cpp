#include "hw/chip/ChipConfig.h"

#include <cmath>

namespace scoville::hw {

using namespace scoville::config;

const Schema<FabricPortsConfig>& FabricPortsConfig::schema() {
  static const Schema<FabricPortsConfig> s =
      Schema<FabricPortsConfig>("fabric_ports",
                                "The chip's ports on the inter-chip fabric; the platform's network.topology decides "
                                "which switch or chip each port connects to.")
          .integer("count", &FabricPortsConfig::count, required(), between(0, 4096),
                   "ports (links) per chip; 0 for a chip that attaches to no fabric")
          .child("link", &FabricPortsConfig::link, LinkConfig::schema(), required(),
                 "one port's full-duplex link (rate per direction, latency, packet format)");
  return s;
}

const Schema<ChipConfig>& ChipConfig::schema() {
  static const Schema<ChipConfig> s =
      Schema<ChipConfig>("chip",
                         "One chip type: tensor core, vector unit, HBM, SRAM, on-chip interconnect and power rating.")
          .text("name", &ChipConfig::name, required(), "chip type name, used in reports")
          .quantity("rated_power", &ChipConfig::ratedPowerW, dim::kPower, required(), positive(),
                    "thermal design power (TDP) the chip is rated for")
          .child("tensor_core", &ChipConfig::tensorCore, TensorCoreConfig::schema(), required(), "matrix engine")
          .child("vector_unit", &ChipConfig::vectorUnit, VectorUnitConfig::schema(), required(),
                 "element-wise SIMD unit")
          .child("hbm", &ChipConfig::hbm, MemoryControllerConfig::schema(), required(), "HBM memory")
          .child("sram", &ChipConfig::sram, SramConfig::schema(), required(), "on-chip SRAM")
          .child("interconnect", &ChipConfig::interconnect, InterconnectConfig::schema(), required(), "on-chip network")
          .child("fabric_ports", &ChipConfig::fabricPorts, FabricPortsConfig::schema(), required(),
                 "ports on the inter-chip fabric")
          .child("command_processor", &ChipConfig::commandProcessor, CommandProcessorConfig::schema(), optional("{}"),
                 "the front end that starts kernels: the launch gap between them (absent: none, work streams "
                 "from one op to the next)")
          .optionalChild("power", &ChipConfig::power, power::ChipEnergyConfig::schema(),
                         "energy of the units' activity and their static power; absent: no power analysis")
          .optionalChild("thermal", &ChipConfig::thermal, power::ThermalConfig::schema(),
                         "the chip's thermal model in its cooling (docs/thermal.md); absent: none, static power as "
                         "configured at every temperature")
          .check("thermal needs power",
                 [](const ChipConfig& c, const Node& node) {
                   if (c.thermal && !c.power) {
                     node.at("thermal").fail(
                         ErrorKind::kInvalidConfig,
                         fmt::format("'{}.thermal' needs a 'power' section: the thermal model is heated "
                                     "by the chip's power",
                                     node.path()));
                   }
                 })
          .check(
              "power: an energy per FLOP for every precision the tensor core runs, and the first DVFS point "
              "at the tensor core's clock",
              [](const ChipConfig& c, const Node& node) {
                if (!c.power) return;
                for (const auto& [name, precision] : tlm::precisionNames()) {
                  if (precision == tlm::Precision::kInt4) continue;  // the fp4 datapath
                  if (c.tensorCore.macsPerCell.of(precision) > 0 && !(c.power->tensorCore.perFlop.of(precision) > 0)) {
                    node.at("power")
                        .at("tensor_core")
                        .at("energy_per_flop")
                        .fail(ErrorKind::kMissingKey,
                              fmt::format("'{}.power.tensor_core.energy_per_flop' needs a value > 0 for '{}': the "
                                          "tensor core runs {} (macs_per_cell_per_cycle)",
                                          node.path(), name, name));
                  }
                }
                if (!c.power->dvfs.empty() &&
                    std::fabs(c.power->dvfs.front().frequencyHz - c.tensorCore.clockHz) > 1e-6 * c.tensorCore.clockHz) {
                  node.at("power")
                      .at("dvfs")
                      .at(std::size_t{0})
                      .fail(ErrorKind::kInvalidConfig,
                            fmt::format("'{}.power.dvfs[0].frequency' is {}, expected the nominal point at "
                                        "tensor_core.clock ({})",
                                        node.path(), formatQuantity(c.power->dvfs.front().frequencyHz, dim::kFrequency),
                                        formatQuantity(c.tensorCore.clockHz, dim::kFrequency)));
                }
              });
  return s;
}

}  // namespace scoville::hw
