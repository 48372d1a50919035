#pragma once
// Energy by where it is spent. The power model counts what each activity event moved or computed,
// level by level along the path of a byte (HBM core, memory interface, last-level cache, on-chip
// network, SRAM, register file, datapath), and prices every count with exactly one value of the
// chip type's `power` section (docs/power.md#energy-by-level):
//
//   energy of a level = sum over its counters of count x price
//
// Counts are kept *effective*: already multiplied by what scales their energy at the moment they
// were counted (the core voltage squared for the core rail, the data's toggle rate for wires, the
// core frequency for the clocked floor), so that prices are the nominal ones of the file and the
// same counters serve the report's breakdown and the calibration fit (workloads/PowerCalibration.h), whose
// unknowns are prices.

#include <array>
#include <cstddef>

#include "power/PowerConfig.h"

namespace scoville::tlm {
struct ActivityEvent;  // tlm/ActivityBus.h; declared only, so that the prices and counts stay free of SystemC
}  // namespace scoville::tlm

namespace scoville::power {

/// Where energy goes on a chip (the report's `by_level_j`).
enum class Level {
  kDatapath,         ///< tensor-core MACs
  kRegisterFile,     ///< operands fed to and results drained from the tensor arrays
  kVectorUnit,       ///< element operations
  kSram,             ///< SRAM / shared memory: its accesses and the staging of HBM bytes
  kLlc,              ///< memory-side last-level cache
  kNoc,              ///< on-chip network wires
  kMemoryInterface,  ///< HBM PHYs and controller
  kHbm,              ///< DRAM core and TSVs, commands and refresh
  kFabricPorts,      ///< SerDes link ports
  kFloor,            ///< clocked-active floor
  kWake,             ///< powering gated tensor arrays back on
};
inline constexpr std::size_t kLevels = 11;
const char* levelName(Level level);

/// One count priced by one value of the `power` section.
enum class Counter {
  kFlopsFp32,
  kFlopsBf16,
  kFlopsFp8,
  kFlopsFp4,
  kOperandBytes,
  kVectorOps,
  kSramReadBytes,
  kSramWriteBytes,
  kLlcReadBytes,
  kLlcWriteBytes,
  kNocByteMetres,
  kInterfaceReadBytes,
  kInterfaceWriteBytes,
  kHbmReadBytes,
  kHbmWriteBytes,
  kActivates,
  kPrecharges,
  kRefreshes,
  kLinkBytes,
  kClockActiveSeconds,
  kWakeArrays,
  kConvertOps,
};
inline constexpr std::size_t kCounters = 22;
const char* counterName(Counter counter);
/// The level a counter's energy is booked to.
Level levelOf(Counter counter);
/// Whether a counter is on the core rail (its count carries the core voltage squared).
bool onCoreRail(Counter counter);
/// The price of one (effective) count: the `power` value that prices it.
double priceOf(const ChipEnergyConfig& energy, Counter counter);

using Counts = std::array<double, kCounters>;

/// What one activity event counts on a chip of `energy`'s type, and its energy.
struct CountedEvent {
  struct Part {
    Counter counter;
    Level level;    ///< levelOf(counter)
    double count;   ///< effective count
    double joules;  ///< count x price
  };
  std::array<Part, 4> parts;  ///< the first `size` are the counters the event touches (at most four)
  std::size_t size = 0;
  double joules = 0.0;  ///< sum of the parts
  double coreJ = 0.0;   ///< the part whose rate follows the core clock (datapath, register file, vector, floor)
};

/// Counts an activity event. `burstBytes`: the HBM burst size (DRAM bursts are counted in bytes);
/// `voltageScale` and `frequencyScale`: the core's operating point over the nominal one. Switch
/// events count nothing here (a switch's own model prices them).
CountedEvent countEvent(const ChipEnergyConfig& energy, const tlm::ActivityEvent& event, double burstBytes,
                        double voltageScale, double frequencyScale);

/// sum of counts x prices.
double priced(const ChipEnergyConfig& energy, const Counts& counts);

}  // namespace scoville::power
