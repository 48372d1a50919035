#pragma once
// Key `thermal` of a chip type: a compact thermal model of the chip in its cooling (docs/thermal.md).
//
// Four nodes: the compute die, the HBM stacks beside it, the lid (package and heat spreader) they
// both conduct into, and the cooler (an air heat sink or a liquid cold plate) that carries the heat
// to the ambient air or the coolant. Each node has a heat capacity and a thermal resistance to the
// next node toward the ambient: die -> lid, hbm -> lid, lid -> cooler, cooler -> ambient. A chip
// type lists the coolers it can be built with and names the one it has (`cooling`), so that air
// and liquid cooling of one chip are compared by changing one key.
//
// Absolute temperatures are in degrees Celsius ("105 C"); differences in kelvin or Celsius ("25 K").
// Absent: no thermal model, static power as configured at every temperature.

#include <string>
#include <vector>

#include "config/Schema.h"

namespace scoville::power {

/// One node of the thermal network: its heat capacity and its thermal resistance toward the ambient.
struct ThermalStage {
  double resistanceKPerW = 0.0;  ///< to the next node toward the ambient
  double capacitanceJPerK = 0.0;
  static const config::Schema<ThermalStage>& schema();
};

enum class CoolingKind { kAir, kLiquid };
const char* coolingKindName(CoolingKind kind);

/// A cooler: a heat sink in moving air or a cold plate in a coolant loop.
struct CoolerConfig {
  std::string name;
  CoolingKind kind = CoolingKind::kLiquid;
  double ambientC = 0.0;          ///< the inlet air's or the coolant's temperature
  double resistanceKPerW = 0.0;   ///< cooler base to the ambient (fins and air, or cold plate and coolant)
  double capacitanceJPerK = 0.0;  ///< of the heat sink or cold plate (and the coolant in it)
  static const config::Schema<CoolerConfig>& schema();
};

/// Core-rail leakage as a function of the die temperature: it doubles every `doublingK`, and the
/// chip type's static powers are its values at `referenceC`.
/// The die temperature leakage is evaluated at is capped here: past it the chip has run away
/// (the report says so), and the exponential would only overflow.
inline constexpr double kLeakageCapC = 250.0;

struct LeakageTemperatureConfig {
  double referenceC = 0.0;
  double doublingK = 0.0;
  /// Leakage at `dieC` over leakage at the reference temperature.
  double scale(double dieC) const;
  static const config::Schema<LeakageTemperatureConfig>& schema();
};

/// What the run starts from: the steady state at idle, at the rated power, at a given power, or
/// every node at the ambient temperature.
enum class ThermalStart { kIdle, kRated, kPower, kAmbient };

/// Key `thermal` of a chip type.
struct ThermalConfig {
  ThermalStage die;  ///< the compute die; resistance die -> lid (die, TIM1)
  ThermalStage hbm;  ///< the HBM stacks together; resistance stacks -> lid
  ThermalStage lid;  ///< package lid / heat spreader; resistance lid -> cooler (TIM2)
  std::vector<CoolerConfig> coolers;
  std::string cooling;                 ///< the name of the cooler the chip has
  double junctionLimitC = 0.0;         ///< the die's limit: a thermal governor holds it below
  double hbmRefreshLimitC = 0.0;       ///< above it the HBM refreshes at twice the rate
  double hbmRefreshHysteresisK = 0.0;  ///< back to the normal rate below limit - hysteresis
  LeakageTemperatureConfig leakage;
  std::string start = "idle";        ///< idle | rated | ambient | a power ("550 W")
  double stepS = 0.0;                ///< integration step while the chip works
  double throttleHysteresisK = 0.0;  ///< a throttled core speeds up only below limit - hysteresis

  /// The cooler named by `cooling` (the schema checks it exists).
  const CoolerConfig& cooler() const;
  /// What `start` says; for ThermalStart::kPower, the power is startPowerW().
  ThermalStart startKind() const;
  double startPowerW() const;
  static const config::Schema<ThermalConfig>& schema();
};

}  // namespace scoville::power
