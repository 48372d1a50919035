#include "cli/MemoryEstimate.h"

#include <cstdint>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "config/ConfigError.h"
#include "config/Units.h"
#include "hw/network/GraphFabric.h"
#include "platforms/Platform.h"

namespace scoville::cli {

namespace {

// Fitted on the training runs of docs/performance.md#memory (decode steps of tiny-dense on
// rings of 64 and 256 jalapeno chips, peak RSS less the routes counted below); the runs of 16,
// 512 and 1000 chips are the predictions reported there.
constexpr double kProcessBytes = 13.35e6;
constexpr double kChipBytes = 252e3;

/// glibc's heap block for `bytes` requested: a 16-byte aligned chunk with an 8-byte header, at
/// least 32 bytes.
double heapBlock(std::size_t bytes) {
  const std::size_t chunk = (bytes + 8 + 15) / 16 * 16;
  return static_cast<double>(chunk < 32 ? 32 : chunk);
}

/// A route of `hops` links as FabricRoutes keeps it: a std::vector<int> grown by push_back, so
/// its capacity is the power of two at or above `hops`.
double routeBytes(int hops) {
  if (hops == 0) return sizeof(std::vector<int>);
  std::size_t capacity = 1;
  while (capacity < static_cast<std::size_t>(hops)) capacity *= 2;
  return sizeof(std::vector<int>) + heapBlock(capacity * sizeof(int));
}

/// Every ordered chip pair's route, from the hop distances FabricRoutes' paths follow.
double fabricRouteBytes(const hw::FabricGraph& graph) {
  const hw::FabricAdjacency adjacent = hw::adjacency(graph);
  double bytes = sizeof(std::vector<std::vector<int>>);
  for (int dst = 0; dst < graph.chips; ++dst) {
    const std::vector<int> distance = hw::hopDistances(adjacent, dst);
    for (int src = 0; src < graph.chips; ++src) {
      bytes += routeBytes(std::max(0, distance[static_cast<std::size_t>(src)]));
    }
  }
  return bytes;
}

std::string bytesText(double bytes) {
  return config::formatQuantity(bytes, config::dim::kBytes);
}

}  // namespace

double MemoryEstimate::bytes() const {
  double sum = 0.0;
  for (const Part& p : parts) sum += p.bytes;
  return sum;
}

std::vector<std::string> MemoryEstimate::partsText() const {
  std::vector<std::string> out;
  for (const Part& p : parts) out.push_back(fmt::format("{} {}", p.name, bytesText(p.bytes)));
  return out;
}

MemoryEstimate estimateRunMemory(const Inputs& inputs) {
  const platform::PlatformConfig& config = inputs.platform;
  const int chips = config.chipCount();
  MemoryEstimate estimate;
  estimate.parts.push_back({"process", kProcessBytes, "SystemC, the libraries and the loaded configuration"});
  estimate.parts.push_back({"chips", kChipBytes * chips,
                            fmt::format("{} chips x {} (modules, ports, statistics)", chips, bytesText(kChipBytes))});
  if (config.network.topology != platform::Topology::kNone &&
      config.network.topology != platform::Topology::kSwitched) {
    const hw::FabricGraph graph = platform::buildFabricGraph(config);
    estimate.parts.push_back(
        {"fabric routes", fabricRouteBytes(graph),
         fmt::format("{} ordered chip pairs, each route's links", static_cast<double>(chips) * chips)});
  }
  const auto bins = static_cast<double>(config.power.maxBins);
  estimate.timelineBound = {"power timelines", 8.0 * bins * (chips + 1),
                            fmt::format("at most power.max_bins = {} bins of 8 B per chip and for the switches", bins)};
  return estimate;
}

double memoryLimit(const std::string& text) {
  if (text.empty() || text == "auto") {
    std::ifstream meminfo("/proc/meminfo");
    std::string line;
    while (std::getline(meminfo, line)) {
      if (line.rfind("MemAvailable:", 0) == 0) {
        std::istringstream fields(line.substr(13));
        double kib = 0.0;
        if (fields >> kib && kib > 0) return kib * 1024.0;
      }
    }
    return 0.0;  // unknown: no limit
  }
  double bytes = 0.0;
  try {
    bytes = config::parseQuantityAs(text, config::dim::kBytes);
  } catch (const config::UnitError& e) {
    throw config::ConfigError(config::ErrorKind::kBadUnit, "--max-memory " + text, e.what());
  }
  if (!(bytes > 0)) {
    throw config::ConfigError(config::ErrorKind::kOutOfRange, "--max-memory " + text, "the limit must be positive");
  }
  return bytes;
}

void checkMemory(const MemoryEstimate& estimate, double limitBytes, const std::string& limitText) {
  if (!(limitBytes > 0)) return;
  const bool parts = estimate.bytes() > limitBytes;
  const bool timelines = estimate.timelineBound.bytes > limitBytes;
  if (!parts && !timelines) return;
  std::string lines;
  for (const MemoryEstimate::Part& p : estimate.parts) {
    lines += fmt::format("\n  {:<16} {:>10}  ({})", p.name, bytesText(p.bytes), p.basis);
  }
  lines += fmt::format("\n  {:<16} {:>10}  ({}; grows with simulated time)", estimate.timelineBound.name,
                       bytesText(estimate.timelineBound.bytes), estimate.timelineBound.basis);
  throw config::ConfigError(
      config::ErrorKind::kDoesNotFit, "--max-memory " + (limitText.empty() ? std::string("auto") : limitText),
      fmt::format("the run would need about {} ({}) but may use {}{}:{}",
                  bytesText(parts ? estimate.bytes() : estimate.timelineBound.bytes),
                  parts ? "from its start" : "its power timelines alone, at most", bytesText(limitBytes),
                  limitText.empty() || limitText == "auto" ? " (the machine's available memory)" : "", lines));
}

}  // namespace scoville::cli
