#pragma once
// `scoville memory`: one HBM controller configuration (a memory part file, platforms/memory/)
// driven by a traffic generator (workloads/MemoryTraffic.h) with a fixed number of requests
// outstanding, in LT or AT, in this process's one elaboration. The microbenchmark of the DRAM
// model, and how it is checked against DRAMSys or Ramulator 2: achieved bandwidth against peak,
// latency percentiles, row-buffer hit rate, command counts and energy per bit.

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "hw/dram/MemoryControllerConfig.h"
#include "tlm/TimingMode.h"
#include "config/Schema.h"
#include "power/PowerConfig.h"
#include "workloads/MemoryTraffic.h"

namespace scoville::cli {

/// A memory part file: one controller and the energy of its DRAM and interface.
struct MemoryPart {
  std::string name;
  std::string description;
  hw::MemoryControllerConfig hbm;
  power::HbmEnergy energy;        ///< DRAM core and TSVs (static power is not counted per bit)
  power::AccessEnergy interface;  ///< PHYs and controller, per byte of whole bursts
  static const config::Schema<MemoryPart>& schema();
};

/// What a run of the traffic gave.
struct MemoryBenchResult {
  uint64_t requests = 0;
  double bytesRead = 0.0;
  double bytesWritten = 0.0;
  double simulatedS = 0.0;  ///< from the first issue to the last response
  double peakBytesPerS = 0.0;
  std::vector<double> latenciesS;  ///< per request, issue to response, sorted
  // The controller's command counts (all channels).
  double activates = 0, precharges = 0, rowHits = 0, rowMisses = 0, rowConflicts = 0;
  double readBursts = 0, writeBursts = 0, refreshes = 0, turnarounds = 0;
  double energyJ = 0.0;  ///< DRAM core, TSVs and interface, dynamic only
  double wallS = 0.0;    ///< host time of the simulation (not in the report)

  double bandwidth() const { return simulatedS > 0 ? (bytesRead + bytesWritten) / simulatedS : 0.0; }
  double rowHitRate() const;
  /// The p-th percentile (0 < p <= 100, nearest rank) of the latencies.
  double latencyPercentile(double p) const;
  double energyPerBitJ() const;
};

/// Elaborates the controller and a generator issuing `traffic` with `outstanding` requests in
/// flight, runs them (sc_start) and returns the outcome. Throws SimulationError when a request
/// fails, and std::invalid_argument for traffic the part cannot take.
MemoryBenchResult runMemoryBench(const MemoryPart& part, const workload::MemoryTrafficConfig& traffic, int outstanding,
                                 tlm::TimingMode mode);

/// The report of a run (deterministic: no host time).
nlohmann::json memoryReport(const MemoryPart& part, const workload::MemoryTrafficConfig& traffic, int outstanding,
                            tlm::TimingMode mode, const MemoryBenchResult& result);

}  // namespace scoville::cli
