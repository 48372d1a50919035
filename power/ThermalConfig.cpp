#include "power/ThermalConfig.h"

#include <cmath>
#include <stdexcept>

namespace scoville::power {

using namespace scoville::config;

const char* coolingKindName(CoolingKind kind) {
  return kind == CoolingKind::kAir ? "air" : "liquid";
}

double LeakageTemperatureConfig::scale(double dieC) const {
  return std::exp2((dieC - referenceC) / doublingK);
}

const Schema<ThermalStage>& ThermalStage::schema() {
  static const Schema<ThermalStage> s =
      Schema<ThermalStage>("thermal_stage", "One node of the thermal network.")
          .quantity("resistance", &ThermalStage::resistanceKPerW, dim::kThermalResistance, required(), positive(),
                    "thermal resistance to the next node toward the ambient")
          .quantity("capacitance", &ThermalStage::capacitanceJPerK, dim::kHeatCapacity, required(), positive(),
                    "heat capacity of the node");
  return s;
}

const Schema<CoolerConfig>& CoolerConfig::schema() {
  static const Schema<CoolerConfig> s =
      Schema<CoolerConfig>("cooler", "A heat sink in moving air or a cold plate in a coolant loop.")
          .text("name", &CoolerConfig::name, required(), "what `thermal.cooling` calls it")
          .choice("kind", &CoolerConfig::kind, {{"air", CoolingKind::kAir}, {"liquid", CoolingKind::kLiquid}},
                  required(), "air: a heat sink with fans; liquid: a cold plate in a coolant loop")
          .quantity("ambient", &CoolerConfig::ambientC, dim::kTemperature, required(), between(-40.0, 80.0),
                    "inlet air or coolant temperature, in degrees Celsius")
          .quantity("resistance", &CoolerConfig::resistanceKPerW, dim::kThermalResistance, required(), positive(),
                    "thermal resistance from the cooler's base to the air or coolant")
          .quantity("capacitance", &CoolerConfig::capacitanceJPerK, dim::kHeatCapacity, required(), positive(),
                    "heat capacity of the heat sink or cold plate and what it holds");
  return s;
}

const Schema<LeakageTemperatureConfig>& LeakageTemperatureConfig::schema() {
  static const Schema<LeakageTemperatureConfig> s =
      Schema<LeakageTemperatureConfig>("leakage_temperature",
                                       "Core-rail leakage against the die temperature: leakage(T) = leakage(reference) "
                                       "x 2^((T - reference) / doubling).")
          .quantity("reference", &LeakageTemperatureConfig::referenceC, dim::kTemperature, required(),
                    between(-40.0, 150.0), "the die temperature the chip type's static powers are given at, in C")
          .quantity("doubling", &LeakageTemperatureConfig::doublingK, dim::kTemperature, required(),
                    between(1.0, 200.0), "the rise of the die temperature that doubles the leakage");
  return s;
}

const CoolerConfig& ThermalConfig::cooler() const {
  for (const CoolerConfig& c : coolers) {
    if (c.name == cooling) return c;
  }
  throw std::logic_error("thermal: no cooler '" + cooling + "'");
}

ThermalStart ThermalConfig::startKind() const {
  if (start == "idle") return ThermalStart::kIdle;
  if (start == "rated") return ThermalStart::kRated;
  if (start == "ambient") return ThermalStart::kAmbient;
  return ThermalStart::kPower;
}

double ThermalConfig::startPowerW() const {
  return startKind() == ThermalStart::kPower ? parseQuantityAs(start, dim::kPower) : 0.0;
}

const Schema<ThermalConfig>& ThermalConfig::schema() {
  static const Schema<ThermalConfig> s =
      Schema<ThermalConfig>(
          "thermal",
          "A compact thermal model of the chip in its cooling (docs/thermal.md): die and HBM stacks conduct into "
          "the lid, the lid into the cooler, the cooler into the air or coolant. Power heats the nodes, the die "
          "temperature scales the core-rail leakage, HBM above hbm_refresh_limit refreshes twice as often, and a "
          "platform governor with impl thermal (or a power cap) holds the die under junction_limit. Absent: no "
          "thermal model.")
          .child("die", &ThermalConfig::die, ThermalStage::schema(), required(),
                 "the compute die: its heat capacity, and die + TIM1 resistance to the lid")
          .child("hbm", &ThermalConfig::hbm, ThermalStage::schema(), required(),
                 "the HBM stacks taken together: their heat capacity and resistance to the lid")
          .child("lid", &ThermalConfig::lid, ThermalStage::schema(), required(),
                 "the package lid or heat spreader: its heat capacity and TIM2 resistance to the cooler")
          .childList("coolers", &ThermalConfig::coolers, CoolerConfig::schema(), required(),
                     "the coolers the chip can be built with")
          .text("cooling", &ThermalConfig::cooling, required(), "the name of the cooler in `coolers` the chip has")
          .quantity("junction_limit", &ThermalConfig::junctionLimitC, dim::kTemperature, required(),
                    between(40.0, 200.0), "the die's temperature limit, in C")
          .quantity("hbm_refresh_limit", &ThermalConfig::hbmRefreshLimitC, dim::kTemperature, optional("85 C"),
                    between(40.0, 150.0),
                    "above it the HBM refreshes at twice the rate (JEDEC's extended temperature range), in C")
          .quantity("hbm_refresh_hysteresis", &ThermalConfig::hbmRefreshHysteresisK, dim::kTemperature, optional("1 K"),
                    between(0.0, 20.0), "the HBM returns to the normal rate below the limit less this")
          .child("leakage", &ThermalConfig::leakage, LeakageTemperatureConfig::schema(), required(),
                 "core-rail leakage against the die temperature")
          .text("start", &ThermalConfig::start, optional("idle"),
                "the run starts at the steady state of: idle (idle power), rated (the rated power), a power such as "
                "'550 W', or ambient (every node at the ambient temperature)")
          .quantity("step", &ThermalConfig::stepS, dim::kTime, optional("1 ms"), between(1e-6, 1.0),
                    "integration step while the chip works (the network is solved exactly over a step at the step's "
                    "mean power; idle stretches take longer steps)")
          .quantity("throttle_hysteresis", &ThermalConfig::throttleHysteresisK, dim::kTemperature, optional("2 K"),
                    between(0.0, 20.0), "a throttled core speeds up only when predicted below the limit less this")
          .check(
              "cooling names a cooler, cooler names are unique, start is known and the limits are above the "
              "ambient",
              [](const ThermalConfig& c, const Node& node) {
                bool found = false;
                for (std::size_t i = 0; i < c.coolers.size(); ++i) {
                  for (std::size_t j = 0; j < i; ++j) {
                    if (c.coolers[j].name == c.coolers[i].name) {
                      node.at("coolers").at(i).at("name").fail(
                          ErrorKind::kInvalidConfig,
                          fmt::format("'{}.coolers[{}].name': '{}' is the name of coolers[{}] too", node.path(), i,
                                      c.coolers[i].name, j));
                    }
                  }
                  found = found || c.coolers[i].name == c.cooling;
                }
                if (!found) {
                  std::string names;
                  for (const CoolerConfig& k : c.coolers) names += (names.empty() ? "" : ", ") + k.name;
                  node.at("cooling").fail(
                      ErrorKind::kInvalidConfig,
                      fmt::format("'{}.cooling': '{}' is not one of its coolers ({})", node.path(), c.cooling, names));
                }
                if (c.startKind() == ThermalStart::kPower) {
                  double w = 0.0;
                  try {
                    w = c.startPowerW();
                  } catch (const UnitError& e) {
                    node.at("start").fail(ErrorKind::kBadUnit,
                                          fmt::format("'{}.start': expected idle, rated, ambient or a power such as "
                                                      "'550 W' ({})",
                                                      node.path(), e.what()));
                  }
                  if (!(w > 0.0) || w > 1e6) {
                    node.at("start").fail(
                        ErrorKind::kInvalidConfig,
                        fmt::format("'{}.start': {} W is not a plausible power (0 to 1 MW)", node.path(), w));
                  }
                }
                const double ambient = c.cooler().ambientC;
                if (!(c.junctionLimitC > ambient) || !(c.hbmRefreshLimitC > ambient)) {
                  node.at("junction_limit")
                      .fail(ErrorKind::kInvalidConfig,
                            fmt::format("'{}': junction_limit and hbm_refresh_limit must lie above cooler '{}''s "
                                        "ambient {} C",
                                        node.path(), c.cooling, ambient));
                }
              });
  return s;
}

}  // namespace scoville::power
