#pragma once
// What the power model needs from the configuration: the energy of each kind of activity and the
// static power of each unit of a chip type (key `power` of a chip type), the energy of a switch
// (key `power` of a switch), and how the platform's power is monitored and managed (key `power`
// of a platform: timeline interval, sustained-power windows, DVFS governor).
//
// Energies are per event in SI units (J per FLOP, J per byte, J per command); the power monitor
// multiplies them with the activity events the timing model emits. Static power is drawn all the
// time; a chip's idle power is the sum of its units' static power and its uncore.

#include <string>
#include <vector>

#include "tlm/Precision.h"
#include "tlm/config/Schema.h"

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

struct TensorCoreEnergy {
  FlopEnergies perFlop;
  double operandJPerByte = 0.0;  ///< per byte of operands fed to and results drained from the arrays
  double staticW = 0.0;
  static const config::Schema<TensorCoreEnergy>& schema();
};

struct VectorUnitEnergy {
  double perOpJ = 0.0;  ///< per element operation
  double staticW = 0.0;
  static const config::Schema<VectorUnitEnergy>& schema();
};

struct SramEnergy {
  double readJPerByte = 0.0;
  double writeJPerByte = 0.0;
  double staticW = 0.0;
  static const config::Schema<SramEnergy>& schema();
};

struct HbmEnergy {
  double activateJ = 0.0;      ///< one ACT of one bank
  double prechargeJ = 0.0;     ///< one PRE of one bank
  double readJPerByte = 0.0;   ///< DRAM core and TSVs, per byte read
  double writeJPerByte = 0.0;  ///< per byte written
  double ioJPerByte = 0.0;     ///< PHYs on both ends, per byte moved either way
  double refreshJ = 0.0;       ///< one all-bank refresh of one channel
  double staticW = 0.0;        ///< background power of all stacks
  static const config::Schema<HbmEnergy>& schema();
};

/// Energy per byte through a port plus static power (on-chip network, SerDes ports).
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

/// Key `power` of a chip type.
struct ChipEnergyConfig {
  double uncoreW = 0.0;  ///< always-on power outside the units (PLLs, management, VRM loss)
  TensorCoreEnergy tensorCore;
  VectorUnitEnergy vectorUnit;
  SramEnergy sram;
  HbmEnergy hbm;
  PortEnergy interconnect;
  PortEnergy fabricPorts;
  /// Core operating points, highest first; the first is the nominal clock. Empty: no DVFS.
  std::vector<DvfsPoint> dvfs;
  PowerTransitions transitions;

  /// Static power of every unit plus the uncore: what the chip draws when idle at nominal voltage.
  double idleW() const;
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
