// The scenario schema: serving and decode_step keys, defaults, and errors naming the key. Pure
// logic, no SystemC.
#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "config/ConfigError.h"
#include "config/Loader.h"
#include "test/support/ConfigErrors.h"
#include "test/support/Shipped.h"
#include "workloads/ScenarioConfig.h"

namespace scoville::workload {
namespace {

// ---------------------------------------------------------------------------------------------
// ScenarioConfig

const std::string kServing =
    "name: s\n"                                 // 1
    "description: d\n"                          // 2
    "kind: serving\n"                           // 3
    "input_tokens: 100\n"                       // 4
    "output_tokens: 10\n";                      // 5
const std::string kRequests = "requests: 5\n";  // 6

const std::string kDecode =
    "name: d\n"
    "description: d\n"
    "kind: decode_step\n"
    "batch: 4\n"
    "context_length: 100\n";  // 5

ScenarioConfig parseScenario(const std::string& yaml) {
  return ScenarioConfig::schema().parse(config::loadConfigText("scenario", yaml, "s.yaml"));
}

std::optional<config::ConfigError> scenarioError(const std::string& yaml) {
  return test::configErrorOf([&] { parseScenario(yaml); }, yaml);
}

/// The error has `kind`, names `key` in its message and points at `line` (0: any line).
void expectError(const std::string& yaml, config::ErrorKind kind, const std::string& key, int line = 0) {
  SCOPED_TRACE(yaml);
  const std::optional<config::ConfigError> e = scenarioError(yaml);
  if (!e) return;
  EXPECT_EQ(e->kind(), kind) << e->what();
  EXPECT_NE(e->message().find(key), std::string::npos) << e->what();
  if (line > 0) {
    EXPECT_EQ(e->location().rfind("s.yaml:" + std::to_string(line) + ":", 0), 0u) << e->what();
  }
}

TEST(ScenarioConfig, ServingScenarioParsesWithDocumentedDefaults) {
  const ScenarioConfig s = parseScenario(kServing + kRequests);
  EXPECT_EQ(s.kind, ScenarioKind::kServing);
  EXPECT_EQ(s.inputTokens, 100);
  EXPECT_EQ(s.outputTokens, 10);
  EXPECT_EQ(s.requests, 5);
  EXPECT_EQ(s.load.impl, LoadKind::kClosedLoop);
  EXPECT_EQ(s.load.concurrency, 1);
  EXPECT_EQ(s.randomRangeRatio, 1.0);
  EXPECT_EQ(s.warmupRequests, -1);
  EXPECT_EQ(s.warmup(), 1) << "closed loop: the concurrency";
  EXPECT_EQ(s.scheduler.maxBatch, 256);
  EXPECT_EQ(s.scheduler.maxTokensPerStep, 8192);
  EXPECT_EQ(s.scheduler.prefillChunk, 8192);
  EXPECT_EQ(s.scheduler.stepOverheadS, 0.0);
  EXPECT_EQ(s.multiTurn.turns, 1);

  const ScenarioConfig c = parseScenario(kServing + kRequests +
                                         "load: {impl: closed_loop, concurrency: 64}\n"
                                         "scheduler: {max_batch: 32, max_tokens_per_step: 2048, prefill_chunk: 512, "
                                         "step_overhead: 20 us}\n"
                                         "random_range_ratio: 0.8\n"
                                         "multi_turn: {turns: 3}\n");
  EXPECT_EQ(c.load.concurrency, 64);
  EXPECT_EQ(c.warmup(), 64);
  EXPECT_EQ(c.scheduler.maxBatch, 32);
  EXPECT_EQ(c.scheduler.maxTokensPerStep, 2048);
  EXPECT_EQ(c.scheduler.prefillChunk, 512);
  EXPECT_DOUBLE_EQ(c.scheduler.stepOverheadS, 20e-6);
  EXPECT_EQ(c.randomRangeRatio, 0.8);
  EXPECT_EQ(c.multiTurn.turns, 3);

  const ScenarioConfig p = parseScenario(kServing + kRequests + "load: {impl: poisson, rate_per_s: 2.5}\n");
  EXPECT_EQ(p.load.impl, LoadKind::kPoisson);
  EXPECT_EQ(p.load.ratePerS, 2.5);
  EXPECT_EQ(p.warmup(), 0) << "open loop: none";
  const ScenarioConfig w = parseScenario(kServing + kRequests +
                                         "load: {impl: closed_loop, concurrency: 8}\n"
                                         "warmup_requests: 3\n");
  EXPECT_EQ(w.warmup(), 3);
  const ScenarioConfig t = parseScenario(kServing + kRequests + "load: {impl: trace, file: load.csv}\n");
  EXPECT_EQ(t.load.impl, LoadKind::kTrace);
  EXPECT_EQ(t.load.file, "load.csv");
  EXPECT_EQ(t.warmup(), 0);
}

TEST(ScenarioConfig, ShippedScenariosParse) {
  const auto shipped = [](const std::string& name) {
    return ScenarioConfig::schema().parse(
        config::loadConfigFile("scenario", config::resolveConfigFile("scenario", "workloads/scenarios", name)));
  };
  const ScenarioConfig ix = shipped("inferencex-8k1k");
  EXPECT_EQ(ix.kind, ScenarioKind::kServing);
  EXPECT_EQ(ix.load.impl, LoadKind::kClosedLoop);
  EXPECT_EQ(ix.load.concurrency, 64);
  EXPECT_EQ(ix.inputTokens, 8192);
  EXPECT_EQ(ix.outputTokens, 1024);
  EXPECT_EQ(ix.randomRangeRatio, 0.8);
  EXPECT_EQ(ix.requests, 64);
  EXPECT_EQ(ix.warmup(), 64);
  const ScenarioConfig step = shipped("decode-step");
  EXPECT_EQ(step.kind, ScenarioKind::kDecodeStep);
  EXPECT_EQ(step.batch, 1);
  EXPECT_EQ(step.contextLength, 8192);
  const ScenarioConfig d = parseScenario(kDecode);
  EXPECT_EQ(d.batch, 4);
  EXPECT_EQ(d.contextLength, 100);
}

TEST(ScenarioConfig, KeysOfTheOtherKindAreRejectedNamingTheKey) {
  using config::ErrorKind;
  expectError(kServing + kRequests + "batch: 4\n", ErrorKind::kInvalidConfig, "scenario.batch", 7);
  expectError(kServing + kRequests + "context_length: 4\n", ErrorKind::kInvalidConfig, "scenario.context_length", 7);
  expectError(kDecode + "requests: 5\n", ErrorKind::kInvalidConfig, "scenario.requests", 6);
  expectError(kDecode + "input_tokens: 5\n", ErrorKind::kInvalidConfig, "scenario.input_tokens", 6);
  expectError(kDecode + "scheduler: {max_batch: 4}\n", ErrorKind::kInvalidConfig, "scenario.scheduler", 6);
  expectError(kDecode + "load: {impl: closed_loop, concurrency: 2}\n", ErrorKind::kInvalidConfig, "scenario.load", 6);
  expectError(kDecode + "multi_turn: {turns: 2}\n", ErrorKind::kInvalidConfig, "scenario.multi_turn", 6);
}

TEST(ScenarioConfig, ServingNeedsRequestsAndLengths) {
  using config::ErrorKind;
  expectError(kServing, ErrorKind::kMissingKey, "scenario.requests");
  expectError("name: s\ndescription: d\nkind: serving\noutput_tokens: 10\nrequests: 5\n", ErrorKind::kMissingKey,
              "scenario.input_tokens");
  expectError("name: s\ndescription: d\nkind: serving\ninput_tokens: 10\nrequests: 5\n", ErrorKind::kMissingKey,
              "scenario.output_tokens");
  expectError("name: s\ndescription: d\nkind: decode_step\nbatch: 4\n", ErrorKind::kMissingKey,
              "scenario.context_length");
}

TEST(ScenarioConfig, LoadKeysBelongToTheirImpl) {
  using config::ErrorKind;
  const std::string base = kServing + kRequests;
  expectError(base + "load: {impl: closed_loop, concurrency: 2, rate_per_s: 5}\n", ErrorKind::kInvalidConfig,
              "scenario.load.rate_per_s", 7);
  expectError(base + "load: {impl: closed_loop}\n", ErrorKind::kMissingKey, "scenario.load.concurrency", 7);
  expectError(base + "load: {impl: closed_loop, concurrency: 0}\n", ErrorKind::kOutOfRange, "scenario.load.concurrency",
              7);
  expectError(base + "load: {impl: trace}\n", ErrorKind::kMissingKey, "scenario.load.file", 7);
  expectError(base + "load: {impl: poisson}\n", ErrorKind::kMissingKey, "scenario.load.rate_per_s", 7);
  expectError(base + "load: {impl: poisson, rate_per_s: 1, concurrency: 4}\n", ErrorKind::kInvalidConfig,
              "scenario.load.concurrency", 7);
  expectError(base + "load: {impl: poisson, rate_per_s: 1, file: x.csv}\n", ErrorKind::kInvalidConfig,
              "scenario.load.file", 7);
  expectError(base + "load: {impl: open_loop}\n", ErrorKind::kOutOfRange, "scenario.load.impl", 7);
}

TEST(ScenarioConfig, ConversationsNeedClosedLoopLoad) {
  using config::ErrorKind;
  const std::string base = kServing + kRequests;
  expectError(base + "load: {impl: poisson, rate_per_s: 2}\nmulti_turn: {turns: 2}\n", ErrorKind::kInvalidConfig,
              "scenario.multi_turn", 8);
  expectError(base + "load: {impl: trace, file: t.csv}\nmulti_turn: {turns: 4}\n", ErrorKind::kInvalidConfig,
              "scenario.multi_turn", 8);
  EXPECT_EQ(parseScenario(base + "load: {impl: poisson, rate_per_s: 2}\nmulti_turn: {turns: 1}\n").multiTurn.turns, 1);
  EXPECT_EQ(parseScenario(base + "load: {impl: closed_loop, concurrency: 2}\nmulti_turn: {turns: 2}\n").multiTurn.turns,
            2);
}

TEST(ScenarioConfig, SchedulerAndRatioValuesAreRangeChecked) {
  using config::ErrorKind;
  const std::string base = kServing + kRequests;
  expectError(base + "scheduler: {max_batch: 0}\n", ErrorKind::kOutOfRange, "max_batch", 7);
  expectError(base + "scheduler: {prefill_chunk: 0}\n", ErrorKind::kOutOfRange, "prefill_chunk", 7);
  expectError(base + "scheduler: {max_bach: 4}\n", ErrorKind::kUnknownKey, "max_bach", 7);
  expectError(base + "scheduler: {admission: reserved}\n", ErrorKind::kOutOfRange,
              "'scenario.scheduler.admission' = 'reserved' is not one of: watermark, reserve; did you mean 'reserve'?",
              7);
  EXPECT_EQ(parseScenario(base).scheduler.admission, KvAdmission::kWatermark);
  EXPECT_EQ(parseScenario(base + "scheduler: {admission: reserve}\n").scheduler.admission, KvAdmission::kReserve);
  expectError(base + "random_range_ratio: 1.5\n", ErrorKind::kOutOfRange, "random_range_ratio", 7);
}

}  // namespace
}  // namespace scoville::workload
