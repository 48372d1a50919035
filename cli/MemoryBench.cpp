#include "cli/MemoryBench.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <memory>
#include <stdexcept>
#include <systemc>

#include "cli/Commands.h"
#include "hw/dram/MemoryController.h"
#include "tlm/InitiatorPort.h"
#include "tlm/PayloadPool.h"

namespace scoville::cli {

using namespace scoville::config;

const Schema<MemoryPart>& MemoryPart::schema() {
  using T = MemoryPart;
  static const Schema<T> s =
      Schema<T>("memory", "A memory part for `scoville memory`: one HBM controller and its energy.")
          .text("name", &T::name, required(), "short name")
          .text("description", &T::description, required(), "what the part is, with its sources")
          .child("hbm", &T::hbm, hw::MemoryControllerConfig::schema(), required(), "the controller and its channels")
          .child("energy", &T::energy, power::HbmEnergy::schema(), required(), "DRAM core and TSV energy")
          .child("interface", &T::interface, power::AccessEnergy::schema(), required(),
                 "PHY and controller energy per byte of whole bursts");
  return s;
}

double MemoryBenchResult::rowHitRate() const {
  const double pages = rowHits + rowMisses + rowConflicts;
  return pages > 0 ? rowHits / pages : 0.0;
}

double MemoryBenchResult::latencyPercentile(double p) const {
  if (latenciesS.empty()) return 0.0;
  const auto rank = static_cast<std::size_t>(std::ceil(p / 100.0 * static_cast<double>(latenciesS.size())));
  return latenciesS[std::clamp<std::size_t>(rank, 1, latenciesS.size()) - 1];
}

double MemoryBenchResult::energyPerBitJ() const {
  const double bits = 8.0 * (bytesRead + bytesWritten);
  return bits > 0 ? energyJ / bits : 0.0;
}

namespace {

/// Issues the traffic with at most `outstanding` requests in flight.
class TrafficDriver : public sc_core::sc_module {
 public:
  tlm::InitiatorPort port;

  TrafficDriver(const sc_core::sc_module_name& name, std::vector<workload::TrafficRequest> trace,
                std::unique_ptr<workload::TrafficGenerator> generator, int outstanding, tlm::TimingMode mode)
      : sc_core::sc_module(name),
        port("port", mode, sc_core::sc_time(1, sc_core::SC_US)),
        m_trace(std::move(trace)),
        m_generator(std::move(generator)),
        m_outstanding(static_cast<std::size_t>(outstanding)) {
    SC_HAS_PROCESS(TrafficDriver);
    SC_THREAD(run);
  }

  std::vector<double> latencies;
  double firstIssue = -1.0;
  double lastResponse = 0.0;
  double bytesRead = 0.0;
  double bytesWritten = 0.0;
  std::string error;

 private:
  struct InFlight {
    ::tlm::tlm_generic_payload* payload;
    double issued;
  };

  bool nextRequest(workload::TrafficRequest& r) {
    if (m_generator) return m_generator->next(r);
    if (m_traceNext >= m_trace.size()) return false;
    r = m_trace[m_traceNext++];
    return true;
  }

  /// Waits for the first response of those in flight (in any order: a request behind a refresh
  /// does not hold up the others) and records its latency.
  void retire() {
    sc_core::sc_time at;
    const ::tlm::tlm_generic_payload* done = port.awaitAny(at);
    const auto it = m_inFlight.find(done);
    ::tlm::tlm_generic_payload* payload = it->second.payload;
    const double issued = it->second.issued;
    m_inFlight.erase(it);
    if (payload->get_response_status() != ::tlm::TLM_OK_RESPONSE && error.empty()) {
      error =
          fmt::format("request at address {:#x} failed: {}", payload->get_address(), payload->get_response_string());
    }
    latencies.push_back(at.to_seconds() - issued);
    lastResponse = std::max(lastResponse, at.to_seconds());
    payload->release();
  }

  void run() {
    workload::TrafficRequest r;
    while (nextRequest(r)) {
      while (m_inFlight.size() >= m_outstanding) retire();
      if (r.time > port.localTime().to_seconds()) {
        port.sync();
        const sc_core::sc_time at = sc_core::sc_time(r.time, sc_core::SC_SEC);
        if (at > sc_core::sc_time_stamp()) sc_core::wait(at - sc_core::sc_time_stamp());
      }
      ::tlm::tlm_generic_payload& payload = m_pool.allocate();
      tlm::OpExtension& op = tlm::opOf(payload);
      op.kind = r.write ? tlm::OpKind::kWrite : tlm::OpKind::kRead;
      op.bytes = r.bytes;
      payload.set_command(r.write ? ::tlm::TLM_WRITE_COMMAND : ::tlm::TLM_READ_COMMAND);
      payload.set_address(r.address);
      payload.set_response_status(::tlm::TLM_INCOMPLETE_RESPONSE);
      const double issued = port.localTime().to_seconds();
      if (firstIssue < 0) firstIssue = issued;
      (r.write ? bytesWritten : bytesRead) += static_cast<double>(r.bytes);
      port.send(payload);
      m_inFlight.emplace(&payload, InFlight{&payload, issued});
    }
    while (!m_inFlight.empty()) retire();
  }

  std::vector<workload::TrafficRequest> m_trace;
  std::size_t m_traceNext = 0;
  std::unique_ptr<workload::TrafficGenerator> m_generator;
  std::size_t m_outstanding;
  std::map<const ::tlm::tlm_generic_payload*, InFlight> m_inFlight;
  tlm::PayloadPool m_pool;
};

}  // namespace

MemoryBenchResult runMemoryBench(const MemoryPart& part, const workload::MemoryTrafficConfig& traffic, int outstanding,
                                 tlm::TimingMode mode) {
  const auto capacity = static_cast<uint64_t>(part.hbm.capacityBytes);
  std::vector<workload::TrafficRequest> trace;
  std::unique_ptr<workload::TrafficGenerator> generator;
  if (traffic.pattern == workload::TrafficPattern::kTrace) {
    trace = workload::readTrafficTrace(traffic.traceFile, capacity);
  } else {
    generator = std::make_unique<workload::TrafficGenerator>(traffic, capacity);
  }
  hw::MemoryController controller("hbm", part.hbm);
  TrafficDriver driver("generator", std::move(trace), std::move(generator), outstanding, mode);
  driver.port.socket.bind(controller.socket);

  const auto wallStart = std::chrono::steady_clock::now();
  sc_core::sc_start();
  MemoryBenchResult result;
  result.wallS = std::chrono::duration<double>(std::chrono::steady_clock::now() - wallStart).count();
  if (!driver.error.empty()) throw SimulationError("scoville memory: " + driver.error);

  result.requests = driver.latencies.size();
  result.latenciesS = std::move(driver.latencies);
  std::sort(result.latenciesS.begin(), result.latenciesS.end());
  result.bytesRead = driver.bytesRead;
  result.bytesWritten = driver.bytesWritten;
  result.simulatedS = driver.lastResponse - std::max(0.0, driver.firstIssue);
  result.peakBytesPerS = part.hbm.bandwidthBytesPerS;
  const stats::Group& s = controller.stats();
  result.activates = s.value("activates");
  result.precharges = s.value("precharges");
  result.rowHits = s.value("row_hits");
  result.rowMisses = s.value("row_misses");
  result.rowConflicts = s.value("row_conflicts");
  result.readBursts = s.value("read_bursts");
  result.writeBursts = s.value("write_bursts");
  result.refreshes = s.value("refreshes");
  result.turnarounds = s.value("turnarounds");
  // Priced from the command stream, as the chip's power model prices it (power/EnergyLevels).
  const double burst = part.hbm.burstBytes;
  const double readBytes = result.readBursts * burst;
  const double writeBytes = result.writeBursts * burst;
  result.energyJ = result.activates * part.energy.activateJ + result.precharges * part.energy.prechargeJ +
                   readBytes * (part.energy.readJPerByte + part.interface.readJPerByte) +
                   writeBytes * (part.energy.writeJPerByte + part.interface.writeJPerByte) +
                   result.refreshes * part.energy.refreshJ;
  return result;
}

nlohmann::json memoryReport(const MemoryPart& part, const workload::MemoryTrafficConfig& traffic, int outstanding,
                            tlm::TimingMode mode, const MemoryBenchResult& r) {
  std::string pattern;
  for (const auto& [name, value] : workload::trafficPatternNames()) {
    if (value == traffic.pattern) pattern = name;
  }
  nlohmann::json j;
  j["part"] = {{"name", part.name},
               {"channels", part.hbm.channels},
               {"peak_bandwidth_bytes_per_s", part.hbm.bandwidthBytesPerS},
               {"page_policy", part.hbm.pagePolicy},
               {"refresh", part.hbm.refresh},
               {"scheduler", part.hbm.scheduler}};
  for (const auto& [name, value] : hw::addressMappingNames()) {
    if (value == part.hbm.addressMapping) j["part"]["address_mapping"] = name;
  }
  j["traffic"] = {{"pattern", pattern},
                  {"request_bytes", traffic.requestBytes},
                  {"read_ratio", traffic.readRatio},
                  {"outstanding", outstanding},
                  {"timing", mode == tlm::TimingMode::kApproximatelyTimed ? "at" : "lt"},
                  {"seed", traffic.seed}};
  if (traffic.pattern == workload::TrafficPattern::kStrided) j["traffic"]["stride_bytes"] = traffic.strideBytes;
  j["results"] = {{"requests", r.requests},
                  {"bytes_read", r.bytesRead},
                  {"bytes_written", r.bytesWritten},
                  {"simulated_time_s", r.simulatedS},
                  {"bandwidth_bytes_per_s", r.bandwidth()},
                  {"bandwidth_fraction_of_peak", r.bandwidth() / r.peakBytesPerS},
                  {"latency_s",
                   {{"p50", r.latencyPercentile(50)},
                    {"p90", r.latencyPercentile(90)},
                    {"p99", r.latencyPercentile(99)},
                    {"max", r.latencyPercentile(100)}}},
                  {"row_hit_rate", r.rowHitRate()},
                  {"commands",
                   {{"activates", r.activates},
                    {"precharges", r.precharges},
                    {"row_hits", r.rowHits},
                    {"row_misses", r.rowMisses},
                    {"row_conflicts", r.rowConflicts},
                    {"read_bursts", r.readBursts},
                    {"write_bursts", r.writeBursts},
                    {"refreshes", r.refreshes},
                    {"turnarounds", r.turnarounds}}},
                  {"energy_j", r.energyJ},
                  {"energy_per_bit_j", r.energyPerBitJ()}};
  return j;
}

}  // namespace scoville::cli
