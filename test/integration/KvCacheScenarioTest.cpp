// KV-cache manager scenarios: KV operations become memory traffic on the tier of each block.
// Each tier is a stub memory that counts bytes and takes a fixed time per byte (SRAM 1 ps/B,
// local HBM 10 ps/B, remote HBM 100 ps/B, host 1000 ps/B), so every delay is closed-form.
// One SystemC elaboration per test (one process per test under ctest).
#include <gtest/gtest.h>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>
#include <functional>
#include <memory>
#include <string>
#include <systemc>
#include <vector>

#include "hw/kv/KvCacheManager.h"
#include "test/support/Elaboration.h"
#include "tlm/PayloadPool.h"

namespace scoville::hw {
namespace {

// 2 layers x 64 B per token per layer, 4 tokens per block: a layer block is 256 B, a block 512 B.
constexpr KvModelShape kShape{2, 64};
constexpr uint64_t kBlockBytes = 512;

sc_core::sc_time ps(double v) {
  return sc_core::sc_time(v, sc_core::SC_PS);
}

class StubMemory : public sc_core::sc_module {
 public:
  tlm_utils::simple_target_socket<StubMemory> socket{"socket"};
  uint64_t bytesRead = 0;
  uint64_t bytesWritten = 0;
  std::vector<uint64_t> addresses;  ///< of every transaction, in arrival order

  StubMemory(const sc_core::sc_module_name& name, sc_core::sc_time perByte)
      : sc_core::sc_module(name), m_perByte(perByte) {
    socket.register_b_transport(this, &StubMemory::bTransport);
  }

 private:
  void bTransport(::tlm::tlm_generic_payload& payload, sc_core::sc_time& delay) {
    const tlm::OpExtension& op = tlm::opOf(payload);
    EXPECT_TRUE(op.kind == tlm::OpKind::kKvAppend || op.kind == tlm::OpKind::kKvRead) << "KV traffic keeps KV kinds";
    (op.kind == tlm::OpKind::kKvAppend ? bytesWritten : bytesRead) += op.bytes;
    addresses.push_back(payload.get_address());
    delay += m_perByte * static_cast<double>(op.bytes);
    payload.set_response_status(::tlm::TLM_OK_RESPONSE);
  }
  sc_core::sc_time m_perByte;
};

/// Stub memories bound to the manager's tier sockets; remote HBM and host only when `offChip`.
struct Memories {
  StubMemory sram{"sram", ps(1)};
  StubMemory local{"local", ps(10)};
  std::unique_ptr<StubMemory> remoteMemory;
  std::unique_ptr<StubMemory> hostMemory;

  explicit Memories(KvCacheManager& kv, bool offChip = true) {
    kv.toSram.bind(sram.socket);
    kv.toLocalHbm.bind(local.socket);
    if (!offChip) return;
    remoteMemory = std::make_unique<StubMemory>("remote", ps(100));
    hostMemory = std::make_unique<StubMemory>("host", ps(1000));
    kv.toRemote.bind(remoteMemory->socket);
    kv.toHost.bind(hostMemory->socket);
  }
  StubMemory& remote() { return *remoteMemory; }
  StubMemory& host() { return *hostMemory; }
};

/// Runs `body` in a thread; kv() issues one KV operation to the manager and waits for it.
class Script : public sc_core::sc_module {
 public:
  struct Result {
    ::tlm::tlm_response_status status = ::tlm::TLM_INCOMPLETE_RESPONSE;
    sc_core::sc_time delay;
  };
  tlm_utils::simple_initiator_socket<Script> socket{"socket"};

  Script(const sc_core::sc_module_name& name, std::function<void(Script&)> body)
      : sc_core::sc_module(name), m_body(std::move(body)) {
    SC_HAS_PROCESS(Script);
    SC_THREAD(run);
  }

  Result kv(tlm::OpKind kind, uint64_t requestId, uint32_t layer, uint64_t tokenBegin, uint64_t tokenCount) {
    tlm::PayloadRef payload(m_pool);
    payload.op().kind = kind;
    payload.op().requestId = requestId;
    payload.op().layer = layer;
    payload.op().tokenBegin = tokenBegin;
    payload.op().tokenCount = tokenCount;
    Result r;
    r.delay = sc_core::SC_ZERO_TIME;
    socket->b_transport(*payload, r.delay);
    wait(r.delay);
    r.status = payload->get_response_status();
    return r;
  }

 private:
  void run() { m_body(*this); }
  std::function<void(Script&)> m_body;
  tlm::PayloadPool m_pool;
};

KvCacheConfig kvConfig(const std::string& placement, KvPreemption preemption = KvPreemption::kRecompute) {
  KvCacheConfig c;
  c.blockTokens = 4;
  c.placement = placement;
  c.preemption = preemption;
  return c;
}

KvTierCapacities blocks(uint64_t sram, uint64_t local, uint64_t remote, uint64_t host) {
  return KvTierCapacities{sram * kBlockBytes, local * kBlockBytes, remote * kBlockBytes, host * kBlockBytes};
}

using tlm::OpKind;

TEST(KvCacheScenario, AppendFillsSramThenLocalHbmAndTheTiersOverlap) {
  test::claimElaboration();
  KvCacheManager kv("kv", kvConfig("local_first"), kShape, blocks(2, 4, 8, 8));
  Memories mem(kv);
  Script::Result append, read;
  Script script("script", [&](Script& s) {
    ASSERT_TRUE(kv.admit(1, 12).ok);  // blocks: SRAM slots 0 and 1, local HBM slot 0
    append = s.kv(OpKind::kKvAppend, 1, 1, 0, 12);
    read = s.kv(OpKind::kKvRead, 1, 0, 2, 8);
  });
  script.socket.bind(kv.socket);
  sc_core::sc_start();

  EXPECT_EQ(append.status, ::tlm::TLM_OK_RESPONSE);
  EXPECT_EQ(append.delay, ps(2560)) << "SRAM 512 B x 1 ps and local 256 B x 10 ps in parallel";
  EXPECT_EQ(read.status, ::tlm::TLM_OK_RESPONSE);
  EXPECT_EQ(read.delay, ps(1280)) << "SRAM 384 B x 1 ps and local 128 B x 10 ps in parallel";
  EXPECT_EQ(mem.sram.bytesWritten, 8u * 64);
  EXPECT_EQ(mem.local.bytesWritten, 4u * 64);
  EXPECT_EQ(mem.sram.bytesRead, 6u * 64);
  EXPECT_EQ(mem.local.bytesRead, 2u * 64);
  // Layer 1 of SRAM slots 0-1 is one merged run at (1 x 2 + 0) x 256; layer 0 tokens 2..7 start at 128.
  EXPECT_EQ(mem.sram.addresses, (std::vector<uint64_t>{512, 128}));
  EXPECT_EQ(mem.local.addresses, (std::vector<uint64_t>{1024, 0}));
  EXPECT_TRUE(mem.remote().addresses.empty());
  EXPECT_TRUE(mem.host().addresses.empty());
  EXPECT_EQ(kv.stats().value("sram_bytes_written"), 512.0);
  EXPECT_EQ(kv.stats().value("local_hbm_bytes_read"), 128.0);
  EXPECT_EQ(kv.stats().value("sram_transactions"), 2.0);
}

TEST(KvCacheScenario, BlocksOfOneTierThatAreNotAdjacentAreReadBackToBack) {
  test::claimElaboration();
  KvCacheManager kv("kv", kvConfig("local_first"), kShape, blocks(0, 8, 0, 0));
  Memories mem(kv, false);  // local_first never uses remote HBM or host: they may stay unbound
  Script::Result read;
  Script script("script", [&](Script& s) {
    sc_core::sc_time none;
    ASSERT_TRUE(kv.admit(1, 4).ok);         // local slot 0
    ASSERT_TRUE(kv.admit(2, 4).ok);         // local slot 1
    ASSERT_TRUE(kv.append(1, 4, none).ok);  // local slot 2
    read = s.kv(OpKind::kKvRead, 1, 0, 0, 8);
  });
  script.socket.bind(kv.socket);
  sc_core::sc_start();

  EXPECT_EQ(read.status, ::tlm::TLM_OK_RESPONSE);
  EXPECT_EQ(mem.local.addresses, (std::vector<uint64_t>{0, 512}));
  EXPECT_EQ(mem.local.bytesRead, 512u);
  EXPECT_EQ(read.delay, ps(2 * 256 * 10)) << "two 256-B reads on one tier, one after the other";
}

TEST(KvCacheScenario, SpillToRemoteReadsTheOverflowFromRemoteHbm) {
  test::claimElaboration();
  KvCacheManager kv("kv", kvConfig("spill_to_remote"), kShape, blocks(0, 1, 4, 4));
  Memories mem(kv);
  Script::Result read;
  Script script("script", [&](Script& s) {
    ASSERT_TRUE(kv.admit(1, 8).ok);  // local slot 0, remote slot 0
    read = s.kv(OpKind::kKvRead, 1, 1, 2, 4);
  });
  script.socket.bind(kv.socket);
  sc_core::sc_start();

  EXPECT_EQ(read.status, ::tlm::TLM_OK_RESPONSE);
  EXPECT_EQ(mem.local.addresses, (std::vector<uint64_t>{256 + 128}));
  EXPECT_EQ(mem.remote().addresses, (std::vector<uint64_t>{4 * 256}));
  EXPECT_EQ(mem.local.bytesRead, 128u);
  EXPECT_EQ(mem.remote().bytesRead, 128u);
  EXPECT_EQ(mem.host().bytesRead + mem.sram.bytesRead, 0u);
  EXPECT_EQ(read.delay, ps(128 * 100)) << "the remote tier bounds the read";
}

TEST(KvCacheScenario, OffloadToHostAppendsTheOverflowToHostMemory) {
  test::claimElaboration();
  KvCacheManager kv("kv", kvConfig("offload_to_host"), kShape, blocks(0, 1, 4, 4));
  Memories mem(kv);
  Script::Result append;
  Script script("script", [&](Script& s) {
    ASSERT_TRUE(kv.admit(1, 8).ok);  // local slot 0, host slot 0
    append = s.kv(OpKind::kKvAppend, 1, 0, 0, 8);
  });
  script.socket.bind(kv.socket);
  sc_core::sc_start();

  EXPECT_EQ(append.status, ::tlm::TLM_OK_RESPONSE);
  EXPECT_EQ(mem.local.bytesWritten, 256u);
  EXPECT_EQ(mem.host().bytesWritten, 256u);
  EXPECT_EQ(mem.remote().bytesWritten, 0u);
  EXPECT_EQ(append.delay, ps(256 * 1000));
  EXPECT_EQ(kv.stats().value("host_bytes_written"), 256.0);
}

TEST(KvCacheScenario, SwapCopiesTheVictimToHostAndBack) {
  test::claimElaboration();
  KvCacheManager kv("kv", kvConfig("local_first", KvPreemption::kSwap), kShape, blocks(0, 2, 0, 4));
  Memories mem(kv);
  sc_core::sc_time swapOut, swapIn;
  Script::Result whileSwapped, afterSwapIn;
  KvAllocation grown;
  bool swappedIn = false;
  Script script("script", [&](Script& s) {
    ASSERT_TRUE(kv.admit(1, 4).ok);  // local slot 0
    ASSERT_TRUE(kv.admit(2, 4).ok);  // local slot 1
    grown = kv.append(1, 1, swapOut);
    whileSwapped = s.kv(OpKind::kKvRead, 2, 0, 0, 4);
    kv.release(1);
    swappedIn = kv.swapIn(2, swapIn);
    afterSwapIn = s.kv(OpKind::kKvRead, 2, 0, 0, 4);
  });
  script.socket.bind(kv.socket);
  sc_core::sc_start();

  ASSERT_EQ(grown.preempted.size(), 1u);
  EXPECT_EQ(grown.preempted[0].requestId, 2u);
  EXPECT_EQ(grown.preempted[0].mode, KvPreemption::kSwap);
  EXPECT_EQ(swapOut, ps(kBlockBytes * 1000)) << "host write of one block bounds the copy";
  EXPECT_EQ(whileSwapped.status, ::tlm::TLM_GENERIC_ERROR_RESPONSE);
  EXPECT_TRUE(swappedIn);
  EXPECT_EQ(swapIn, ps(kBlockBytes * 1000));
  EXPECT_EQ(afterSwapIn.status, ::tlm::TLM_OK_RESPONSE);
  EXPECT_EQ(mem.host().bytesWritten, kBlockBytes);
  EXPECT_EQ(mem.host().bytesRead, kBlockBytes);
  EXPECT_EQ(mem.local.bytesWritten, kBlockBytes);
  EXPECT_EQ(mem.local.bytesRead, kBlockBytes + 256);
  // Swap-out read local slot 1 (layers at 256, 768) and wrote host slot 0 (layers at 0, 1024).
  EXPECT_EQ(mem.host().addresses, (std::vector<uint64_t>{0, 1024, 0, 1024}));
  EXPECT_EQ(mem.local.addresses, (std::vector<uint64_t>{256, 768, 0, 512, 0}));
  EXPECT_EQ(kv.stats().value("swap_outs"), 1.0);
  EXPECT_EQ(kv.stats().value("preemptions"), 1.0);
}

TEST(KvCacheScenario, OccupancyIsTimeWeightedPerTier) {
  test::claimElaboration();
  KvCacheManager kv("kv", kvConfig("local_first"), kShape, blocks(0, 8, 0, 0));
  Memories mem(kv, false);
  Script script("script", [&](Script&) {
    ASSERT_TRUE(kv.admit(1, 8).ok);  // 1024 B from 0 to 10 ns
    sc_core::wait(sc_core::sc_time(10, sc_core::SC_NS));
    ASSERT_TRUE(kv.admit(2, 8).ok);  // 2048 B from 10 to 40 ns
    sc_core::wait(sc_core::sc_time(30, sc_core::SC_NS));
    kv.release(1);  // 1024 B from 40 to 50 ns
    sc_core::wait(sc_core::sc_time(10, sc_core::SC_NS));
  });
  script.socket.bind(kv.socket);
  sc_core::sc_start();

  ASSERT_EQ(sc_core::sc_time_stamp(), sc_core::sc_time(50, sc_core::SC_NS));
  EXPECT_NEAR(kv.stats().value("local_hbm_occupancy_mean"), (1024.0 * 10 + 2048.0 * 30 + 1024.0 * 10) / 50, 1e-6);
  EXPECT_EQ(kv.stats().value("local_hbm_occupancy_peak"), 2048.0);
  EXPECT_EQ(kv.stats().value("sram_occupancy_mean"), 0.0);
}

TEST(KvCacheScenario, OperationsOutsideWhatTheRequestHoldsAreRejected) {
  test::claimElaboration();
  KvCacheManager kv("kv", kvConfig("local_first"), kShape, blocks(1, 1, 0, 0));
  Memories mem(kv, false);
  std::vector<Script::Result> results;
  Script script("script", [&](Script& s) {
    ASSERT_TRUE(kv.admit(1, 5).ok);
    results.push_back(s.kv(OpKind::kKvRead, 1, 0, 4, 2));    // token 5 not held
    results.push_back(s.kv(OpKind::kKvAppend, 1, 2, 0, 1));  // layer 2 of 2
    results.push_back(s.kv(OpKind::kKvRead, 9, 0, 0, 1));    // unknown request
    results.push_back(s.kv(OpKind::kRead, 1, 0, 0, 1));      // not a KV op
  });
  script.socket.bind(kv.socket);
  sc_core::sc_start();

  ASSERT_EQ(results.size(), 4u);
  EXPECT_EQ(results[0].status, ::tlm::TLM_ADDRESS_ERROR_RESPONSE);
  EXPECT_EQ(results[1].status, ::tlm::TLM_ADDRESS_ERROR_RESPONSE);
  EXPECT_EQ(results[2].status, ::tlm::TLM_GENERIC_ERROR_RESPONSE);
  EXPECT_EQ(results[3].status, ::tlm::TLM_COMMAND_ERROR_RESPONSE);
  EXPECT_TRUE(mem.sram.addresses.empty());
  EXPECT_TRUE(mem.local.addresses.empty());
}

TEST(KvCacheScenario, AnUnboundTierThePolicyMayUseFailsElaboration) {
  test::claimElaboration();
  // The test main turns SystemC errors into failures; here the error is the expected outcome.
  sc_core::sc_report_handler::set_handler(sc_core::sc_report_handler::default_handler);
  KvCacheManager kv("kv", kvConfig("spill_to_remote"), kShape, blocks(0, 1, 4, 0));
  Memories mem(kv, false);
  Script script("script", [](Script&) {});
  script.socket.bind(kv.socket);
  std::string message;
  try {
    sc_core::sc_start();
  } catch (const sc_core::sc_report& report) {
    message = report.get_msg();
  }
  EXPECT_NE(message.find("toRemote"), std::string::npos) << message;
  EXPECT_NE(message.find("spill_to_remote"), std::string::npos) << message;
}

}  // namespace
}  // namespace scoville::hw
