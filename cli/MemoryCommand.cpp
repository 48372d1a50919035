// `scoville memory PART`: drives one HBM controller configuration (platforms/memory/) with a
// traffic generator and reports achieved bandwidth against peak, latency percentiles, row-buffer
// hit rate, command counts, energy per bit and simulated requests per wall-second
// (cli/MemoryBench.h). Writes report.json when --out is given.
#include <fmt/format.h>

#include <boost/program_options.hpp>
#include <ostream>
#include <stdexcept>

#include "cli/Commands.h"
#include "cli/Inputs.h"
#include "cli/MemoryBench.h"
#include "cli/ReportWriter.h"
#include "config/ConfigError.h"
#include "config/Loader.h"

namespace scoville::cli {

namespace po = boost::program_options;

int memoryCommand(const Args& args, std::ostream& out) {
  std::string partName, pattern = "sequential", traceFile, timing = "lt", outDir;
  std::vector<std::string> sets;
  uint64_t requestBytes = 64, strideBytes = 4096, requests = 100000, seed = 1;
  double readRatio = 1.0;
  int outstanding = 16;
  bool json = false;
  po::options_description description(
      "scoville memory: drive one HBM controller configuration with a traffic generator");
  description.add_options()("help,h", "show this help")("pattern", po::value(&pattern)->default_value(pattern),
                                                        "sequential, random, strided or trace")(
      "request-size", unsignedValue(requestBytes, "--request-size"), "bytes per request (aligned to it)")(
      "stride", unsignedValue(strideBytes, "--stride"), "bytes between requests (strided)")(
      "read-ratio", po::value(&readRatio)->default_value(readRatio),
      "fraction of reads, 0 to 1 (mixed read:write traffic on any synthetic pattern)")(
      "outstanding", po::value(&outstanding)->default_value(outstanding), "requests in flight, 1 to 65536")(
      "requests", unsignedValue(requests, "--requests"), "requests to issue (synthetic patterns)")(
      "seed", unsignedValue(seed, "--seed"), "seed of the random pattern")(
      "trace", po::value(&traceFile), "trace file (CSV time_ns,address,bytes,op) for --pattern trace")(
      "timing", po::value(&timing)->default_value(timing), "timing mode: lt or at")(
      "set", po::value(&sets)->composing(),
      "override a key of the part, e.g. memory.hbm.page_policy={impl: closed} (repeatable)")(
      "out,o", po::value(&outDir), "write report.json into this directory")(
      "json", po::bool_switch(&json), "print the report as JSON instead of the table");
  const po::variables_map vm = parseWithPositional(args, description, partName);
  if (vm.count("help")) {
    out << "usage: scoville memory PART [OPTIONS]\n"
        << "PART: a platforms/memory/ name ("
        << fmt::format("{}", fmt::join(config::shippedNames("platforms/memory"), ", ")) << ") or a file\n"
        << description << "\n";
    return kExitOk;
  }
  if (partName.empty()) throw po::error("give a memory PART (a platforms/memory/ name or a file)");

  workload::MemoryTrafficConfig traffic;
  bool known = false;
  for (const auto& [name, value] : workload::trafficPatternNames()) {
    if (name == pattern) {
      traffic.pattern = value;
      known = true;
    }
  }
  if (!known) throw po::error(fmt::format("--pattern must be sequential, random, strided or trace, got '{}'", pattern));
  if ((traffic.pattern == workload::TrafficPattern::kTrace) != !traceFile.empty()) {
    throw po::error("--trace FILE goes with --pattern trace, and only with it");
  }
  if (outstanding < 1 || outstanding > 65536) {
    throw po::error(fmt::format("--outstanding must be between 1 and 65536, got {}", outstanding));
  }
  if (requests == 0) throw po::error("--requests must be at least 1");
  traffic.requestBytes = requestBytes;
  traffic.strideBytes = strideBytes;
  traffic.readRatio = readRatio;
  traffic.requests = requests;
  traffic.seed = seed;
  traffic.traceFile = traceFile;
  const tlm::TimingMode mode = parseTimingMode(timing);

  config::Overrides overrides({"memory"});
  for (const std::string& s : sets) overrides.add(s);
  const std::string file = config::resolveConfigFile("memory part", "PART", "platforms/memory", partName);
  const MemoryPart part =
      MemoryPart::schema().parse(config::loadConfigFile("memory", file, overrides.forRoot("memory")));
  if (!outDir.empty()) prepareOutputDirectory(outDir);

  MemoryBenchResult result;
  try {
    result = runMemoryBench(part, traffic, outstanding, mode);
  } catch (const std::invalid_argument& e) {
    throw po::error(e.what());
  }
  const nlohmann::json report = memoryReport(part, traffic, outstanding, mode, result);
  if (!outDir.empty()) writeFileAtomically(outDir + "/report.json", report.dump(2) + "\n");
  if (json) {
    out << report.dump(2) << "\n";
    return kExitOk;
  }
  const double bw = result.bandwidth();
  out << fmt::format("memory {} ({} channels, {:.1f} GB/s peak), {} {} B requests, read ratio {}, {} outstanding, {}\n",
                     part.name, part.hbm.channels, part.hbm.bandwidthBytesPerS / 1e9, pattern, requestBytes, readRatio,
                     outstanding, timing);
  out << fmt::format("  bandwidth          {:.2f} GB/s = {:.1f}% of peak\n", bw / 1e9,
                     100.0 * bw / result.peakBytesPerS);
  out << fmt::format("  latency            p50 {:.1f} ns, p90 {:.1f} ns, p99 {:.1f} ns, max {:.1f} ns\n",
                     result.latencyPercentile(50) * 1e9, result.latencyPercentile(90) * 1e9,
                     result.latencyPercentile(99) * 1e9, result.latencyPercentile(100) * 1e9);
  out << fmt::format("  row-buffer hits    {:.1f}%\n", 100.0 * result.rowHitRate());
  out << fmt::format(
      "  commands           ACT {:.0f}, PRE {:.0f}, RD bursts {:.0f}, WR bursts {:.0f}, REF {:.4g}, "
      "turnarounds {:.0f}\n",
      result.activates, result.precharges, result.readBursts, result.writeBursts, result.refreshes, result.turnarounds);
  out << fmt::format("  energy             {:.2f} pJ/bit (DRAM core, TSVs and interface)\n",
                     result.energyPerBitJ() * 1e12);
  out << fmt::format("  simulation speed   {:.0f} requests per wall-second ({} requests in {:.3f} s)\n",
                     result.wallS > 0 ? static_cast<double>(result.requests) / result.wallS : 0.0, result.requests,
                     result.wallS);
  return kExitOk;
}

}  // namespace scoville::cli
