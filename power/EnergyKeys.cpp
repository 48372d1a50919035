#include "power/EnergyKeys.h"

namespace scoville::power {

namespace dim = config::dim;

const std::vector<EnergyKey>& energyKeys() {
  static const std::vector<EnergyKey> keys = {
      {"uncore", dim::kPower, [](ChipEnergyConfig& e) { return &e.uncoreW; }},
      {"floor", dim::kPower, [](ChipEnergyConfig& e) { return &e.floorW; }},
      {"tensor_core.energy_per_flop.fp32", dim::kEnergyPerFlop,
       [](ChipEnergyConfig& e) { return &e.tensorCore.perFlop.fp32; }},
      {"tensor_core.energy_per_flop.bf16", dim::kEnergyPerFlop,
       [](ChipEnergyConfig& e) { return &e.tensorCore.perFlop.bf16; }},
      {"tensor_core.energy_per_flop.fp8", dim::kEnergyPerFlop,
       [](ChipEnergyConfig& e) { return &e.tensorCore.perFlop.fp8; }},
      {"tensor_core.energy_per_flop.fp4", dim::kEnergyPerFlop,
       [](ChipEnergyConfig& e) { return &e.tensorCore.perFlop.fp4; }},
      {"tensor_core.operand_energy", dim::kEnergyPerByte,
       [](ChipEnergyConfig& e) { return &e.tensorCore.operandJPerByte; }},
      {"tensor_core.static", dim::kPower, [](ChipEnergyConfig& e) { return &e.tensorCore.staticW; }},
      {"vector_unit.energy_per_op", dim::kEnergy, [](ChipEnergyConfig& e) { return &e.vectorUnit.perOpJ; }},
      {"vector_unit.energy_per_convert_op", dim::kEnergy,
       [](ChipEnergyConfig& e) { return &e.vectorUnit.perConvertOpJ; }},
      {"vector_unit.static", dim::kPower, [](ChipEnergyConfig& e) { return &e.vectorUnit.staticW; }},
      {"sram.read_energy", dim::kEnergyPerByte, [](ChipEnergyConfig& e) { return &e.sram.readJPerByte; }},
      {"sram.write_energy", dim::kEnergyPerByte, [](ChipEnergyConfig& e) { return &e.sram.writeJPerByte; }},
      {"sram.static", dim::kPower, [](ChipEnergyConfig& e) { return &e.sram.staticW; }},
      {"llc.read_energy", dim::kEnergyPerByte,
       [](ChipEnergyConfig& e) { return e.llc ? &e.llc->readJPerByte : nullptr; }},
      {"llc.write_energy", dim::kEnergyPerByte,
       [](ChipEnergyConfig& e) { return e.llc ? &e.llc->writeJPerByte : nullptr; }},
      {"llc.static", dim::kPower, [](ChipEnergyConfig& e) { return e.llc ? &e.llc->staticW : nullptr; }},
      {"interconnect.energy_per_mm", dim::kEnergyPerByteLength,
       [](ChipEnergyConfig& e) { return &e.interconnect.jPerByteMetre; }},
      {"interconnect.static", dim::kPower, [](ChipEnergyConfig& e) { return &e.interconnect.staticW; }},
      {"hbm.activate_energy", dim::kEnergy, [](ChipEnergyConfig& e) { return &e.hbm.activateJ; }},
      {"hbm.precharge_energy", dim::kEnergy, [](ChipEnergyConfig& e) { return &e.hbm.prechargeJ; }},
      {"hbm.read_energy", dim::kEnergyPerByte, [](ChipEnergyConfig& e) { return &e.hbm.readJPerByte; }},
      {"hbm.write_energy", dim::kEnergyPerByte, [](ChipEnergyConfig& e) { return &e.hbm.writeJPerByte; }},
      {"hbm.refresh_energy", dim::kEnergy, [](ChipEnergyConfig& e) { return &e.hbm.refreshJ; }},
      {"hbm.static", dim::kPower, [](ChipEnergyConfig& e) { return &e.hbm.staticW; }},
      {"memory_interface.read_energy", dim::kEnergyPerByte,
       [](ChipEnergyConfig& e) { return &e.memoryInterface.readJPerByte; }},
      {"memory_interface.write_energy", dim::kEnergyPerByte,
       [](ChipEnergyConfig& e) { return &e.memoryInterface.writeJPerByte; }},
      {"memory_interface.static", dim::kPower, [](ChipEnergyConfig& e) { return &e.memoryInterface.staticW; }},
      {"fabric_ports.energy", dim::kEnergyPerByte, [](ChipEnergyConfig& e) { return &e.fabricPorts.jPerByte; }},
      {"fabric_ports.static", dim::kPower, [](ChipEnergyConfig& e) { return &e.fabricPorts.staticW; }},
  };
  return keys;
}

const EnergyKey* findEnergyKey(const std::string& key) {
  for (const EnergyKey& k : energyKeys()) {
    if (k.key == key) return &k;
  }
  return nullptr;
}

}  // namespace scoville::power
