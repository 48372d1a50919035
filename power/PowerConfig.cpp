#include "power/PowerConfig.h"

#include <cmath>

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
      Schema<TensorCoreEnergy>("tensor_core_energy", "Energy of the matrix engine: its datapath and what feeds it.")
          .child("energy_per_flop", &TensorCoreEnergy::perFlop, FlopEnergies::schema(), required(),
                 "datapath energy per FLOP, per precision")
          .quantity("operand_energy", &TensorCoreEnergy::operandJPerByte, dim::kEnergyPerByte, required(),
                    nonNegative(),
                    "register file and operand delivery: per byte of GEMM operands fed to and results drained "
                    "from the arrays")
          .quantity("static", &TensorCoreEnergy::staticW, dim::kPower, required(), nonNegative(),
                    "leakage of the arrays at the nominal voltage, drawn all the time");
  return s;
}

const Schema<VectorUnitEnergy>& VectorUnitEnergy::schema() {
  static const Schema<VectorUnitEnergy> s =
      Schema<VectorUnitEnergy>("vector_unit_energy", "Energy of the element-wise unit.")
          .quantity("energy_per_op", &VectorUnitEnergy::perOpJ, dim::kEnergy, required(), nonNegative(),
                    "per element operation, all in: issue, operand reads and write, ALU")
          .quantity("energy_per_convert_op", &VectorUnitEnergy::perConvertOpJ, dim::kEnergy, optional("0 J"),
                    nonNegative(),
                    "per lane operation of a weight conversion in registers (a kernel's convert_ops: integer and "
                    "packed operations with no memory access); absent or 0: energy_per_op")
          .quantity("static", &VectorUnitEnergy::staticW, dim::kPower, required(), nonNegative(), "leakage");
  return s;
}

const Schema<AccessEnergy>& AccessEnergy::schema() {
  static const Schema<AccessEnergy> s =
      Schema<AccessEnergy>("access_energy", "Energy of a level priced per byte read and per byte written.")
          .quantity("read_energy", &AccessEnergy::readJPerByte, dim::kEnergyPerByte, required(), nonNegative(),
                    "per byte read")
          .quantity("write_energy", &AccessEnergy::writeJPerByte, dim::kEnergyPerByte, required(), nonNegative(),
                    "per byte written")
          .quantity("static", &AccessEnergy::staticW, dim::kPower, optional("0 W"), nonNegative(),
                    "drawn all the time");
  return s;
}

const Schema<HbmEnergy>& HbmEnergy::schema() {
  static const Schema<HbmEnergy> s =
      Schema<HbmEnergy>("hbm_energy",
                        "Energy of the HBM stacks' DRAM core and TSVs, per command and per byte of whole bursts (the "
                        "PHYs and the controller are `memory_interface`).")
          .quantity("activate_energy", &HbmEnergy::activateJ, dim::kEnergy, required(), nonNegative(),
                    "one ACT of one bank")
          .quantity("precharge_energy", &HbmEnergy::prechargeJ, dim::kEnergy, required(), nonNegative(),
                    "one PRE of one bank")
          .quantity("read_energy", &HbmEnergy::readJPerByte, dim::kEnergyPerByte, required(), nonNegative(),
                    "DRAM core and TSVs, per byte read (whole bursts)")
          .quantity("write_energy", &HbmEnergy::writeJPerByte, dim::kEnergyPerByte, required(), nonNegative(),
                    "DRAM core and TSVs, per byte written (whole bursts)")
          .quantity("refresh_energy", &HbmEnergy::refreshJ, dim::kEnergy, required(), nonNegative(),
                    "one all-bank refresh of one channel")
          .quantity("static", &HbmEnergy::staticW, dim::kPower, required(), nonNegative(),
                    "background (standby) power of all stacks");
  return s;
}

const Schema<InterconnectEnergy>& InterconnectEnergy::schema() {
  static const Schema<InterconnectEnergy> s =
      Schema<InterconnectEnergy>("interconnect_energy",
                                 "Energy of the on-chip network: wire energy per byte and millimetre times the mean "
                                 "distance a byte crosses between a unit and the HBM controllers or the SRAM.")
          .quantity("energy_per_mm", &InterconnectEnergy::jPerByteMetre, dim::kEnergyPerByteLength, required(),
                    nonNegative(),
                    "per byte (or bit) and millimetre of wire, repeaters and pipeline registers included")
          .quantity("memory_distance", &InterconnectEnergy::memoryDistanceM, dim::kLength, required(),
                    between(0.0, 1.0), "mean wire length a byte crosses between an HBM controller and a unit")
          .quantity("sram_distance", &InterconnectEnergy::sramDistanceM, dim::kLength, required(), between(0.0, 1.0),
                    "mean wire length a byte crosses between the SRAM and a unit")
          .quantity("static", &InterconnectEnergy::staticW, dim::kPower, required(), nonNegative(),
                    "drawn all the time");
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

const Schema<PowerCalibration>& PowerCalibration::schema() {
  static const Schema<PowerCalibration> s =
      Schema<PowerCalibration>("power_calibration",
                               "Where a chip type's energy values come from (docs/power.md#calibration).")
          .text("dataset", &PowerCalibration::dataset, required(),
                "the kernel dataset (workloads/validation/) whose power points the values were fitted on")
          .textList("training", &PowerCalibration::training, required(), "the dataset's power points the fit used")
          .textList("fitted", &PowerCalibration::fitted, required(),
                    "the keys of this `power` section the fit set; every other value is stated in the file")
          .text("date", &PowerCalibration::date, required(), "when the fit was run (ISO 8601)")
          .text("method", &PowerCalibration::method, required(), "the command that reproduces the fit")
          .text("derived_from", &PowerCalibration::derivedFrom, optional("~"),
                "absent: fitted on this chip type; else the chip type whose fitted values these scale "
                "(the scaling is stated next to each value)");
  return s;
}

double ChipEnergyConfig::coreStaticW() const {
  return tensorCore.staticW + vectorUnit.staticW + sram.staticW + (llc ? llc->staticW : 0.0) + interconnect.staticW;
}

double ChipEnergyConfig::idleW() const {
  return uncoreW + coreStaticW() + hbm.staticW + memoryInterface.staticW + fabricPorts.staticW;
}

double ChipEnergyConfig::leakageScale(double voltageV) const {
  const double nominal = nominalVoltage();
  if (nominal <= 0.0 || voltageV == nominal) return 1.0;
  return voltageV / nominal * std::exp(leakagePerVolt * (voltageV - nominal));
}

double ChipEnergyConfig::staticAtW(double voltageScale, double gatedW, double temperatureScale) const {
  const double leakage = leakageScale(voltageScale * nominalVoltage()) * temperatureScale;
  return idleW() - (coreStaticW() - gatedW) * (1.0 - leakage) - gatedW;
}

double ChipEnergyConfig::voltageAt(double frequencyHz) const {
  if (dvfs.empty()) return 0.0;
  if (frequencyHz >= dvfs.front().frequencyHz) return dvfs.front().voltageV;
  for (std::size_t i = 1; i < dvfs.size(); ++i) {
    const DvfsPoint& hi = dvfs[i - 1];
    const DvfsPoint& lo = dvfs[i];
    if (frequencyHz >= lo.frequencyHz) {
      const double t = (frequencyHz - lo.frequencyHz) / (hi.frequencyHz - lo.frequencyHz);
      return lo.voltageV + t * (hi.voltageV - lo.voltageV);
    }
  }
  return dvfs.back().voltageV;
}

const Schema<ChipEnergyConfig>& ChipEnergyConfig::schema() {
  static const Schema<ChipEnergyConfig> s =
      Schema<ChipEnergyConfig>(
          "chip_power",
          "Energy of a chip type, level by level along the path of a byte (HBM core, memory interface, "
          "last-level cache, on-chip network, SRAM, register file, datapath), the clocked-active floor and the "
          "static power of each unit (docs/power.md#energy-by-level). The power monitor multiplies the activity "
          "the timing model reports with these energies; the timing model never computes energy. Energies are at "
          "the first dvfs point: core-rail dynamic energy scales with voltage squared, core-rail leakage with "
          "leakage_per_volt.")
          .quantity("uncore", &ChipEnergyConfig::uncoreW, dim::kPower, required(), nonNegative(),
                    "always-on power outside the units below (PLLs, management, voltage-regulator loss)")
          .quantity("floor", &ChipEnergyConfig::floorW, dim::kPower, optional("0 W"), nonNegative(),
                    "clocked-active floor at the nominal point: clock tree, front ends and schedulers, drawn while "
                    "the chip's tensor core, vector unit, SRAM or HBM traffic works (the power manager's clock "
                    "gating); scales as voltage squared times frequency")
          .quantity("clock_hold", &ChipEnergyConfig::clockHoldS, dim::kTime, optional("0 s"), between(0.0, 1.0),
                    "idle gaps shorter than this keep the clocks, and the floor, on")
          .number("leakage_per_volt", &ChipEnergyConfig::leakagePerVolt, optional("0"), between(0.0, 20.0),
                  "k in 1/V: core-rail leakage at voltage V is its static power x (V / V nominal) x "
                  "exp(k (V - V nominal)) (subthreshold leakage with drain-induced barrier lowering)")
          .number("data_independent_share", &ChipEnergyConfig::dataIndependentShare, optional("1"), between(0.0, 1.0),
                  "share of the memory interface's and the on-chip network's energy per byte that does not depend "
                  "on the data (clocks, strobes, control); the rest scales with the data's toggle rate (1 for "
                  "random data, 0 for a constant)")
          .child("tensor_core", &ChipEnergyConfig::tensorCore, TensorCoreEnergy::schema(), required(),
                 "matrix engine: datapath and register file / operand delivery")
          .child("vector_unit", &ChipEnergyConfig::vectorUnit, VectorUnitEnergy::schema(), required(),
                 "element-wise unit")
          .child("sram", &ChipEnergyConfig::sram, AccessEnergy::schema(), required(),
                 "SRAM or shared memory: its own accesses, and the staging of every byte moved between HBM and a "
                 "unit (written on arrival, read once by its consumer)")
          .optionalChild("llc", &ChipEnergyConfig::llc, AccessEnergy::schema(),
                         "memory-side last-level cache (a GPU's L2) that every HBM byte crosses, per byte read from "
                         "and written to HBM; absent: none")
          .child("interconnect", &ChipEnergyConfig::interconnect, InterconnectEnergy::schema(), required(),
                 "on-chip network: per byte and millimetre over the mean distance")
          .child("hbm", &ChipEnergyConfig::hbm, HbmEnergy::schema(), required(), "HBM DRAM core and TSVs")
          .child("memory_interface", &ChipEnergyConfig::memoryInterface, AccessEnergy::schema(), required(),
                 "HBM PHYs at both ends and the memory controller, per byte of whole bursts")
          .child("fabric_ports", &ChipEnergyConfig::fabricPorts, PortEnergy::schema(), required(),
                 "SerDes ports: per byte sent or received on one link direction")
          .childList("dvfs", &ChipEnergyConfig::dvfs, DvfsPoint::schema(), optional("[]"),
                     "core (tensor core and vector unit) operating points, highest first; the first is the "
                     "nominal clock, equal to tensor_core.clock. The platform's power.governor moves between "
                     "them: core dynamic energy scales with voltage squared and core timing with frequency")
          .child("transitions", &ChipEnergyConfig::transitions, PowerTransitions::schema(), optional("{}"),
                 "cost of a change of operating point or of powered tensor arrays (serving phase policies)")
          .optionalChild("calibration", &ChipEnergyConfig::calibration, PowerCalibration::schema(),
                         "provenance of the values: the dataset, training points and fitted keys, or the chip type "
                         "they were derived from")
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
                   {"cap_target", GovernorKind::kCapTarget},
                   {"thermal", GovernorKind::kThermal}},
                  optional("none"),
                  "none: always the nominal point; cap_rated: cap at the chip's rated_power; cap_target: cap at "
                  "`target`; thermal: no power cap, the die held under its chip type's thermal.junction_limit (chip "
                  "types without `thermal` run at the nominal point). A cap also holds the junction limit of a chip "
                  "type with `thermal`")
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
