#pragma once
// What the network tests share: the link they use throughout, send requests for the traffic
// generators, a listener that sums link and switch activity, and an exception check.

#include <gtest/gtest.h>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "hw/network/NetworkConfig.h"
#include "test/support/TrafficGenerator.h"
#include "tlm/ActivityBus.h"

namespace scoville::test {

/// The network tests' link: `bandwidth` per direction (default 100 GB/s), 250 ns, 4096-byte MTU,
/// 64-byte header. A 1 MiB message is 256 packets, 1064960 wire bytes, 10649.6 ns at 100 GB/s.
inline hw::LinkConfig testLink(double bandwidth = 100e9) {
  hw::LinkConfig c;
  c.bandwidthBytesPerS = bandwidth;
  c.latencyS = 250e-9;
  c.mtuBytes = 4096;
  c.headerBytes = 64;
  return c;
}

/// A kSend of `bytes` from chip `src` to chip `dst`, released at `release`.
inline TrafficGenerator::Request sendRequest(int src, int dst, uint64_t bytes,
                                             sc_core::sc_time release = sc_core::SC_ZERO_TIME) {
  TrafficGenerator::Request r;
  r.op.kind = tlm::OpKind::kSend;
  r.op.srcChip = src;
  r.op.dstChip = dst;
  r.op.bytes = bytes;
  r.release = release;
  return r;
}

/// Sums the wire bytes on links, the wire bytes switches forwarded and their packets.
struct NetworkActivityTotals : tlm::ActivityListener {
  double link = 0, switched = 0, packets = 0;
  void onActivity(const tlm::ActivityEvent& e) override {
    if (e.activity == tlm::Activity::kLinkBytes) link += e.amount;
    if (e.activity == tlm::Activity::kSwitchBytes) switched += e.amount;
    if (e.activity == tlm::Activity::kSwitchPackets) packets += e.amount;
  }
};

/// Runs `make` and checks it throws std::invalid_argument whose message holds every `parts`.
template <class Make>
void expectInvalidArgument(Make make, const std::vector<std::string>& parts) {
  try {
    make();
    ADD_FAILURE() << "no exception; expected one naming " << parts.front();
  } catch (const std::invalid_argument& e) {
    for (const std::string& part : parts) EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
  }
}

}  // namespace scoville::test
