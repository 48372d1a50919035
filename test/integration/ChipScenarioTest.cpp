// Whole-chip scenarios: tensor core timing through the interconnect, and the decode step of the
// walking skeleton checked against its roofline.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <map>
#include <set>

#include "hw/TensorCore.h"
#include "hw/chip/Chip.h"
#include "platforms/Platform.h"
#include "runtime/PlatformDecode.h"
#include "runtime/StepDriver.h"
#include "test/support/Elaboration.h"
#include "test/support/Shipped.h"
#include "test/support/TrafficGenerator.h"
#include "tlm/ActivityBus.h"
#include "tlm/ProtocolChecker.h"
#include "workloads/SoftwareStack.h"

namespace scoville {
namespace {

using test::shippedModel;
using test::shippedPlatform;

TEST(ChipScenario, GemmsThroughTheInterconnectNeverBeatPeakAndQueue) {
  test::claimElaboration();
  const platform::PlatformConfig config = shippedPlatform("jalapeno");
  hw::Chip chip("chip", config.chipConfig(0));
  const tlm::Precision p = tlm::Precision::kFp8;
  test::TrafficGenerator gen("gen", {test::gemmRequest(8192, 8192, 8192, p), test::gemmRequest(1, 8192, 8192, p)});
  gen.bind(chip.socket());
  sc_core::sc_start();
  ASSERT_EQ(gen.completions().size(), 2u);
  const auto& big = gen.completions()[0];
  const double bigTime = (big.end - big.start).to_seconds();
  const double bigFlops = 2.0 * 8192.0 * 8192.0 * 8192.0;
  EXPECT_GE(bigTime, bigFlops / config.chipConfig(0).tensorCore.peakFlops(p));
  EXPECT_GE(bigFlops / bigTime / config.chipConfig(0).tensorCore.peakFlops(p), 0.85);
  const auto& gemv = gen.completions()[1];
  EXPECT_LT(2.0 * 8192 * 8192 / (gemv.end - gemv.start).to_seconds() / config.chipConfig(0).tensorCore.peakFlops(p),
            0.02)
      << "a GEMV uses a small fraction of the arrays";
  EXPECT_DOUBLE_EQ(chip.stats().toJson()["groups"]["tensor_core"]["stats"]["gemms"]["value"].get<double>(), 2.0);
}

// GEMMs and vector ops through the interconnect: both modes give the same times uncontended.
TEST(ChipScenario, LooselyAndApproximatelyTimedChipsAgree) {
  test::claimElaboration();
  const platform::PlatformConfig config = shippedPlatform("jalapeno");
  hw::Chip ltChip("lt_chip", config.chipConfig(0));
  hw::Chip atChip("at_chip", config.chipConfig(0));
  std::vector<test::TrafficGenerator::Request> work;
  for (uint64_t m : {1u, 8u, 512u}) work.push_back(test::gemmRequest(m, 4096, 4096, tlm::Precision::kBf16));
  test::TrafficGenerator::Request vector;
  vector.op.kind = tlm::OpKind::kVector;
  vector.op.elementOps = 1e6;
  work.push_back(vector);
  work.push_back(test::memoryRequest(tlm::OpKind::kRead, hw::kSramBaseAddress, 1 << 20));
  work.push_back(test::memoryRequest(tlm::OpKind::kRead, 0, 1 << 20));
  test::TrafficGenerator lt("lt", work, tlm::TimingMode::kLooselyTimed);
  test::TrafficGenerator at("at", work, tlm::TimingMode::kApproximatelyTimed);
  lt.bind(ltChip.socket());
  at.bind(atChip.socket());
  sc_core::sc_start();
  ASSERT_EQ(lt.completions().size(), at.completions().size());
  for (std::size_t i = 0; i < work.size(); ++i) {
    EXPECT_EQ(lt.completions()[i].status, ::tlm::TLM_OK_RESPONSE) << i;
    EXPECT_EQ(at.completions()[i].status, ::tlm::TLM_OK_RESPONSE) << i;
    const double ltTime = (lt.completions()[i].end - lt.completions()[i].start).to_seconds();
    const double atTime = (at.completions()[i].end - at.completions()[i].start).to_seconds();
    EXPECT_NEAR(atTime / ltTime, 1.0, 0.05) << "transaction " << i;
  }
  EXPECT_EQ(tlm::ProtocolChecker::violations(), 0u);
}

// The power model will only listen: every unit's activity reaches the chip's bus, and the sums
// equal the units' own statistics.
TEST(ChipScenario, ActivityEventsAccountForEveryUnitsWork) {
  test::claimElaboration();
  struct Totals : tlm::ActivityListener {
    std::map<tlm::Activity, double> sum;
    std::set<std::string> sources;
    void onActivity(const tlm::ActivityEvent& e) override {
      sum[e.activity] += e.amount;
      sources.insert(e.source);
      EXPECT_GE(e.time, sc_core::sc_time_stamp()) << "activity is stamped at completion, never in the past";
    }
  } totals;
  const platform::PlatformConfig config = shippedPlatform("jalapeno");
  workload::StepPlan plan =
      runtime::planDecodeStep(shippedModel("tiny-dense"), test::decodeStep(4, 512), config.chipConfig(0));
  const double flops = plan.flops;
  const double vectorOps = plan.vectorOps;
  platform::Platform platform("platform", config);
  platform.chip(0).activityBus().subscribe(totals);
  runtime::StepDriver driver("driver", std::move(plan), config.chipConfig(0), tlm::TimingMode::kApproximatelyTimed);
  driver.loadPort.socket.bind(platform.chip(0).socket());
  driver.computePort.socket.bind(platform.chip(0).socket());
  sc_core::sc_start();
  ASSERT_TRUE(driver.finished());
  const auto hbm = platform.chip(0).stats().toJson()["groups"]["hbm"]["stats"];
  EXPECT_DOUBLE_EQ(totals.sum[tlm::Activity::kMacs] * 2, flops);
  EXPECT_DOUBLE_EQ(totals.sum[tlm::Activity::kVectorOps], vectorOps);
  EXPECT_DOUBLE_EQ(totals.sum[tlm::Activity::kDramActivates], hbm["activates"]["value"].get<double>());
  EXPECT_DOUBLE_EQ(totals.sum[tlm::Activity::kDramReadBursts], hbm["read_bursts"]["value"].get<double>());
  EXPECT_DOUBLE_EQ(totals.sum[tlm::Activity::kDramWriteBursts], hbm["write_bursts"]["value"].get<double>());
  EXPECT_DOUBLE_EQ(totals.sum[tlm::Activity::kNocMemoryBytes],
                   hbm["bytes_read"]["value"].get<double>() + hbm["bytes_written"]["value"].get<double>());
  EXPECT_TRUE(totals.sources.count("platform.chip0.tensor_core"));
  EXPECT_TRUE(totals.sources.count("platform.chip0.hbm"));
}

// Memory beyond the SRAM window is not mapped.
TEST(ChipScenario, AddressOutsideEveryMemoryIsAnAddressError) {
  test::claimElaboration();
  const platform::PlatformConfig config = shippedPlatform("jalapeno");
  hw::Chip chip("chip", config.chipConfig(0));
  test::TrafficGenerator gen(
      "gen",
      {test::memoryRequest(tlm::OpKind::kRead, hw::kSramBaseAddress + (1ull << 40), 64),
       test::memoryRequest(tlm::OpKind::kRead, static_cast<uint64_t>(config.chipConfig(0).hbm.capacityBytes), 64)});
  gen.bind(chip.socket());
  sc_core::sc_start();
  EXPECT_EQ(gen.completions().at(0).status, ::tlm::TLM_ADDRESS_ERROR_RESPONSE);
  EXPECT_EQ(gen.completions().at(1).status, ::tlm::TLM_ADDRESS_ERROR_RESPONSE);
}

TEST(ChipScenario, UnsupportedPrecisionGetsACommandError) {
  test::claimElaboration();
  hw::Chip chip("chip", shippedPlatform("jalapeno").chipConfig(0));
  test::TrafficGenerator gen("gen", {test::gemmRequest(16, 16, 16, tlm::Precision::kFp32)});
  gen.bind(chip.socket());
  sc_core::sc_start();
  EXPECT_EQ(gen.completions().at(0).status, ::tlm::TLM_COMMAND_ERROR_RESPONSE);
}

// A DMA engine's requests through InitiatorPort::send(): all in flight together, each response
// awaited on its own.
class Burst : public sc_core::sc_module {
 public:
  tlm::InitiatorPort port;
  std::vector<sc_core::sc_time> responses;
  std::vector<::tlm::tlm_response_status> statuses;

  Burst(const sc_core::sc_module_name& name, std::vector<test::TrafficGenerator::Request> requests,
        tlm::TimingMode mode)
      : sc_core::sc_module(name),
        port("port", mode, sc_core::sc_time(1, sc_core::SC_US)),
        m_requests(std::move(requests)) {
    SC_HAS_PROCESS(Burst);
    SC_THREAD(run);
  }

 private:
  void run() {
    std::vector<::tlm::tlm_generic_payload*> sent;
    for (const auto& request : m_requests) {
      ::tlm::tlm_generic_payload& payload = m_pool.allocate();
      tlm::opOf(payload) = request.op;
      payload.set_address(request.address);
      payload.set_command(::tlm::TLM_READ_COMMAND);
      port.send(payload);
      sent.push_back(&payload);
    }
    EXPECT_EQ(sc_core::sc_time_stamp(), sc_core::SC_ZERO_TIME) << "send() waits for no response";
    for (::tlm::tlm_generic_payload* payload : sent) {
      responses.push_back(port.await(*payload));
      EXPECT_EQ(responses.back(), sc_core::sc_time_stamp()) << "await() returns when the response is in";
      statuses.push_back(payload->get_response_status());
      payload->release();
    }
  }

  std::vector<test::TrafficGenerator::Request> m_requests;
  tlm::PayloadPool m_pool;
};

TEST(ChipScenario, SentRequestsAreInFlightTogetherInBothModes) {
  test::claimElaboration();
  const platform::PlatformConfig config = shippedPlatform("jalapeno");
  std::vector<test::TrafficGenerator::Request> reads;
  for (uint64_t i = 0; i < 4; ++i) reads.push_back(test::memoryRequest(tlm::OpKind::kRead, i << 24, 1 << 20));
  hw::Chip ltChip("lt_chip", config.chipConfig(0));
  hw::Chip atChip("at_chip", config.chipConfig(0));
  hw::Chip seqChip("seq_chip", config.chipConfig(0));
  Burst lt("lt", reads, tlm::TimingMode::kLooselyTimed);
  Burst at("at", reads, tlm::TimingMode::kApproximatelyTimed);
  test::TrafficGenerator seq("seq", reads);  // one after another
  lt.port.socket.bind(ltChip.socket());
  at.port.socket.bind(atChip.socket());
  seq.bind(seqChip.socket());
  sc_core::sc_start();
  ASSERT_EQ(lt.responses.size(), reads.size());
  ASSERT_EQ(at.responses.size(), reads.size());
  ASSERT_EQ(seq.completions().size(), reads.size());
  for (std::size_t i = 0; i < reads.size(); ++i) {
    EXPECT_EQ(lt.statuses[i], ::tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(at.statuses[i], ::tlm::TLM_OK_RESPONSE);
    EXPECT_NEAR(at.responses[i] / lt.responses[i], 1.0, 0.05) << i;
    if (i > 0) {
      EXPECT_GT(lt.responses[i], lt.responses[i - 1]) << "each channel serves them in order";
    }
  }
  // The first is alone on the channels; the others queue behind it there, so the controller
  // latency and each request's first activations are hidden behind the data before them.
  EXPECT_EQ(lt.responses[0], seq.completions()[0].end);
  EXPECT_LT(lt.responses.back(), seq.lastEnd());
  const double bytes = static_cast<double>(reads.size() << 20);
  EXPECT_GE(lt.responses.back().to_seconds(), bytes / config.chipConfig(0).hbm.bandwidthBytesPerS) << "roofline";
  EXPECT_EQ(tlm::ProtocolChecker::violations(), 0u);
}

// Physics first: a decode step can never beat its roofline (bytes / bandwidth, FLOPs / peak).
// Returns the step time.
double decodeStep(int batch, int context, double maxOverBound, tlm::TimingMode mode) {
  const platform::PlatformConfig config = shippedPlatform("jalapeno");
  workload::StepPlan plan =
      runtime::planDecodeStep(shippedModel("llama-3.1-70b"), test::decodeStep(batch, context), config.chipConfig(0));
  const double bound = std::max(plan.memoryBoundS(config.chipConfig(0)), plan.computeBoundS(config.chipConfig(0)));
  platform::Platform platform("platform", config);
  runtime::StepDriver driver("driver", std::move(plan), config.chipConfig(0), mode);
  driver.loadPort.socket.bind(platform.chip(0).socket());
  driver.computePort.socket.bind(platform.chip(0).socket());
  sc_core::sc_start();
  EXPECT_TRUE(driver.finished()) << driver.error();
  const double step = driver.stepTime().to_seconds();
  EXPECT_GE(step, bound);
  EXPECT_LE(step, maxOverBound * bound);
  // Every compute of a tile starts after its operands arrived.
  const auto& timings = driver.timings();
  for (const auto& t : timings) EXPECT_GE(t.computeStart, t.loadEnd);
  // The load stream is a DMA engine: a tile's requests go out once a staging buffer is free
  // (the tile `buffers` before it has computed), not once the previous tile's data is in.
  const int buffers = config.chipConfig(0).sram.stagingBuffers;
  std::vector<std::size_t> loading;  // tiles that take a buffer
  for (std::size_t i = 0; i < timings.size(); ++i) {
    if (!driver.plan().ops[i].accesses.empty()) loading.push_back(i);
  }
  int overlapping = 0;
  for (std::size_t k = 1; k < loading.size(); ++k) {
    const auto& t = timings[loading[k]];
    if (k >= static_cast<std::size_t>(buffers)) {
      EXPECT_GE(t.loadStart, timings[loading[k - buffers]].computeEnd) << k;
    }
    if (t.loadStart < timings[loading[k - 1]].loadEnd) ++overlapping;
  }
  EXPECT_GT(overlapping, 0) << "no tile's requests were in flight with the previous tile's";
  return step;
}

// Batch 1 streams 141 GB of weights: bound by HBM, which delivers ~90% of peak after refresh.
TEST(ChipScenario, DecodeStepAtBatchOneIsBoundByWeightStreaming) {
  test::claimElaboration();
  decodeStep(1, 8192, 1.15, tlm::TimingMode::kLooselyTimed);
}

TEST(ChipScenario, DecodeStepAtBatch64StaysAboveItsRoofline) {
  test::claimElaboration();
  decodeStep(64, 2048, 1.5, tlm::TimingMode::kLooselyTimed);
}

// Steps on platforms of their own, all run by one sc_start(): each add() elaborates a platform of
// `config` and a driver of the step, under `stack` (null: none).
struct StepRig {
  std::vector<std::unique_ptr<platform::Platform>> platforms;
  std::vector<std::unique_ptr<runtime::StepDriver>> drivers;

  runtime::StepDriver& add(const platform::PlatformConfig& config, workload::StepPlan plan,
                           const workload::SoftwareStackConfig* stack) {
    const auto n = drivers.size();
    platforms.push_back(std::make_unique<platform::Platform>(fmt::format("platform{}", n).c_str(), config));
    drivers.push_back(std::make_unique<runtime::StepDriver>(fmt::format("driver{}", n).c_str(), std::move(plan),
                                                            config.chipConfig(0), tlm::TimingMode::kLooselyTimed));
    drivers.back()->loadPort.socket.bind(platforms.back()->chip(0).socket());
    drivers.back()->computePort.socket.bind(platforms.back()->chip(0).socket());
    drivers.back()->setStack(stack);
    return *drivers.back();
  }
  /// A Llama-3.1-70B decode step of `batch` sequences at 2,048 tokens of context.
  runtime::StepDriver& add(const platform::PlatformConfig& config, int batch,
                           const workload::SoftwareStackConfig* stack) {
    return add(
        config,
        runtime::planDecodeStep(shippedModel("llama-3.1-70b"), test::decodeStep(batch, 2048), config.chipConfig(0)),
        stack);
  }
};

// A software stack at half the memory efficiency takes twice as long to move a memory-bound
// step's bytes in either load_issue mode (overlapped: a little more, since each tile's first
// accesses are no longer hidden behind the previous tile's data).
TEST(ChipScenario, AStackAtHalfMemoryEfficiencyDoublesAMemoryBoundStepInBothLoadIssueModes) {
  test::claimElaboration();
  platform::PlatformConfig config = shippedPlatform("jalapeno");
  workload::SoftwareStackConfig half;
  half.memoryEfficiency = 0.5;
  StepRig rig;
  for (const hw::LoadIssue issue : {hw::LoadIssue::kOverlapped, hw::LoadIssue::kSerial}) {
    config.chipTypes[0].sram.loadIssue = issue;
    rig.add(config, 1, nullptr);
    rig.add(config, 1, &half);
  }
  sc_core::sc_start();
  for (const auto& d : rig.drivers) ASSERT_TRUE(d->finished()) << d->error();
  const auto step = [&](std::size_t i) { return rig.drivers[i]->stepTime().to_seconds(); };
  EXPECT_LT(step(0), step(2)) << "overlapped loads are faster than serial ones";
  EXPECT_GT(step(1) / step(0), 1.95);
  EXPECT_LT(step(1) / step(0), 2.25);
  EXPECT_NEAR(step(3) / step(2), 2.0, 0.05);
}

// A stack's compute efficiency stretches an op's own service on the compute units, not its wait
// behind another stream's work. Two tiles of one kernel: the load stream issues the second tile's
// weight conversions on the in-order vector unit as its loads go out, while the first tile
// computes, so the first tile's own vector work queues behind them. At efficiency 0.5 the first
// tile takes its unqueued time longer than it did with the hardware alone, not its whole time.
TEST(ChipScenario, AStackStretchesAnOpsOwnComputeNotItsWaitBehindTheNextTilesConversions) {
  test::claimElaboration();
  const platform::PlatformConfig config = shippedPlatform("jalapeno");
  const auto tile = [](uint64_t address, double vectorOps, double convertOps) {
    workload::PlannedOp op;
    op.name = "ffn";  // one kernel: no launch between the tiles
    op.accesses.push_back({tlm::OpKind::kRead, address, 64 * 1024, hw::KvTier::kLocalHbm});
    op.gemms.push_back(tlm::GemmShape{16, 1024, 1024, 1});
    op.vectorOps = vectorOps + convertOps;
    op.convertOps = convertOps;
    return op;
  };
  const auto plan = [&](double convertOps) {
    workload::StepPlan p;
    p.ops.push_back(tile(0, 4e6, 0.0));
    p.ops.push_back(tile(1 << 20, 4e6, convertOps));
    return p;
  };
  workload::SoftwareStackConfig half;
  half.gemmEfficiency = 0.5;
  StepRig rig;
  rig.add(config, plan(0.0), nullptr);
  rig.add(config, plan(2e8), nullptr);
  rig.add(config, plan(2e8), &half);
  sc_core::sc_start();
  for (const auto& d : rig.drivers) ASSERT_TRUE(d->finished()) << d->error();
  const auto firstTile = [&](std::size_t run) {
    const auto& t = rig.drivers[run]->timings()[0];
    return (t.computeEnd - t.computeStart).to_seconds();
  };
  const double own = firstTile(0);     // GEMM and vector work, nothing ahead of them
  const double queued = firstTile(1);  // the same behind the second tile's conversions
  ASSERT_GT(queued, 2.0 * own) << "the first tile's vector work did not wait behind the conversions";
  EXPECT_NEAR(firstTile(2) - queued, own, 1e-11) << "the stretch is the op's own time once more (1 / 0.5 - 1)";
}

// A stack with a kernel launch latency runs the step as a GPU stream does: each kernel (the tiles
// of one op class of one layer) is launched once the previous kernel has ended, and only then
// loads its operands. The step takes at least the launches longer, and more: each kernel's first
// tile is no longer loaded while the previous kernel computes. Tiles inside a kernel still stream.
TEST(ChipScenario, AStackWithAKernelLaunchLatencyRunsTheKernelsOneAfterAnother) {
  test::claimElaboration();
  const platform::PlatformConfig config = shippedPlatform("jalapeno");
  workload::SoftwareStackConfig gpu;
  gpu.kernelLaunchS = 5e-6;
  const sc_core::sc_time launch(gpu.kernelLaunchS, sc_core::SC_SEC);
  StepRig rig;
  const runtime::StepDriver& streamed = rig.add(config, 4, nullptr);
  const runtime::StepDriver& launched = rig.add(config, 4, &gpu);
  sc_core::sc_start();
  for (const auto& d : rig.drivers) ASSERT_TRUE(d->finished()) << d->error();
  const auto& ops = launched.plan().ops;
  const auto& t = launched.timings();
  std::size_t kernels = 0;
  int overlappingInside = 0;  // tiles inside a kernel whose loads overlap the previous tile's
  for (std::size_t i = 0; i < ops.size(); ++i) {
    if (workload::SoftwareStackConfig::startsKernel(ops, i)) {
      ++kernels;
      const sc_core::sc_time previousEnd = i == 0 ? sc_core::SC_ZERO_TIME : t[i - 1].collectiveEnd;
      EXPECT_GE(t[i].loadStart, previousEnd + launch) << ops[i].name << " of layer " << ops[i].layer;
    } else if (!ops[i].accesses.empty() && t[i].loadStart < t[i - 1].loadEnd) {
      ++overlappingInside;
    }
  }
  // embedding, 80 layers of norm, qkv_proj, attention, o_proj, norm, ffn; final norm, LM head
  EXPECT_GE(kernels, 80u * 6u);
  EXPECT_GT(overlappingInside, 0) << "tiles inside a kernel no longer streamed";
  const double added = launched.stepTime().to_seconds() - streamed.stepTime().to_seconds();
  EXPECT_GT(added, static_cast<double>(kernels) * gpu.kernelLaunchS) << "launches plus unhidden first tiles";
  EXPECT_LT(added, static_cast<double>(kernels) * (gpu.kernelLaunchS + 5e-6));
}

// The launch gap as hardware: a chip whose command processor takes `kernel_launch` per kernel runs
// a step as a stack with the same whole gap does (the chip's gap is its kernel_launch plus the
// launch's two on-chip hops), to the picosecond; its statistics count one launch per kernel. Both
// together add up.
TEST(ChipScenario, AChipsCommandProcessorLaunchesTheKernelsAsAStacksLaunchLatencyDoes) {
  test::claimElaboration();
  platform::PlatformConfig config = shippedPlatform("jalapeno");
  const double hops = 2.0 * config.chipTypes[0].interconnect.hopLatencyS;
  workload::SoftwareStackConfig gpu;
  gpu.kernelLaunchS = 5e-6;
  StepRig rig;
  const runtime::StepDriver& byStack = rig.add(config, 4, &gpu);
  config.chipTypes[0].commandProcessor.kernelLaunchS = gpu.kernelLaunchS - hops;
  const runtime::StepDriver& byChip = rig.add(config, 4, nullptr);
  workload::SoftwareStackConfig rest;
  rest.kernelLaunchS = 1e-6;
  const runtime::StepDriver& both = rig.add(config, 4, &rest);
  sc_core::sc_start();
  for (const auto& d : rig.drivers) ASSERT_TRUE(d->finished()) << d->error();
  EXPECT_EQ(byChip.stepTime(), byStack.stepTime());
  std::size_t kernels = 0;
  for (std::size_t i = 0; i < byChip.plan().ops.size(); ++i) {
    if (workload::SoftwareStackConfig::startsKernel(byChip.plan().ops, i)) ++kernels;
  }
  const auto launches = [&](std::size_t platform) {
    return rig.platforms[platform]
        ->chip(0)
        .stats()
        .toJson()["groups"]["command_processor"]["stats"]["launches"]["value"]
        .get<double>();
  };
  EXPECT_DOUBLE_EQ(launches(1), static_cast<double>(kernels));
  EXPECT_FALSE(rig.platforms[0]->chip(0).stats().toJson()["groups"].contains("command_processor"))
      << "a chip without a launch gap has no command processor statistics";
  // The stack's time and the chip's follow one another: each kernel 1 us later still (and a little
  // more: the HBM's refreshes fall elsewhere in the longer step).
  const double added = both.stepTime().to_seconds() - byChip.stepTime().to_seconds();
  EXPECT_GE(added, static_cast<double>(kernels) * rest.kernelLaunchS);
  EXPECT_LT(added, static_cast<double>(kernels) * rest.kernelLaunchS * 1.05);
}

// The multi-module AT run with the base-protocol checker on every initiator and target socket.
TEST(ChipScenario, ApproximatelyTimedDecodeStepHasNoProtocolViolations) {
  test::claimElaboration();
  decodeStep(1, 2048, 1.15, tlm::TimingMode::kApproximatelyTimed);
  EXPECT_EQ(tlm::ProtocolChecker::violations(), 0u);
  EXPECT_GT(tlm::ProtocolChecker::checkedTransactions(), 1000u);
}

}  // namespace
}  // namespace scoville
