#include "tlm/power/PowerConfig.h"

namespace scoville::power {

using namespace scoville::config;

double FlopEnergies::of(tlm::Precision p) const {
  switch (p) {
    case tlm::Precision::kFp32: return fp32;
    case tlm::Precision::kBf16: return bf16;
    case tlm::Precision::kFp8: return fp8;
    case tlm::Precision::kFp4: return fp4;
    case tlm::Precision::kInt4: return fp4;  // the 4-bit datapath, as the tensor core's MAC rates
  }
  return 0.0;
}

const Schema<FlopEnergies>& FlopEnergies::schema() {
  static const Schema<FlopEnergies> s =
      Schema<FlopEnergies>("flop_energies",
                           "Energy per FLOP (2 per MAC) of the tensor arrays for each compute precision; every "
                           "precision the chip's tensor_core.macs_per_cell_per_cycle supports needs one.")
          .quantity("fp32", &FlopEnergies::fp32, dim::kEnergyPerFlop, optional("0 J/FLOP"), nonNegative(),
                    "FP32 energy per FLOP")
          .quantity("bf16", &FlopEnergies::bf16, dim::kEnergyPerFlop, optional("0 J/FLOP"), nonNegative(),
                    "BF16 energy per FLOP")
          .quantity("fp8", &FlopEnergies::fp8, dim::kEnergyPerFlop, optional("0 J/FLOP"), nonNegative(),
                    "FP8 energy per FLOP")
          .quantity("fp4", &FlopEnergies::fp4, dim::kEnergyPerFlop, optional("0 J/FLOP"), nonNegative(),
                    "4-bit (MXFP4/NVFP4 and INT4) energy per FLOP");
  return s;
}

const Schema<TensorCoreEnergy>& TensorCoreEnergy::schema() {
  static const Schema<TensorCoreEnergy> s =
      Schema<TensorCoreEnergy>("tensor_core_energy", "Energy of the matrix engine.")
          .child("energy_per_flop", &TensorCoreEnergy::perFlop, FlopEnergies::schema(), required(),
                 "datapath energy per FLOP, per precision")
          .quantity("operand_energy", &TensorCoreEnergy::operandJPerByte, dim::kEnergyPerByte, required(),
                    nonNegative(), "per byte of GEMM operands fed to and results drained from the arrays")
          .quantity("static", &TensorCoreEnergy::staticW, dim::kPower, required(), nonNegative(),
                    "leakage of the arrays, drawn all the time");
  return s;
}

const Schema<VectorUnitEnergy>& VectorUnitEnergy::schema() {
  static const Schema<VectorUnitEnergy> s =
      Schema<VectorUnitEnergy>("vector_unit_energy", "Energy of the element-wise unit.")
          .quantity("energy_per_op", &VectorUnitEnergy::perOpJ, dim::kEnergy, required(), nonNegative(),
                    "per element operation")
          .quantity("static", &VectorUnitEnergy::staticW, dim::kPower, required(), nonNegative(), "leakage");
  return s;
}

const Schema<SramEnergy>& SramEnergy::schema() {
  static const Schema<SramEnergy> s =
      Schema<SramEnergy>("sram_energy", "Energy of the on-chip SRAM.")
          .quantity("read_energy", &SramEnergy::readJPerByte, dim::kEnergyPerByte, required(), nonNegative(),
                    "per byte read")
          .quantity("write_energy", &SramEnergy::writeJPerByte, dim::kEnergyPerByte, required(), nonNegative(),
                    "per byte written")
          .quantity("static", &SramEnergy::staticW, dim::kPower, required(), nonNegative(), "leakage");
  return s;
}

const Schema<HbmEnergy>& HbmEnergy::schema() {
  static const Schema<HbmEnergy> s =
      Schema<HbmEnergy>("hbm_energy", "Energy of the HBM stacks and their PHYs, per DRAM command and per byte.")
          .quantity("activate_energy", &HbmEnergy::activateJ, dim::kEnergy, required(), nonNegative(),
                    "one ACT of one bank")
          .quantity("precharge_energy", &HbmEnergy::prechargeJ, dim::kEnergy, required(), nonNegative(),
                    "one PRE of one bank")
          .quantity("read_energy", &HbmEnergy::readJPerByte, dim::kEnergyPerByte, required(), nonNegative(),
                    "DRAM core and TSVs, per byte read (whole bursts)")
          .quantity("write_energy", &HbmEnergy::writeJPerByte, dim::kEnergyPerByte, required(), nonNegative(),
                    "DRAM core and TSVs, per byte written (whole bursts)")
          .quantity("io_energy", &HbmEnergy::ioJPerByte, dim::kEnergyPerByte, required(), nonNegative(),
                    "PHYs at both ends, per byte moved either way")
          .quantity("refresh_energy", &HbmEnergy::refreshJ, dim::kEnergy, required(), nonNegative(),
                    "one all-bank refresh of one channel")
          .quantity("static", &HbmEnergy::staticW, dim::kPower, required(), nonNegative(),
                    "background (standby) power of all stacks");
  return s;
}

const Schema<PortEnergy>& PortEnergy::schema() {
  static const Schema<PortEnergy> s =
      Schema<PortEnergy>("port_energy", "Energy of data moved through ports, plus their static power.")
          .quantity("energy", &PortEnergy::jPerByte, dim::kEnergyPerByte, required(), nonNegative(),
                    "per byte (or bit) moved")
          .quantity("static", &PortEnergy::staticW, dim::kPower, required(), nonNegative(), "drawn all the time");
  return s;
}

const Schema<DvfsPoint>& DvfsPoint::schema() {
  static const Schema<DvfsPoint> s =
      Schema<DvfsPoint>("dvfs_point", "One operating point of the core clock domain.")
          .quantity("frequency", &DvfsPoint::frequencyHz, dim::kFrequency, required(), positive(), "core clock")
          .quantity("voltage", &DvfsPoint::voltageV, dim::kVoltage, required(), positive(), "core supply voltage");
  return s;
}

const Schema<PowerTransitions>& PowerTransitions::schema() {
  static const Schema<PowerTransitions> s =
      Schema<PowerTransitions>("power_transitions",
                               "What a change of the core's operating state costs when a serving phase policy "
                               "(scenario `serving`) makes one between steps; the core does no work meanwhile.")
          .quantity("clock_switch", &PowerTransitions::clockSwitchS, dim::kTime, optional("0 s"), between(0.0, 1.0),
                    "time to move to another dvfs point (voltage ramp, clock relock)")
          .quantity("wake", &PowerTransitions::wakeS, dim::kTime, optional("0 s"), between(0.0, 1.0),
                    "time to power gated tensor arrays back on")
          .quantity("wake_energy", &PowerTransitions::wakeJPerArray, dim::kEnergy, optional("0 J"), nonNegative(),
                    "energy to power one gated tensor array back on");
  return s;
}

double ChipEnergyConfig::idleW() const {
  return uncoreW + tensorCore.staticW + vectorUnit.staticW + sram.staticW + hbm.staticW + interconnect.staticW +
         fabricPorts.staticW;
}

const Schema<ChipEnergyConfig>& ChipEnergyConfig::schema() {
  static const Schema<ChipEnergyConfig> s =
      Schema<ChipEnergyConfig>(
          "chip_power",
          "Energy of a chip type's activity and its static power. The power monitor multiplies the activity the "
          "timing model reports with these energies; the timing model never computes energy.")
          .quantity("uncore", &ChipEnergyConfig::uncoreW, dim::kPower, required(), nonNegative(),
                    "always-on power outside the units below (PLLs, management, voltage-regulator loss)")
          .child("tensor_core", &ChipEnergyConfig::tensorCore, TensorCoreEnergy::schema(), required(), "matrix engine")
          .child("vector_unit", &ChipEnergyConfig::vectorUnit, VectorUnitEnergy::schema(), required(),
                 "element-wise unit")
          .child("sram", &ChipEnergyConfig::sram, SramEnergy::schema(), required(), "on-chip SRAM")
          .child("hbm", &ChipEnergyConfig::hbm, HbmEnergy::schema(), required(), "HBM stacks")
          .child("interconnect", &ChipEnergyConfig::interconnect, PortEnergy::schema(), required(),
                 "on-chip network: per byte through a unit port")
          .child("fabric_ports", &ChipEnergyConfig::fabricPorts, PortEnergy::schema(), required(),
                 "SerDes ports: per byte sent or received on one link direction")
          .childList("dvfs", &ChipEnergyConfig::dvfs, DvfsPoint::schema(), optional("[]"),
                     "core (tensor core and vector unit) operating points, highest first; the first is the "
                     "nominal clock, equal to tensor_core.clock. The platform's power.governor moves between "
                     "them: core dynamic energy scales with voltage squared and core timing with frequency")
          .child("transitions", &ChipEnergyConfig::transitions, PowerTransitions::schema(), optional("{}"),
                 "cost of a change of operating point or of powered tensor arrays (serving phase policies)")
          .check("dvfs points go from the highest frequency down, voltage never rising", [](const ChipEnergyConfig& c,
                                                                                            const Node& node) {
            for (std::size_t i = 1; i < c.dvfs.size(); ++i) {
              if (!(c.dvfs[i].frequencyHz < c.dvfs[i - 1].frequencyHz) || c.dvfs[i].voltageV > c.dvfs[i - 1].voltageV) {
                node.at("dvfs").at(i).fail(
                    ErrorKind::kInvalidConfig,
                    fmt::format("'{}.dvfs[{}]' must have a lower frequency and no higher voltage than "
                                "dvfs[{}] (points are listed from the nominal one down)",
                                node.path(), i, i - 1));
              }
            }
          });
  return s;
}

const Schema<SwitchEnergyConfig>& SwitchEnergyConfig::schema() {
  static const Schema<SwitchEnergyConfig> s =
      Schema<SwitchEnergyConfig>("switch_power", "Energy of a switch chip.")
          .quantity("energy_per_bit", &SwitchEnergyConfig::jPerByte, dim::kEnergyPerByte, required(), nonNegative(),
                    "per byte (or bit) forwarded: crossbar, buffers and the switch's SerDes")
          .quantity("energy_per_packet", &SwitchEnergyConfig::jPerPacket, dim::kEnergy, required(), nonNegative(),
                    "per packet forwarded: lookup and arbitration")
          .quantity("static", &SwitchEnergyConfig::staticW, dim::kPower, required(), nonNegative(),
                    "drawn all the time");
  return s;
}

const Schema<GovernorConfig>& GovernorConfig::schema() {
  static const Schema<GovernorConfig> s =
      Schema<GovernorConfig>("governor",
                             "DVFS governor of each chip: every response_time it averages the chip's power over the "
                             "last `window` and moves the core clock (tensor core and vector unit) to the highest "
                             "point of the chip type's `power.dvfs` predicted to stay under the cap.")
          .choice("impl", &GovernorConfig::kind,
                  {{"none", GovernorKind::kNone},
                   {"cap_rated", GovernorKind::kCapRated},
                   {"cap_target", GovernorKind::kCapTarget}},
                  optional("none"),
                  "none: always the nominal point; cap_rated: cap at the chip's rated_power; cap_target: cap at "
                  "`target`")
          .quantity("target", &GovernorConfig::targetW, dim::kPower, optional("0 W"), nonNegative(),
                    "cap_target: the cap per chip")
          .quantity("window", &GovernorConfig::windowS, dim::kTime, optional("10 ms"), positive(),
                    "the cap holds for power averaged over this window (a transaction keeps the clock it started "
                    "with, so windows shorter than the longest GEMM, a few ms in prefill, can overshoot)")
          .quantity("response_time", &GovernorConfig::responseTimeS, dim::kTime, optional("100 us"), positive(),
                    "decision period: a decision holds until the next one")
          .number("hysteresis", &GovernorConfig::hysteresis, optional("0.05"), between(0, 0.5),
                  "raise the clock only when the predicted power is below cap x (1 - hysteresis)")
          .rule("target", "impl cap_target needs a target > 0, and only it takes one",
                [](const GovernorConfig& g) { return (g.kind == GovernorKind::kCapTarget) == (g.targetW > 0.0); });
  return s;
}

const Schema<PowerManagementConfig>& PowerManagementConfig::schema() {
  static const Schema<PowerManagementConfig> s =
      Schema<PowerManagementConfig>("platform_power",
                                    "How power is observed (timeline interval, sustained-power windows) and managed "
                                    "(DVFS governor). Power is reported when every chip type has a `power` section.")
          .quantity("interval", &PowerManagementConfig::intervalS, dim::kTime, optional("10 us"), between(1e-9, 1.0),
                    "timeline bin: energy is binned at this interval of simulated time")
          .quantityList("windows", &PowerManagementConfig::windowsS, dim::kTime, optional("[1 ms, 10 ms, 100 ms, 1 s]"),
                        between(1e-9, 3600.0),
                        "sliding windows for sustained power (each is rounded to whole intervals)")
          .child("governor", &PowerManagementConfig::governor, GovernorConfig::schema(), optional("{}"),
                 "DVFS power governor")
          .integer("max_bins", &PowerManagementConfig::maxBins, optional("1048576"), between(16, 1 << 30),
                   "most bins a timeline keeps (8 bytes each): a run longer than max_bins x interval merges "
                   "adjacent bins and doubles the interval, as often as needed, so memory stays bounded; "
                   "sustained windows shorter than the interval reached are reported as one bin")
          .check("windows are at least one interval", [](const PowerManagementConfig& c, const Node& node) {
            for (std::size_t i = 0; i < c.windowsS.size(); ++i) {
              if (c.windowsS[i] < c.intervalS) {
                node.at("windows").at(i).fail(
                    ErrorKind::kInvalidConfig,
                    fmt::format("'{}.windows[{}]' is shorter than the timeline interval", node.path(), i));
              }
            }
          });
  return s;
}

}  // namespace scoville::power
