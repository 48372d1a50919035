#pragma once
// What the power model needs from the configuration: the energy of every level a byte crosses and
// of every operation, and the static power of each unit of a chip type (key `power` of a chip
// type), the energy of a switch (key `power` of a switch), and how the platform's power is
// monitored and managed (key `power` of a platform: timeline interval, sustained-power windows,
// DVFS governor).
//
// Energies are per event in SI units (J per FLOP, J per byte, J per byte and metre of wire, J per
// command) at the chip's nominal operating point; the power monitor multiplies them with the
// activity the timing model emits (docs/power.md#energy-by-level). Static power is drawn all the
// time; a chip's idle power is the sum of its units' static power and its uncore.

#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "config/Schema.h"
#include "tlm/Precision.h"

namespace scoville::power {

/// Energy per FLOP for each compute precision (0 where the tensor core has no datapath).
struct FlopEnergies {
  double fp32 = 0.0;
  double bf16 = 0.0;
  double fp8 = 0.0;
  double fp4 = 0.0;

  double of(tlm::Precision p) const;
  static const config::Schema<FlopEnergies>& schema();
};

/// The matrix engine: its datapath (per FLOP) and the register file and operand delivery that feed
/// it (per operand byte).
struct TensorCoreEnergy {
  FlopEnergies perFlop;
  double operandJPerByte = 0.0;  ///< per byte of operands fed to and results drained from the arrays
  double staticW = 0.0;
  static const config::Schema<TensorCoreEnergy>& schema();
};

struct VectorUnitEnergy {
  double perOpJ = 0.0;  ///< per element operation, all in (issue, operands, ALU)
  /// Per lane operation of a weight conversion in registers (MoeKernel convert_ops); 0: perOpJ.
  double perConvertOpJ = 0.0;
  double staticW = 0.0;
  /// What a conversion's lane operation costs: perConvertOpJ, or perOpJ where it is not given.
  double convertOpJ() const { return perConvertOpJ > 0.0 ? perConvertOpJ : perOpJ; }
  static const config::Schema<VectorUnitEnergy>& schema();
};

/// A level priced per byte read and per byte written: the SRAM, a memory-side cache, the memory
/// interface (PHY and controller).
struct AccessEnergy {
  double readJPerByte = 0.0;
  double writeJPerByte = 0.0;
  double staticW = 0.0;
  static const config::Schema<AccessEnergy>& schema();
};

/// The DRAM itself: its core and TSVs, per command and per byte of whole bursts.
struct HbmEnergy {
  double activateJ = 0.0;      ///< one ACT of one bank
  double prechargeJ = 0.0;     ///< one PRE of one bank
  double readJPerByte = 0.0;   ///< DRAM core and TSVs, per byte read
  double writeJPerByte = 0.0;  ///< per byte written
  double refreshJ = 0.0;       ///< one all-bank refresh of one channel
  double staticW = 0.0;        ///< background power of all stacks
  static const config::Schema<HbmEnergy>& schema();
};

/// The on-chip network: wire energy per byte and metre, times the distance a byte crosses.
struct InterconnectEnergy {
  double jPerByteMetre = 0.0;
  double memoryDistanceM = 0.0;  ///< mean wire length between the HBM controllers and a unit
  double sramDistanceM = 0.0;    ///< mean wire length between the SRAM and a unit
  double staticW = 0.0;
  static const config::Schema<InterconnectEnergy>& schema();
};

/// Energy per byte through a port plus static power (SerDes ports).
struct PortEnergy {
  double jPerByte = 0.0;
  double staticW = 0.0;
  static const config::Schema<PortEnergy>& schema();
};

/// One DVFS operating point of the chip's core clock domain (tensor cores and vector unit).
struct DvfsPoint {
  double frequencyHz = 0.0;
  double voltageV = 0.0;
  static const config::Schema<DvfsPoint>& schema();
};

/// What changing the core's operating state costs (a serving phase policy changes it between steps;
/// see workloads/PhasePolicy.h). The core does no work during a change.
struct PowerTransitions {
  double clockSwitchS = 0.0;   ///< moving to another DVFS point: voltage ramp and clock relock
  double wakeS = 0.0;          ///< powering gated tensor arrays back on (in-rush limited rail ramp)
  double wakeJPerArray = 0.0;  ///< recharging one array's power domain

  static const config::Schema<PowerTransitions>& schema();
};

/// Where a chip type's energy values come from: fitted on a kernel dataset by `scoville
/// calibrate-power`, or derived from such a fit by documented scaling.
struct PowerCalibration {
  std::string dataset;                ///< the kernel dataset (workloads/validation/)
  std::vector<std::string> training;  ///< the dataset's power points the fit used
  std::vector<std::string> fitted;    ///< the keys fitted; every other value is stated in the file
  std::string date;                   ///< when the fit was run (ISO 8601)
  std::string method;                 ///< the command that reproduces it
  std::string derivedFrom;            ///< empty: fitted on this chip type; else the chip type scaled from

  static const config::Schema<PowerCalibration>& schema();
};

/// Key `power` of a chip type.
struct ChipEnergyConfig {
  double uncoreW = 0.0;  ///< always-on power outside the units (PLLs, management, VRM loss)
  /// Clocked-active floor at the nominal point: clock tree, front ends and schedulers while the
  /// chip's compute units or its memory stream work; scales as V^2 f.
  double floorW = 0.0;
  double clockHoldS = 0.0;  ///< idle gaps shorter than this keep the clocks (and the floor) on
  /// Core-rail leakage at voltage V is leakage(V nominal) x (V / V nominal) x e^{k (V - V nominal)}.
  double leakagePerVolt = 0.0;
  /// Share of a wire's energy per byte that does not depend on the data (clocks, strobes, control):
  /// the memory interface and the on-chip network move data whose toggle rate scales the rest.
  double dataIndependentShare = 1.0;
  TensorCoreEnergy tensorCore;
  VectorUnitEnergy vectorUnit;
  AccessEnergy sram;
  std::optional<AccessEnergy> llc;  ///< a memory-side last-level cache every HBM byte crosses
  InterconnectEnergy interconnect;
  HbmEnergy hbm;
  AccessEnergy memoryInterface;  ///< PHYs at both ends and the memory controller
  PortEnergy fabricPorts;
  /// Core operating points, highest first; the first is the nominal clock. Empty: no DVFS.
  std::vector<DvfsPoint> dvfs;
  PowerTransitions transitions;
  std::optional<PowerCalibration> calibration;

  /// Static power of every unit plus the uncore: what the chip draws when idle at nominal voltage.
  double idleW() const;
  /// The part of idleW() on the core rail (tensor core, vector unit, SRAM, LLC, interconnect),
  /// whose leakage follows the core voltage.
  double coreStaticW() const;
  /// Core-rail leakage at `voltageV` over that at the nominal voltage (1 without dvfs points).
  double leakageScale(double voltageV) const;
  /// Static power with the core at `voltageScale` (V / V nominal) and `gatedW` of the tensor core's
  /// static power gated off (the rest of the core rail's leakage follows the voltage), the core-rail
  /// leakage scaled by `temperatureScale` (the die temperature's, ThermalConfig.h; 1 without one).
  double staticAtW(double voltageScale, double gatedW = 0.0, double temperatureScale = 1.0) const;
  /// The core voltage at `frequencyHz` on the dvfs points' curve (linear between points, clamped
  /// to the first and last); 0 without dvfs points.
  double voltageAt(double frequencyHz) const;
  /// The nominal core voltage (the first dvfs point's; 0 without dvfs points).
  double nominalVoltage() const { return dvfs.empty() ? 0.0 : dvfs.front().voltageV; }
  /// Core f / f nominal and V / V nominal at dvfs point `point` (a valid index).
  double frequencyScaleAt(std::size_t point) const { return dvfs.at(point).frequencyHz / dvfs.front().frequencyHz; }
  double voltageScaleAt(std::size_t point) const { return dvfs.at(point).voltageV / dvfs.front().voltageV; }
  static const config::Schema<ChipEnergyConfig>& schema();
};

/// Key `power` of a switch.
struct SwitchEnergyConfig {
  double jPerByte = 0.0;    ///< per byte forwarded (crossbar, buffers, SerDes of the switch's ports)
  double jPerPacket = 0.0;  ///< per packet forwarded (lookup, arbitration)
  double staticW = 0.0;
  static const config::Schema<SwitchEnergyConfig>& schema();
};

enum class GovernorKind {
  kNone,       ///< run at the nominal point whatever the power
  kCapRated,   ///< keep windowed power under the chip's rated power
  kCapTarget,  ///< keep windowed power under `target`
  kThermal,    ///< keep the die under its thermal.junction_limit (no power cap)
};

/// The DVFS governor of each chip: every `response_time` it averages the chip's power over the
/// last `window` and moves the core clock to the highest operating point predicted to stay under
/// the cap (dynamic core power scaled by V^2 f).
struct GovernorConfig {
  GovernorKind kind = GovernorKind::kNone;
  double targetW = 0.0;        ///< kCapTarget
  double windowS = 0.0;        ///< power is averaged over this window
  double responseTimeS = 0.0;  ///< decision period
  double hysteresis = 0.0;     ///< raise the clock only when predicted power < cap x (1 - hysteresis)

  /// Whether it drives a chip of `chip`'s type (`thermal`: with a thermal model): it is configured,
  /// the type has two dvfs points, and for kThermal the chip has a thermal model.
  bool drives(const ChipEnergyConfig& chip, bool thermal) const {
    return kind != GovernorKind::kNone && chip.dvfs.size() >= 2 && (kind != GovernorKind::kThermal || thermal);
  }
  /// The cap it holds a chip rated `ratedW` under (infinite for kThermal: no power cap).
  double capW(double ratedW) const {
    return kind == GovernorKind::kCapRated  ? ratedW
           : kind == GovernorKind::kThermal ? std::numeric_limits<double>::infinity()
                                            : targetW;
  }

  static const config::Schema<GovernorConfig>& schema();
};

/// Most bins a power timeline keeps by default (8 MiB of doubles): 10.5 s of simulated time at
/// 10 us before its bins start to merge.
inline constexpr std::size_t kDefaultMaxBins = std::size_t{1} << 20;

/// Key `power` of a platform.
struct PowerManagementConfig {
  double intervalS = 0.0;        ///< timeline bin
  std::vector<double> windowsS;  ///< sustained-power windows
  GovernorConfig governor;
  int maxBins = static_cast<int>(kDefaultMaxBins);  ///< past it, a timeline's adjacent bins merge

  static const config::Schema<PowerManagementConfig>& schema();
};

}  // namespace scoville::power
