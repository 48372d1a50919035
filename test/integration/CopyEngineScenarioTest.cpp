// Copy-engine scenarios (hw/dma/CopyEngine.h) with closed-form times. The memory is a stub that
// serves one chunk at a time in `perByte` x bytes; the link is a real HostLink (bandwidth B per
// direction, latency L). With n chunks of c bytes, a memory leg of M = c x perByte and a link leg
// of T = c / B:
//   kMemoryThenLink (memory -> host write): M + (n - 1) max(M, T) + T + L;
//   kLinkThenMemory (host read -> memory): 2L + T + (n - 1) max(M, T) + M (the read's request
//   crosses to the host first);
//   kLinkOnly (host write): n T + L.
// One SystemC elaboration per test (one process per test under ctest).
#include <gtest/gtest.h>
#include <algorithm>
#include <functional>
#include <string>
#include <systemc>
#include <vector>

#include "hw/HostLink.h"
#include "hw/TimedTarget.h"
#include "hw/dma/CopyEngine.h"
#include "test/support/Elaboration.h"
#include "tlm/OpExtension.h"

namespace scoville::hw {
namespace {

sc_core::sc_time ns(double v) {
  return sc_core::sc_time(v, sc_core::SC_NS);
}

constexpr uint64_t kChunk = 1000;
constexpr double kLatencyS = 0.5e-9;

/// A memory that serves one transaction at a time, in `perByte` per byte, in either timing mode;
/// it records what each transaction said.
class StubMemory : public TimedTarget {
 public:
  struct Seen {
    tlm::OpKind kind;
    ::tlm::tlm_command command;
    uint64_t address;
    uint64_t bytes;
    int32_t srcChip;
    int32_t dstChip;
    uint64_t requestId;
    uint32_t layer;
    sc_core::sc_time start;
  };
  std::vector<Seen> seen;

  StubMemory(const sc_core::sc_module_name& name, sc_core::sc_time perByte) : TimedTarget(name), m_perByte(perByte) {}

 private:
  sc_core::sc_time serve(::tlm::tlm_generic_payload& payload, const sc_core::sc_time& arrival) override {
    const tlm::OpExtension& op = tlm::opOf(payload);
    const sc_core::sc_time start = std::max(arrival, m_busyUntil);
    seen.push_back(Seen{op.kind, payload.get_command(), payload.get_address(), op.bytes, op.srcChip, op.dstChip,
                        op.requestId, op.layer, start});
    m_busyUntil = start + m_perByte * static_cast<double>(op.bytes);
    payload.set_response_status(::tlm::TLM_OK_RESPONSE);
    return m_busyUntil;
  }
  sc_core::sc_time m_perByte;
  sc_core::sc_time m_busyUntil;
};

/// An engine with a memory port on a stub memory and one link on a host link; run() performs the
/// copies `body` makes from a thread, recording when the thread started and ended.
struct Bench : sc_core::sc_module {
  CopyEngine engine;
  StubMemory memory;
  HostLink host;
  std::function<void(Bench&)> body;
  sc_core::sc_time start;
  sc_core::sc_time end;

  static CopyEngineConfig config(uint64_t chunkBytes, tlm::TimingMode mode) {
    CopyEngineConfig c;
    c.chunkBytes = chunkBytes;
    c.memoryPort = "memory";
    c.mode = mode;
    c.quantum = sc_core::sc_time(1, sc_core::SC_US);
    c.links = {"host"};
    return c;
  }

  Bench(const sc_core::sc_module_name& name, uint64_t chunkBytes, tlm::TimingMode mode, sc_core::sc_time memoryPerByte,
        double linkBytesPerS, std::function<void(Bench&)> run)
      : sc_core::sc_module(name),
        engine("engine", config(chunkBytes, mode)),
        memory("memory", memoryPerByte),
        host("host", 0, HostLinkConfig{linkBytesPerS, kLatencyS, 1 << 30}),
        body(std::move(run)) {
    engine.memory().socket.bind(memory.socket);
    engine.link(0).bind(host.socket);
    SC_HAS_PROCESS(Bench);
    SC_THREAD(thread);
  }

  void thread() {
    start = sc_core::sc_time_stamp();
    body(*this);
    end = sc_core::sc_time_stamp();
  }
};

/// A copy of one run of `bytes`: memory at 0x10000, host memory at 0x2000.
Copy oneRun(CopyOrder order, uint64_t bytes) {
  Copy copy;
  copy.order = order;
  copy.runs = {CopyRun{0x10000, 0x2000, bytes}};
  const bool toHost = order != CopyOrder::kLinkThenMemory;
  copy.memory = CopyLeg{toHost ? tlm::OpKind::kKvRead : tlm::OpKind::kKvAppend, 3, 3};
  copy.link = CopyLeg{toHost ? tlm::OpKind::kKvAppend : tlm::OpKind::kKvRead, 3, 3};
  copy.requestId = 42;
  copy.layer = 7;
  return copy;
}

/// Copies 4 chunks in `order` and returns the copy's time (and checks that it succeeded).
sc_core::sc_time fourChunks(CopyOrder order, tlm::TimingMode mode, sc_core::sc_time memoryPerByte, double linkBytesPerS,
                            std::vector<StubMemory::Seen>* seen = nullptr) {
  CopyOutcome outcome;
  Bench bench("bench", kChunk, mode, memoryPerByte, linkBytesPerS,
              [&](Bench& b) { outcome = b.engine.copy(oneRun(order, 4 * kChunk)); });
  sc_core::sc_start();
  EXPECT_TRUE(outcome.ok) << outcome.response;
  EXPECT_EQ(outcome.chunksStarted, 4u);
  if (seen != nullptr) *seen = bench.memory.seen;
  return bench.end - bench.start;
}

// M = 3 ns, T = 1 ns, L = 0.5 ns, n = 4.
TEST(CopyEngineScenario, MemoryThenLinkPacedByTheSlowerMemory) {
  test::claimElaboration();
  std::vector<StubMemory::Seen> seen;
  EXPECT_EQ(fourChunks(CopyOrder::kMemoryThenLink, tlm::TimingMode::kLooselyTimed, sc_core::sc_time(3, sc_core::SC_PS),
                       1e12, &seen),
            ns(3 + 3 * 3 + 1 + 0.5));
  ASSERT_EQ(seen.size(), 4u);
  for (std::size_t k = 0; k < seen.size(); ++k) {
    EXPECT_EQ(seen[k].address, 0x10000 + k * kChunk);
    EXPECT_EQ(seen[k].bytes, kChunk);
    EXPECT_EQ(seen[k].kind, tlm::OpKind::kKvRead);
    EXPECT_EQ(seen[k].command, ::tlm::TLM_READ_COMMAND);
    EXPECT_EQ(seen[k].srcChip, 3);
    EXPECT_EQ(seen[k].requestId, 42u);
    EXPECT_EQ(seen[k].layer, 7u);
    EXPECT_EQ(seen[k].start, ns(3.0 * static_cast<double>(k))) << "reads back to back";
  }
}

// M = 1 ns, T = 4 ns, L = 0.5 ns, n = 4.
TEST(CopyEngineScenario, MemoryThenLinkPacedByTheSlowerLink) {
  test::claimElaboration();
  EXPECT_EQ(fourChunks(CopyOrder::kMemoryThenLink, tlm::TimingMode::kLooselyTimed, sc_core::sc_time(1, sc_core::SC_PS),
                       2.5e11),
            ns(1 + 3 * 4 + 4 + 0.5));
}

TEST(CopyEngineScenario, LinkThenMemoryPacedByTheSlowerMemory) {
  test::claimElaboration();
  std::vector<StubMemory::Seen> seen;
  EXPECT_EQ(fourChunks(CopyOrder::kLinkThenMemory, tlm::TimingMode::kLooselyTimed, sc_core::sc_time(3, sc_core::SC_PS),
                       1e12, &seen),
            ns(2 * 0.5 + 1 + 3 * 3 + 3));
  ASSERT_EQ(seen.size(), 4u);
  for (std::size_t k = 0; k < seen.size(); ++k) {
    EXPECT_EQ(seen[k].kind, tlm::OpKind::kKvAppend);
    EXPECT_EQ(seen[k].command, ::tlm::TLM_WRITE_COMMAND);
    EXPECT_EQ(seen[k].address, 0x10000 + k * kChunk);
  }
  // Chunk k lands at 1 + (k + 1) ns; the memory is free at 2 + 3k ns.
  EXPECT_EQ(seen[0].start, ns(2));
  EXPECT_EQ(seen[3].start, ns(11));
}

TEST(CopyEngineScenario, LinkThenMemoryPacedByTheSlowerLink) {
  test::claimElaboration();
  std::vector<StubMemory::Seen> seen;
  EXPECT_EQ(fourChunks(CopyOrder::kLinkThenMemory, tlm::TimingMode::kLooselyTimed, sc_core::sc_time(1, sc_core::SC_PS),
                       2.5e11, &seen),
            ns(2 * 0.5 + 4 + 3 * 4 + 1));
  ASSERT_EQ(seen.size(), 4u);
  for (std::size_t k = 0; k < seen.size(); ++k) {
    EXPECT_EQ(seen[k].start, ns(1 + 4 * (static_cast<double>(k) + 1))) << "each write starts as its chunk lands";
  }
}

TEST(CopyEngineScenario, ApproximatelyTimedMemoryGivesTheSameTimes) {
  test::claimElaboration();
  EXPECT_EQ(fourChunks(CopyOrder::kMemoryThenLink, tlm::TimingMode::kApproximatelyTimed,
                       sc_core::sc_time(3, sc_core::SC_PS), 1e12),
            ns(3 + 3 * 3 + 1 + 0.5));
}

TEST(CopyEngineScenario, ApproximatelyTimedMemoryGivesTheSameTimesLinkFirst) {
  test::claimElaboration();
  EXPECT_EQ(fourChunks(CopyOrder::kLinkThenMemory, tlm::TimingMode::kApproximatelyTimed,
                       sc_core::sc_time(1, sc_core::SC_PS), 2.5e11),
            ns(2 * 0.5 + 4 + 3 * 4 + 1));
}

// Chunks of 1000, 1000 and 500 B, all handed to the link at once: 2.5 T + L.
TEST(CopyEngineScenario, LinkOnlyCutsTheLastChunkShort) {
  test::claimElaboration();
  CopyOutcome outcome;
  Bench bench("bench", kChunk, tlm::TimingMode::kLooselyTimed, sc_core::sc_time(1, sc_core::SC_PS), 1e12,
              [&](Bench& b) { outcome = b.engine.copy(oneRun(CopyOrder::kLinkOnly, 2500)); });
  sc_core::sc_start();
  EXPECT_TRUE(outcome.ok);
  EXPECT_EQ(outcome.chunksStarted, 3u);
  EXPECT_EQ(bench.end - bench.start, ns(2.5 + 0.5));
  EXPECT_TRUE(bench.memory.seen.empty());
  EXPECT_EQ(bench.host.stats().value("bytes_to_host"), 2500.0);
  EXPECT_EQ(bench.host.stats().value("transfers"), 3.0);
  EXPECT_EQ(bench.engine.stats().value("copies"), 1.0);
  EXPECT_EQ(bench.engine.stats().value("chunks"), 3.0);
  EXPECT_EQ(bench.engine.stats().value("bytes"), 2500.0);
}

// Chunk size 0: every run is one transaction per leg, in run order.
TEST(CopyEngineScenario, UnchunkedRunsAreOneTransactionEach) {
  test::claimElaboration();
  CopyOutcome outcome;
  Bench bench("bench", 0, tlm::TimingMode::kLooselyTimed, sc_core::sc_time(1, sc_core::SC_PS), 1e12, [&](Bench& b) {
    Copy copy = oneRun(CopyOrder::kMemoryThenLink, 3000);
    copy.runs.push_back(CopyRun{0x40000, 0x8000, 1000});
    outcome = b.engine.copy(copy);
  });
  sc_core::sc_start();
  EXPECT_TRUE(outcome.ok);
  EXPECT_EQ(outcome.chunksStarted, 2u);
  ASSERT_EQ(bench.memory.seen.size(), 2u);
  EXPECT_EQ(bench.memory.seen[0].bytes, 3000u);
  EXPECT_EQ(bench.memory.seen[1].address, 0x40000u);
  // Reads end at 3 and 4 ns; the link takes 3 ns then 1 ns: 3 + 3 + 1 + L.
  EXPECT_EQ(bench.end - bench.start, ns(7.5));
}

// A host address outside the host memory: the link refuses the first chunk's link leg and the
// copy stops there, naming it.
TEST(CopyEngineScenario, ARefusedTransactionStopsTheCopy) {
  test::claimElaboration();
  CopyOutcome outcome;
  Bench bench("bench", kChunk, tlm::TimingMode::kLooselyTimed, sc_core::sc_time(1, sc_core::SC_PS), 1e12,
              [&](Bench& b) {
                Copy copy = oneRun(CopyOrder::kMemoryThenLink, 4 * kChunk);
                copy.runs.front().linkAddress = uint64_t{1} << 31;
                outcome = b.engine.copy(copy);
              });
  sc_core::sc_start();
  EXPECT_FALSE(outcome.ok);
  EXPECT_EQ(outcome.chunksStarted, 1u);
  EXPECT_FALSE(outcome.failedOnMemory);
  EXPECT_EQ(outcome.failedKind, tlm::OpKind::kKvAppend);
  EXPECT_EQ(outcome.failedAddress, uint64_t{1} << 31);
  EXPECT_EQ(outcome.failedBytes, kChunk);
  EXPECT_EQ(outcome.response, "TLM_ADDRESS_ERROR_RESPONSE");
  EXPECT_EQ(bench.memory.seen.size(), 1u);
  EXPECT_EQ(bench.engine.stats().value("copies"), 0.0) << "a failed copy is not counted";
}

}  // namespace
}  // namespace scoville::hw
