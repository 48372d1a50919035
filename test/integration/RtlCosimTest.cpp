// RTL co-simulation of the tensor core (hw/rtl, docs/cosim.md): the Verilated MAC arrays compute
// exact products behind the transactor, in both timing modes; lock-step mode agrees with the TLM
// model, and catches a deliberately wrong RTL variant.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <random>

#include "hw/chip/Chip.h"
#include "hw/GemmOperands.h"
#include "hw/TensorCore.h"
#include "hw/RtlTensorCore.h"
#include "platforms/Platform.h"
#include "runtime/PlatformDecode.h"
#include "test/support/Elaboration.h"
#include "test/support/Shipped.h"
#include "test/support/Subprocess.h"
#include "tlm/InitiatorPort.h"
#include "tlm/PayloadPool.h"
#include "tlm/ProtocolChecker.h"
#include "config/Loader.h"

namespace scoville {
namespace {

using hw::rtl::kMacArrayCols;
using hw::rtl::kMacArrayLanes;
using hw::rtl::kMacArrayRows;

hw::TensorCoreConfig rtlConfig(hw::TensorCoreImpl impl, int arrays, const std::string& model = "mac_array") {
  hw::TensorCoreConfig c;
  c.count = arrays;
  c.clockHz = 1e9;
  c.arrayRows = kMacArrayRows;
  c.arrayCols = kMacArrayCols;
  c.macsPerCell.bf16 = 1;
  c.macsPerCell.fp8 = std::min(2, kMacArrayLanes);
  c.macsPerCell.fp4 = kMacArrayLanes;
  c.pipelineLatencyCycles = kMacArrayRows;  // the RTL loads the first weight tile before streaming
  c.operandBuffers = 2;
  c.impl = impl;
  c.rtl.model = model;
  c.rtl.cycleTolerance = 0.25;  // the default
  c.rtl.seed = 7;
  return c;
}

/// Sends GEMMs one after another and records each one's payload results and duration.
class GemmSender : public sc_core::sc_module {
 public:
  struct Gemm {
    tlm::OpExtension op;
    bool withOperands = true;
    tlm::OpKind kind = tlm::OpKind::kGemm;
  };
  struct Result {
    ::tlm::tlm_response_status status = ::tlm::TLM_INCOMPLETE_RESPONSE;
    hw::GemmOperands operands;
    double seconds = 0.0;
  };

  tlm::InitiatorPort port;

  GemmSender(const sc_core::sc_module_name& name, std::vector<Gemm> gemms, tlm::TimingMode mode, uint64_t seed)
      : sc_core::sc_module(name), port("port", mode, sc_core::sc_time(1, sc_core::SC_US)), m_gemms(std::move(gemms)) {
    for (std::size_t i = 0; i < m_gemms.size(); ++i) {
      Result r;
      if (m_gemms[i].withOperands) r.operands.fill(m_gemms[i].op.shape, seed + i);
      m_results.push_back(std::move(r));
    }
    SC_HAS_PROCESS(GemmSender);
    SC_THREAD(run);
  }

  const std::vector<Result>& results() const { return m_results; }
  /// Drops the last element of GEMM i's A operand (call before the simulation starts).
  void shrinkOperands(std::size_t i) { m_results.at(i).operands.a.pop_back(); }

 private:
  void run() {
    for (std::size_t i = 0; i < m_gemms.size(); ++i) {
      tlm::PayloadRef payload(m_pool);
      payload.op() = m_gemms[i].op;
      payload.op().kind = m_gemms[i].kind;
      payload->set_command(::tlm::TLM_IGNORE_COMMAND);
      if (m_gemms[i].withOperands) payload->set_extension(&m_results[i].operands);
      const sc_core::sc_time start = port.localTime();
      port.transport(*payload);
      m_results[i].seconds = (port.localTime() - start).to_seconds();
      m_results[i].status = payload->get_response_status();
      if (m_gemms[i].withOperands) payload->clear_extension(&m_results[i].operands);
    }
    port.sync();
  }

  std::vector<Gemm> m_gemms;
  std::vector<Result> m_results;
  tlm::PayloadPool m_pool;
};

GemmSender::Gemm gemm(uint64_t count, uint64_t m, uint64_t k, uint64_t n, tlm::Precision p) {
  GemmSender::Gemm g;
  g.op.kind = tlm::OpKind::kGemm;
  g.op.shape = tlm::GemmShape{m, n, k, count};
  g.op.precision = p;
  return g;
}

std::vector<GemmSender::Gemm> randomGemms(int n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  const tlm::Precision precisions[] = {tlm::Precision::kBf16, tlm::Precision::kFp8, tlm::Precision::kFp4};
  std::vector<GemmSender::Gemm> gemms;
  for (int i = 0; i < n; ++i) {
    gemms.push_back(gemm(1 + rng() % 2, 1 + rng() % 20, 1 + rng() % (3 * kMacArrayRows),
                         1 + rng() % (5 * kMacArrayCols), precisions[rng() % 3]));
  }
  return gemms;
}

double statOf(const hw::RtlTensorCore& core, const std::string& name) {
  return core.stats().value(name);
}

// Random tiles of every shape class (partial K and N tiles, several products, every lane count)
// against the C++ reference, value for value; no GEMM faster than the arrays' peak.
TEST(RtlCosim, ArraysComputeRandomGemmsExactly) {
  test::claimElaboration();
  const hw::TensorCoreConfig config = rtlConfig(hw::TensorCoreImpl::kRtl, 2);
  hw::RtlTensorCore core("tensor_core", config);
  const std::vector<GemmSender::Gemm> gemms = randomGemms(40, 11);
  GemmSender sender("sender", gemms, tlm::TimingMode::kLooselyTimed, 100);
  sender.port.socket.bind(core.socket);
  sc_core::sc_start();
  ASSERT_EQ(sender.results().size(), gemms.size());
  for (std::size_t i = 0; i < gemms.size(); ++i) {
    const GemmSender::Result& r = sender.results()[i];
    ASSERT_EQ(r.status, ::tlm::TLM_OK_RESPONSE) << i;
    hw::GemmOperands expected = r.operands;
    hw::referenceProduct(gemms[i].op.shape, expected);
    ASSERT_EQ(r.operands.c, expected.c) << "GEMM " << i;
    const double peak = config.peakFlops(gemms[i].op.precision);
    EXPECT_GE(r.seconds * peak, gemms[i].op.shape.flops() * (1 - 1e-9)) << "GEMM " << i << " beat the peak";
  }
  EXPECT_EQ(core.failure(), "");
  EXPECT_EQ(statOf(core, "gemms"), 40.0);
}

// The same GEMMs through nb_transport take exactly as many cycles as through b_transport, GEMM for
// GEMM.
TEST(RtlCosim, ApproximatelyTimedGivesTheSameCycles) {
  test::claimElaboration();
  const hw::TensorCoreConfig config = rtlConfig(hw::TensorCoreImpl::kRtl, 2);
  hw::RtlTensorCore lt("lt_core", config);
  hw::RtlTensorCore at("at_core", config);
  const std::vector<GemmSender::Gemm> gemms = randomGemms(12, 5);
  GemmSender ltSender("lt_sender", gemms, tlm::TimingMode::kLooselyTimed, 1);
  GemmSender atSender("at_sender", gemms, tlm::TimingMode::kApproximatelyTimed, 1);
  ltSender.port.socket.bind(lt.socket);
  atSender.port.socket.bind(at.socket);
  sc_core::sc_start();
  for (std::size_t i = 0; i < gemms.size(); ++i) {
    ASSERT_EQ(atSender.results()[i].status, ::tlm::TLM_OK_RESPONSE) << i;
    EXPECT_EQ(atSender.results()[i].operands.c, ltSender.results()[i].operands.c) << i;
    EXPECT_EQ(atSender.results()[i].seconds, ltSender.results()[i].seconds) << "GEMM " << i;
  }
  EXPECT_EQ(statOf(lt, "busy_cycles"), statOf(at, "busy_cycles"));
  EXPECT_EQ(tlm::ProtocolChecker::violations(), 0u);
}

// Two initiators sharing a core (through a chip's interconnect) queue behind each other in both
// timing modes: one GEMM at a time, the wait counted from each GEMM's arrival.
TEST(RtlCosim, InitiatorsSharingACoreQueueInBothModes) {
  test::claimElaboration();
  hw::ChipConfig chipConfig = test::shippedPlatform("jalapeno").chipConfig(0);
  chipConfig.tensorCore = rtlConfig(hw::TensorCoreImpl::kRtl, 2);
  hw::Chip ltChip("lt_chip", chipConfig);
  hw::Chip atChip("at_chip", chipConfig);
  const std::vector<GemmSender::Gemm> gemms = randomGemms(12, 5);
  GemmSender ltSender("lt_sender", gemms, tlm::TimingMode::kLooselyTimed, 1);
  GemmSender ltOther("lt_other", gemms, tlm::TimingMode::kLooselyTimed, 1);
  GemmSender atSender("at_sender", gemms, tlm::TimingMode::kApproximatelyTimed, 1);
  GemmSender atOther("at_other", gemms, tlm::TimingMode::kApproximatelyTimed, 1);
  ltSender.port.socket.bind(ltChip.socket());
  ltOther.port.socket.bind(ltChip.socket());
  atSender.port.socket.bind(atChip.socket());
  atOther.port.socket.bind(atChip.socket());
  sc_core::sc_start();
  const auto core = [](const hw::Chip& chip, const char* stat) {
    return chip.stats().toJson()["groups"]["tensor_core"]["stats"][stat]["value"].get<double>();
  };
  for (const hw::Chip* chip : {&ltChip, &atChip}) {
    EXPECT_EQ(core(*chip, "gemms"), 24.0);
    EXPECT_EQ(core(*chip, "busy_cycles"), core(ltChip, "busy_cycles")) << chip->name();
    // Both send their first GEMM at once: one waits for the other's (43 ns), and later ones
    // collide now and then.
    EXPECT_GT(core(*chip, "queue_time"), 40e-9) << chip->name();
    EXPECT_LT(core(*chip, "queue_time"), core(*chip, "busy_cycles") / 1e9) << chip->name();
  }
  for (std::size_t i = 0; i < gemms.size(); ++i) {
    EXPECT_EQ(atSender.results()[i].operands.c, ltOther.results()[i].operands.c) << i;
  }
  EXPECT_EQ(tlm::ProtocolChecker::violations(), 0u);
}

// A DVFS clock at half speed: the same cycles take twice the time, counted as throttled time.
TEST(RtlCosim, ALowerClockScaleStretchesTheSameCycles) {
  test::claimElaboration();
  const hw::TensorCoreConfig config = rtlConfig(hw::TensorCoreImpl::kRtl, 1);
  hw::RtlTensorCore nominal("nominal", config);
  hw::RtlTensorCore slow("slow", config);
  tlm::ClockDomain half;
  half.setScale(0.5);
  slow.setClockDomain(half);
  const std::vector<GemmSender::Gemm> gemms = randomGemms(4, 9);
  GemmSender a("a", gemms, tlm::TimingMode::kLooselyTimed, 1);
  GemmSender b("b", gemms, tlm::TimingMode::kLooselyTimed, 1);
  a.port.socket.bind(nominal.socket);
  b.port.socket.bind(slow.socket);
  sc_core::sc_start();
  // GEMM 0 also waits for the arrays' reset (two cycles at the nominal clock, 2 ns).
  EXPECT_DOUBLE_EQ(b.results()[0].seconds - 2e-9, 2.0 * (a.results()[0].seconds - 2e-9));
  for (std::size_t i = 1; i < gemms.size(); ++i) {
    EXPECT_DOUBLE_EQ(b.results()[i].seconds, 2.0 * a.results()[i].seconds) << i;
  }
  EXPECT_EQ(statOf(slow, "busy_cycles"), statOf(nominal, "busy_cycles"));
  EXPECT_DOUBLE_EQ(statOf(slow, "throttled_time"), statOf(nominal, "busy_cycles") / config.clockHz);
  EXPECT_EQ(statOf(nominal, "throttled_time"), 0.0);
}

// Decode- and prefill-like shapes without operands (as a platform run sends them): the RTL and
// the TLM model agree on every value, and on cycles within the stated tolerance.
TEST(RtlCosim, LockstepAgreesWithTheTlmModel) {
  test::claimElaboration();
  const hw::TensorCoreConfig config = rtlConfig(hw::TensorCoreImpl::kLockstep, 4);
  hw::RtlTensorCore core("tensor_core", config);
  std::vector<GemmSender::Gemm> gemms;
  for (uint64_t m : {1u, 4u, 16u, 64u}) {
    for (tlm::Precision p : {tlm::Precision::kBf16, tlm::Precision::kFp4}) {
      GemmSender::Gemm g = gemm(1, m, 96, 128, p);
      g.withOperands = false;
      gemms.push_back(g);
    }
  }
  GemmSender sender("sender", gemms, tlm::TimingMode::kLooselyTimed, 1);
  sender.port.socket.bind(core.socket);
  sc_core::sc_start();
  for (const GemmSender::Result& r : sender.results()) EXPECT_EQ(r.status, ::tlm::TLM_OK_RESPONSE);
  EXPECT_EQ(core.failure(), "");
  EXPECT_EQ(statOf(core, "lockstep_gemms"), static_cast<double>(gemms.size()));
  EXPECT_EQ(statOf(core, "mismatched_values"), 0.0);
  EXPECT_LE(statOf(core, "max_cycle_error"), config.rtl.cycleTolerance);
  EXPECT_GT(statOf(core, "tlm_cycles"), 0.0);
  RecordProperty("rtl_tlm_cycle_ratio", std::to_string(statOf(core, "rtl_tlm_cycle_ratio")));
  RecordProperty("max_cycle_error", std::to_string(statOf(core, "max_cycle_error")));
}

// The faulty variant switches every cell to the next tile's weight bank as soon as a tile's last
// row has entered, while that row is still passing through: lock-step mode names the first wrong
// value.
TEST(RtlCosim, LockstepCatchesTheFaultyBlock) {
  test::claimElaboration();
  hw::rtl::registerFaultyMacArrayForTests();
  const hw::TensorCoreConfig config = rtlConfig(hw::TensorCoreImpl::kLockstep, 1, "mac_array_faulty");
  hw::RtlTensorCore core("tensor_core", config);
  GemmSender::Gemm decode = gemm(1, 1, 4 * kMacArrayRows, 4 * kMacArrayCols, tlm::Precision::kBf16);
  decode.withOperands = false;
  GemmSender sender("sender", {decode, decode}, tlm::TimingMode::kLooselyTimed, 1);
  sender.port.socket.bind(core.socket);
  sc_core::sc_start();
  EXPECT_GT(statOf(core, "mismatched_gemms"), 0.0);
  const std::string failure = core.failure();
  EXPECT_NE(failure.find("gave a different product"), std::string::npos) << failure;
  EXPECT_NE(failure.find("first at product 0 row 0 column"), std::string::npos) << failure;
  EXPECT_NE(failure.find("GEMM #0"), std::string::npos) << failure;
  RecordProperty("failure", failure);
}

// What the core cannot serve gets the TLM error responses without reaching the arrays; a good
// GEMM after them still runs.
TEST(RtlCosim, RejectsWhatItCannotServe) {
  test::claimElaboration();
  hw::RtlTensorCore core("tensor_core", rtlConfig(hw::TensorCoreImpl::kRtl, 1));
  GemmSender::Gemm vector = gemm(1, 1, 8, 8, tlm::Precision::kBf16);
  vector.kind = tlm::OpKind::kVector;
  vector.withOperands = false;
  GemmSender::Gemm fp32 = gemm(1, 1, 8, 8, tlm::Precision::kFp32);  // rate 0 in rtlConfig
  fp32.withOperands = false;
  GemmSender::Gemm good = gemm(1, 2, 8, 8, tlm::Precision::kBf16);
  GemmSender sender("sender", {vector, fp32, good, good}, tlm::TimingMode::kLooselyTimed, 1);
  sender.port.socket.bind(core.socket);
  sc_core::sc_start();
  EXPECT_EQ(sender.results()[0].status, ::tlm::TLM_COMMAND_ERROR_RESPONSE);
  EXPECT_EQ(sender.results()[1].status, ::tlm::TLM_COMMAND_ERROR_RESPONSE);
  EXPECT_EQ(sender.results()[2].status, ::tlm::TLM_OK_RESPONSE);
  EXPECT_EQ(statOf(core, "gemms"), 2.0);
}

// Operands whose sizes do not fit the shape are a generic error, not a read past their end.
TEST(RtlCosim, OperandsThatDoNotFitTheShapeAreRefused) {
  test::claimElaboration();
  hw::RtlTensorCore core("tensor_core", rtlConfig(hw::TensorCoreImpl::kLockstep, 1));
  GemmSender sender("sender", {gemm(1, 2, 8, 8, tlm::Precision::kBf16)}, tlm::TimingMode::kLooselyTimed, 1);
  sender.port.socket.bind(core.socket);
  sender.shrinkOperands(0);
  sc_core::sc_start();
  EXPECT_EQ(sender.results()[0].status, ::tlm::TLM_GENERIC_ERROR_RESPONSE);
  EXPECT_EQ(statOf(core, "gemms"), 0.0);
}

/// A block that never answers (all its outputs stay low), and one that offers a result row at
/// once and never marks a tile's last: plain SystemC stand-ins registered like a Verilated block.
class StandIn : public sc_core::sc_module {
 public:
  StandIn(const sc_core::sc_module_name& name, hw::rtl::MacArrayPins& pins, bool chatty)
      : sc_core::sc_module(name), m_pins(pins), m_chatty(chatty) {
    SC_HAS_PROCESS(StandIn);
    SC_METHOD(drive);
  }

 private:
  void drive() {
    if (m_chatty) m_pins.cValid.write(true);
  }
  hw::rtl::MacArrayPins& m_pins;
  bool m_chatty;
};

void registerStandIns() {
  for (const bool chatty : {false, true}) {
    const std::string name = chatty ? "chatty_block" : "dead_block";
    if (hw::rtl::hasMacArrayModel(name)) continue;
    hw::rtl::registerMacArrayModel(name,
                                   [chatty](const char* n, hw::rtl::DrivenSignal<bool>&, hw::rtl::MacArrayPins& pins) {
                                     return std::make_unique<StandIn>(n, pins, chatty);
                                   });
  }
}

// A block that stops answering fails its GEMM after the watchdog's cycles instead of hanging the
// run; one that breaks the result protocol fails it at once; both say why.
TEST(RtlCosim, BrokenBlocksFailTheirGemmsWithTheReason) {
  test::claimElaboration();
  registerStandIns();
  hw::RtlTensorCore dead("dead", rtlConfig(hw::TensorCoreImpl::kRtl, 1, "dead_block"));
  hw::RtlTensorCore chatty("chatty", rtlConfig(hw::TensorCoreImpl::kRtl, 1, "chatty_block"));
  const GemmSender::Gemm g = gemm(1, 2, 8, 8, tlm::Precision::kBf16);  // one tile: 2 + 2*8 + 8 cycles
  GemmSender toDead("to_dead", {g, g}, tlm::TimingMode::kLooselyTimed, 1);
  GemmSender toChatty("to_chatty", {g}, tlm::TimingMode::kLooselyTimed, 1);
  toDead.port.socket.bind(dead.socket);
  toChatty.port.socket.bind(chatty.socket);
  sc_core::sc_start();
  for (const GemmSender::Result& r : toDead.results()) EXPECT_EQ(r.status, ::tlm::TLM_GENERIC_ERROR_RESPONSE);
  // The reset at time 0, the watchdog's limit of 4 x (M + 2 rows + cols) + 1000 cycles and one
  // more, then the reset that cleans the block up: 2 + 1105 + 2 cycles of 1 ns.
  EXPECT_NEAR(toDead.results()[0].seconds, (2 + 4 * (2 + 2 * 8 + 8) + 1000 + 1 + 2) / 1e9, 1e-12);
  EXPECT_NE(dead.failure().find("the block stopped answering"), std::string::npos) << dead.failure();
  EXPECT_NE(dead.failure().find("2 GEMMs broke the pin protocol"), std::string::npos) << dead.failure();
  EXPECT_EQ(toChatty.results()[0].status, ::tlm::TLM_GENERIC_ERROR_RESPONSE);
  EXPECT_NE(chatty.failure().find("c_last was false on result row 1 of a 2-row tile"), std::string::npos)
      << chatty.failure();
}

// ---- a platform run with RTL tensor cores ------------------------------------------------------

const std::string kCosimModel = std::string(SCOVILLE_SOURCE_DIR) + "/test/integration/data/cosim-tiny.yaml";

/// `scoville run` of the small test model's decode step on jalapeno with an RTL-sized tensor core.
std::vector<std::string> cosimRun(const std::string& out, const std::string& impl) {
  const std::string tc = "platform.chip_types[0].tensor_core.";
  return {"run",         "-p",
          "jalapeno",    "-m",
          kCosimModel,   "-s",
          "decode-step", "--out",
          out,           "--quiet",
          "--set",       tc + "impl=" + impl,
          "--set",       tc + "array_rows=" + std::to_string(kMacArrayRows),
          "--set",       tc + "array_cols=" + std::to_string(kMacArrayCols),
          "--set",       tc + "count=4",
          "--set",       tc + "pipeline_latency_cycles=" + std::to_string(kMacArrayRows)};
}

// A whole platform run in lock-step, in both timing modes: every GEMM of the decode step runs on
// the RTL, matches the TLM model value for value and within tolerance in cycles, and the report
// says so. The RTL's timing drives the step, which stays within a few percent of the TLM run's.
TEST(RtlCosimPlatform, LockstepDecodeStepMatchesTheTlmModel) {
  test::TempDir dir;
  std::map<std::string, nlohmann::json> reports;
  for (const std::string impl : {"tlm", "lockstep"}) {
    for (const std::string timing : {"lt", "at"}) {
      std::vector<std::string> args = cosimRun(dir.file(impl + timing), impl);
      args.insert(args.end(), {"--timing", timing});
      const test::ProcessResult r = test::runScoville(args);
      ASSERT_EQ(r.exitCode, 0) << r.err;
      reports[impl + timing] = nlohmann::json::parse(test::readFile(dir.file(impl + timing + "/report.json")));
    }
  }
  for (const std::string timing : {"lt", "at"}) {
    const nlohmann::json& lockstep = reports["lockstep" + timing];
    const nlohmann::json& tlm = reports["tlm" + timing];
    EXPECT_FALSE(tlm.contains("cosim"));
    ASSERT_EQ(lockstep["cosim"].size(), 1u);
    const nlohmann::json& cosim = lockstep["cosim"][0];
    EXPECT_EQ(cosim["impl"], "lockstep");
    EXPECT_EQ(cosim["model"], "mac_array");
    const double gemms =
        tlm["stats"]["platform"]["groups"]["chip0"]["groups"]["tensor_core"]["stats"]["gemms"]["value"].get<double>();
    EXPECT_GT(gemms, 0.0);
    EXPECT_EQ(cosim["gemms"].get<double>(), gemms) << timing;
    EXPECT_EQ(cosim["mismatched_values"].get<double>(), 0.0) << timing;
    EXPECT_LE(cosim["max_cycle_error"].get<double>(), cosim["cycle_tolerance"].get<double>()) << timing;
    EXPECT_NEAR(cosim["rtl_tlm_cycle_ratio"].get<double>(), 1.0, 0.05) << timing;
    const double rtlStep = lockstep["results"]["step_time_s"].get<double>();
    const double tlmStep = tlm["results"]["step_time_s"].get<double>();
    EXPECT_NEAR(rtlStep / tlmStep, 1.0, 0.05) << timing;
    EXPECT_NE(rtlStep, tlmStep) << "the RTL's own cycles time the step";
  }
}

// A cycle tolerance the RTL cannot meet fails the run (exit 1, no report) with the statistics and
// the first GEMM beyond it.
TEST(RtlCosimPlatform, ATimingToleranceTheRtlMissesFailsTheRun) {
  test::TempDir dir;
  std::vector<std::string> args = cosimRun(dir.file("out"), "lockstep");
  args.insert(args.end(), {"--set", "platform.chip_types[0].tensor_core.rtl.cycle_tolerance=0"});
  const test::ProcessResult r = test::runScoville(args);
  EXPECT_EQ(r.exitCode, 1) << r.err;
  for (const char* text : {"RTL co-simulation failed", "chip 0: platform.chip0.tensor_core:",
                           "lock-step GEMMs beyond the cycle tolerance (mean error", "beyond rtl.cycle_tolerance 0",
                           "RTL ", "TLM model "}) {
    EXPECT_NE(r.err.find(text), std::string::npos) << text << " not in: " << r.err;
  }
  EXPECT_FALSE(std::filesystem::exists(dir.file("out/report.json")));
}

// Same inputs, same bytes, with the RTL in the loop too.
TEST(RtlCosimPlatform, LockstepRunsAreDeterministic) {
  test::TempDir dir;
  for (const std::string name : {"a", "b"}) {
    const test::ProcessResult r = test::runScoville(cosimRun(dir.file(name), "lockstep"));
    ASSERT_EQ(r.exitCode, 0) << r.err;
  }
  EXPECT_EQ(test::readFile(dir.file("a/report.json")), test::readFile(dir.file("b/report.json")));
}

// --rtl-vcd: a standard VCD of the Verilated blocks' ports and registers, one scope per array, a
// time stamp per clock edge inside the trace window.
TEST(RtlCosimPlatform, RtlWaveformsAreWritten) {
  test::TempDir dir;
  std::vector<std::string> args = cosimRun(dir.file("out"), "rtl");
  args.insert(args.end(), {"--rtl-vcd", dir.file("waves/rtl.vcd"), "--trace-duration", "1 us"});
  const test::ProcessResult r = test::runScoville(args);
  ASSERT_EQ(r.exitCode, 0) << r.err;
  const std::string vcd = test::readFile(dir.file("waves/rtl.vcd"));
  EXPECT_NE(vcd.find("$enddefinitions"), std::string::npos);
  for (const char* signal : {" clk ", " w_valid ", " a_ready ", " c_data ", " loadBank "}) {
    EXPECT_NE(vcd.find(signal), std::string::npos) << signal;
  }
  EXPECT_NE(vcd.find("tensor_core.array3 $end"), std::string::npos) << "each array is its own scope";
  std::size_t stamps = 0;
  uint64_t last = 0;
  for (std::size_t at = vcd.find("\n#"); at != std::string::npos; at = vcd.find("\n#", at + 1)) {
    ++stamps;
    last = std::stoull(vcd.substr(at + 2, vcd.find('\n', at + 1) - at - 2));
  }
  EXPECT_GT(stamps, 1000u) << "two per clock cycle of a busy tensor core (1.8 GHz)";
  EXPECT_LE(last, 1000000u) << "nothing after the 1 us window (time stamps in ps)";
}

// The faulty block on a platform run: the chip's co-simulation verdict (what `scoville run`
// reports) names the GEMM and its layer. In process: only test binaries can build the faulty block.
TEST(RtlCosimPlatform, LockstepCatchesTheFaultyBlockOnAPlatformRun) {
  test::claimElaboration();
  hw::rtl::registerFaultyMacArrayForTests();
  platform::PlatformConfig config = test::shippedPlatform("jalapeno");
  hw::TensorCoreConfig& tc = config.chipTypes.at(0).tensorCore;
  tc.impl = hw::TensorCoreImpl::kLockstep;
  tc.arrayRows = kMacArrayRows;
  tc.arrayCols = kMacArrayCols;
  tc.count = 2;
  tc.rtl.model = "mac_array_faulty";
  const workload::ModelConfig model =
      workload::ModelConfig::schema().parse(config::loadConfigFile("model", kCosimModel));
  platform::Platform platform("platform", config);
  runtime::PlatformDecodeRunner runner("workload", platform,
                                       runtime::planPlatformDecodeStep(config, model, test::decodeStep(1, 256)),
                                       tlm::TimingMode::kLooselyTimed);
  sc_core::sc_start();
  ASSERT_TRUE(runner.finished()) << runner.error();
  const std::string failure = platform.chip(0).cosimFailure();
  EXPECT_NE(failure.find("lock-step GEMMs gave a different product"), std::string::npos) << failure;
  EXPECT_NE(failure.find("first: GEMM #0 ("), std::string::npos) << failure;
  EXPECT_NE(failure.find("layer 0, attention): "), std::string::npos) << failure;
}

}  // namespace
}  // namespace scoville
