#include "hw/dram/MemoryControllerConfig.h"

#include <cmath>

#include "hw/dram/BankMachine.h"
#include "hw/dram/DramScheduler.h"
#include "hw/dram/RefreshPolicy.h"

namespace scoville::hw {

using namespace scoville::config;

namespace {
bool isWhole(double v) {
  return std::floor(v) == v;
}
bool isPowerOfTwo(double v) {
  const auto n = static_cast<uint64_t>(v);
  return isWhole(v) && n > 0 && (n & (n - 1)) == 0;
}
}  // namespace

const Schema<DramTimingConfig>& DramTimingConfig::schema() {
  using T = DramTimingConfig;
  static const Schema<T> s =
      Schema<T>("dram_timing", "DRAM timing of one channel (JEDEC names).")
          .quantity("t_rcd", &T::tRCD, dim::kTime, required(), positive(), "ACT to READ/WRITE")
          .quantity("t_rp", &T::tRP, dim::kTime, required(), positive(), "PRE to ACT, same bank")
          .quantity("t_cl", &T::tCL, dim::kTime, required(), positive(), "READ to first data (CAS latency)")
          .quantity("t_ras", &T::tRAS, dim::kTime, required(), positive(), "ACT to PRE, same bank")
          .quantity("t_rrd_s", &T::tRRDs, dim::kTime, required(), positive(), "ACT to ACT, different bank group")
          .quantity("t_rrd_l", &T::tRRDl, dim::kTime, required(), positive(), "ACT to ACT, same bank group")
          .quantity("t_faw", &T::tFAW, dim::kTime, required(), positive(), "four-activate window")
          .quantity("t_wtr", &T::tWTR, dim::kTime, required(), nonNegative(), "write-to-read turnaround")
          .quantity("t_rtw", &T::tRTW, dim::kTime, required(), nonNegative(), "read-to-write turnaround")
          .quantity("t_refi", &T::tREFI, dim::kTime, required(), positive(), "refresh interval")
          .quantity("t_rfc", &T::tRFC, dim::kTime, required(), positive(), "refresh cycle time (channel blocked)")
          .quantity("t_rfc_pb", &T::tRFCpb, dim::kTime, optional("0 s"), nonNegative(),
                    "per-bank refresh cycle time (the bank blocked); 0: not given (per_bank refresh needs it)")
          .quantity("t_rfc_sb", &T::tRFCsb, dim::kTime, optional("0 s"), nonNegative(),
                    "same-bank refresh cycle time (one bank per group blocked); 0: not given (same_bank refresh "
                    "needs it)")
          .rule("t_rfc", "t_rfc must be shorter than t_refi", [](const T& t) { return t.tRFC < t.tREFI; })
          .rule("t_rrd_l", "t_rrd_l must be at least t_rrd_s", [](const T& t) { return t.tRRDl >= t.tRRDs; });
  return s;
}

const Schema<MemoryControllerConfig>& MemoryControllerConfig::schema() {
  using T = MemoryControllerConfig;
  static const Schema<T> s =
      Schema<T>("hbm", "High-bandwidth memory behind one controller: channels of bank groups of banks.")
          .quantity("capacity", &T::capacityBytes, dim::kBytes, required(), positive(), "usable capacity")
          .quantity("bandwidth", &T::bandwidthBytesPerS, dim::kBandwidth, required(), positive(),
                    "aggregate peak data-bus bandwidth of all channels")
          .integer("channels", &T::channels, required(), between(1, 4096),
                   "independent channels (or pseudo-channels) sharing the bandwidth equally")
          .quantity("interleave", &T::interleaveBytes, dim::kBytes, optional("256 B"), between(32, 1 << 20),
                    "address interleaving granule across channels")
          .integer("bank_groups", &T::bankGroups, required(), between(1, 64), "bank groups per channel")
          .integer("banks_per_group", &T::banksPerGroup, required(), between(1, 64), "banks per bank group")
          .quantity("row_size", &T::rowBytes, dim::kBytes, required(), between(64, 1 << 20),
                    "row buffer (page) size of one channel")
          .quantity("burst_size", &T::burstBytes, dim::kBytes, required(), between(8, 4096),
                    "bytes per burst on one channel")
          .quantity("controller_latency", &T::controllerLatencyS, dim::kTime, required(), nonNegative(),
                    "controller and PHY pipeline latency per request (overlaps other requests)")
          .child("timing", &T::timing, DramTimingConfig::schema(), required(), "DRAM timing parameters")
          .implementation("scheduler", &T::scheduler, dramSchedulerNames(), optional("{impl: frfcfs}"),
                          "channel queue scheduling in approximately-timed mode (loosely-timed serves in call "
                          "order): fcfs oldest first; frfcfs oldest row hit first, else oldest")
          .choice("address_mapping", &T::addressMapping, addressMappingNames(), optional("bank_group_interleaved"),
                  "how a channel's pages map to banks: bank_group_interleaved (consecutive pages rotate over the "
                  "banks and bank groups), bank_interleaved (over the banks of one group first), bank_sequential "
                  "(a bank's rows first: streams stay in one bank); see hw/dram/AddressDecoder.h")
          .implementation("page_policy", &T::pagePolicy, pagePolicyNames(), optional("{impl: open}"),
                          "row-buffer policy: open (rows stay open until a conflict or refresh), closed "
                          "(auto-precharge after every access), adaptive (a 2-bit predictor per bank)")
          .implementation("refresh", &T::refresh, refreshPolicyNames(), optional("{impl: all_bank}"),
                          "refresh: all_bank (the channel stops for t_rfc every t_refi), per_bank (each bank "
                          "once per t_refi for t_rfc_pb, the others go on), same_bank (one bank of every group "
                          "for t_rfc_sb)")
          .integer("queue_depth", &T::queueDepth, optional("64"), between(1, 65536),
                   "requests in flight before the controller applies backpressure (approximately-timed mode)")
          .integer("lockstep_channels", &T::lockstepChannels, optional("1"), between(1, 4096),
                   "simulation speed: channels timed as one lockstep group (1: every channel on its own). A "
                   "group is one channel with that many times the interleave, row and bandwidth, the same "
                   "banks and timings, refreshed together: exact for streams spread evenly over the "
                   "channels, and coarser for small scattered accesses (activations and refreshes per "
                   "group; see docs/performance.md)")
          .rule("refresh", "per_bank refresh needs timing.t_rfc_pb (shorter than t_refi / banks)",
                [](const T& c) {
                  return c.refresh != "per_bank" ||
                         (c.timing.tRFCpb > 0 && c.timing.tRFCpb < c.timing.tREFI / c.banks());
                })
          .rule("refresh", "same_bank refresh needs timing.t_rfc_sb (shorter than t_refi / banks_per_group)",
                [](const T& c) {
                  return c.refresh != "same_bank" ||
                         (c.timing.tRFCsb > 0 && c.timing.tRFCsb < c.timing.tREFI / c.banksPerGroup);
                })
          .rule("lockstep_channels", "lockstep_channels must divide channels",
                [](const T& c) { return c.channels % c.lockstepChannels == 0; })
          .rule("interleave", "interleave must be a power of two number of bytes",
                [](const T& c) { return isPowerOfTwo(c.interleaveBytes); })
          .rule("row_size", "row_size must be a power of two number of bytes",
                [](const T& c) { return isPowerOfTwo(c.rowBytes); })
          .rule("burst_size", "burst_size must be a whole number of bytes dividing row_size",
                [](const T& c) { return isWhole(c.burstBytes) && std::fmod(c.rowBytes, c.burstBytes) == 0.0; });
  return s;
}

MemoryControllerConfig MemoryControllerConfig::lockstepGroups() const {
  MemoryControllerConfig grouped = *this;
  grouped.channels = channels / lockstepChannels;
  grouped.interleaveBytes = interleaveBytes * lockstepChannels;
  grouped.rowBytes = rowBytes * lockstepChannels;
  return grouped;
}

}  // namespace scoville::hw
