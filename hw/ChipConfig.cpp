#include "hw/ChipConfig.h"

namespace scoville::hw {

using namespace scoville::config;

const Schema<InterconnectConfig>& InterconnectConfig::schema() {
  static const Schema<InterconnectConfig> s =
      Schema<InterconnectConfig>("interconnect", "On-chip network between the chip's units.")
          .quantity("hop_latency", &InterconnectConfig::hopLatencyS, dim::kTime, required(), nonNegative(),
                    "latency of one traversal; a transaction pays it to the unit and back");
  return s;
}

const Schema<SramConfig>& SramConfig::schema() {
  static const Schema<SramConfig> s =
      Schema<SramConfig>("sram", "On-chip SRAM staging operands between HBM and the tensor cores.")
          .quantity("capacity", &SramConfig::capacityBytes, dim::kBytes, required(), positive(),
                    "capacity available for operand staging")
          .integer("staging_buffers", &SramConfig::stagingBuffers, optional("2"), between(2, 64),
                   "buffers the capacity is split into; 2 = double buffering (one computes, one loads)");
  return s;
}

const Schema<ChipConfig>& ChipConfig::schema() {
  static const Schema<ChipConfig> s =
      Schema<ChipConfig>("chip", "One chip type: tensor core, HBM, SRAM, on-chip interconnect and power rating.")
          .text("name", &ChipConfig::name, required(), "chip type name, used in reports")
          .quantity("rated_power", &ChipConfig::ratedPowerW, dim::kPower, required(), positive(),
                    "thermal design power (TDP) the chip is rated for")
          .child("tensor_core", &ChipConfig::tensorCore, TensorCoreConfig::schema(), required(), "matrix engine")
          .child("hbm", &ChipConfig::hbm, MemoryControllerConfig::schema(), required(), "HBM memory")
          .child("sram", &ChipConfig::sram, SramConfig::schema(), required(), "on-chip SRAM")
          .child("interconnect", &ChipConfig::interconnect, InterconnectConfig::schema(), required(),
                 "on-chip network");
  return s;
}

}  // namespace scoville::hw
