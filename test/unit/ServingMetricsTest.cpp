// Serving metrics: percentiles, per-request latencies, window throughput and the report block.
// Pure logic, no SystemC.
#include <gtest/gtest.h>
#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "workloads/ServingMetrics.h"

namespace scoville::workload {
namespace {

constexpr double kTol = 1e-12;

RequestRecord record(uint64_t id, double arrival, std::vector<double> tokenTimes, uint64_t inputTokens = 0,
                     bool measured = true) {
  RequestRecord r;
  r.id = id;
  r.arrival = arrival;
  r.firstToken = tokenTimes.front();
  r.finish = tokenTimes.back();
  r.inputTokens = inputTokens;
  r.outputTokens = tokenTimes.size();
  r.tokenTimes = std::move(tokenTimes);
  r.measured = measured;
  return r;
}

// Four requests with binary-exact times:
//   1: arrival 0,   tokens 1, 1.5, 2.5             TTFT 1,   E2EL 2.5,  TPOT 0.75,  ITL 0.5, 1
//   2: arrival 0.5, tokens 2, 2.25                 TTFT 1.5, E2EL 1.75, TPOT 0.25,  ITL 0.25
//   3: arrival 1,   token 3                        TTFT 2,   E2EL 2,    no TPOT,    no ITL
//   4: arrival 0,   tokens 0.5, 0.625, ..., 1      TTFT 0.5, E2EL 1,    TPOT 0.125, ITL 0.125 x4
std::vector<RequestRecord> fourRequests() {
  return {record(1, 0.0, {1.0, 1.5, 2.5}, 100), record(2, 0.5, {2.0, 2.25}, 200), record(3, 1.0, {3.0}, 300),
          record(4, 0.0, {0.5, 0.625, 0.75, 0.875, 1.0}, 400)};
}

// Every number anywhere in `j` is finite, and the whole document survives a dump/parse round trip.
void expectAllFinite(const nlohmann::ordered_json& j) {
  std::function<void(const nlohmann::ordered_json&, const std::string&)> walk = [&](const nlohmann::ordered_json& node,
                                                                                    const std::string& path) {
    if (node.is_structured()) {
      for (auto it = node.begin(); it != node.end(); ++it) walk(*it, path + "/" + (node.is_object() ? it.key() : ""));
    } else if (node.is_number_float()) {
      EXPECT_TRUE(std::isfinite(node.get<double>())) << path;
    }
  };
  walk(j, "");
  EXPECT_EQ(nlohmann::ordered_json::parse(j.dump()), j);
}

TEST(ServingMetricsPercentile, MatchesNumpyLinearInterpolation) {
  // np.percentile([1, 2, 3, 4], [50, 90, 99]) == [2.5, 3.7, 3.97]: h = p/100 * 3.
  const LatencyStats s = latencyStats({4, 1, 3, 2});
  EXPECT_EQ(s.count, 4u);
  EXPECT_NEAR(s.median, 2.5, kTol);
  EXPECT_NEAR(s.p90, 3.7, kTol);
  EXPECT_NEAR(s.p99, 3.97, kTol);
  EXPECT_DOUBLE_EQ(s.mean, 2.5);
  EXPECT_DOUBLE_EQ(s.min, 1);
  EXPECT_DOUBLE_EQ(s.max, 4);
  EXPECT_NEAR(s.stddev, std::sqrt(1.25), kTol);  // np.std (ddof=0)

  // np.percentile([10, 20, 30, 40, 50], [50, 90, 99]) == [30, 46, 49.6]; np.std == sqrt(200).
  const LatencyStats t = latencyStats({50, 10, 40, 20, 30});
  EXPECT_NEAR(t.median, 30, kTol);
  EXPECT_NEAR(t.p90, 46, kTol);
  EXPECT_NEAR(t.p99, 49.6, kTol);
  EXPECT_NEAR(t.stddev, std::sqrt(200.0), kTol);

  const std::vector<double> sorted{1, 2, 3, 4};
  EXPECT_DOUBLE_EQ(percentileOfSorted(sorted, 0), 1);
  EXPECT_DOUBLE_EQ(percentileOfSorted(sorted, 100), 4);
  EXPECT_NEAR(percentileOfSorted(sorted, 25), 1.75, kTol);
  EXPECT_THROW(percentileOfSorted(sorted, 101), std::invalid_argument);
  EXPECT_THROW(percentileOfSorted({}, 50), std::invalid_argument);
}

TEST(ServingMetricsPercentile, SingleSampleIsEveryStatistic) {
  const LatencyStats s = latencyStats({0.25});
  EXPECT_EQ(s.count, 1u);
  for (double v : {s.mean, s.median, s.p90, s.p99, s.min, s.max}) EXPECT_DOUBLE_EQ(v, 0.25);
  EXPECT_DOUBLE_EQ(s.stddev, 0);
}

TEST(ServingMetricsPercentile, EmptyIsAllZeroAndNonFiniteThrows) {
  const LatencyStats s = latencyStats({});
  EXPECT_EQ(s.count, 0u);
  for (double v : {s.mean, s.median, s.p90, s.p99, s.min, s.max, s.stddev}) EXPECT_EQ(v, 0);
  EXPECT_THROW(latencyStats({1.0, std::numeric_limits<double>::quiet_NaN()}), std::invalid_argument);
  EXPECT_THROW(latencyStats({std::numeric_limits<double>::infinity()}), std::invalid_argument);
}

TEST(ServingMetricsLatency, HandBuiltRequests) {
  const ServingMetrics m = computeServingMetrics(fourRequests(), {0.0, 3.0});
  EXPECT_EQ(m.requests, 4u);

  // TTFT [0.5, 1, 1.5, 2]: p90 at h = 2.7.
  EXPECT_EQ(m.ttft.count, 4u);
  EXPECT_NEAR(m.ttft.mean, 1.25, kTol);
  EXPECT_NEAR(m.ttft.median, 1.25, kTol);
  EXPECT_NEAR(m.ttft.p90, 1.85, kTol);
  EXPECT_DOUBLE_EQ(m.ttft.min, 0.5);
  EXPECT_DOUBLE_EQ(m.ttft.max, 2.0);

  // TPOT excludes the first token and the single-token request 3: [0.125, 0.25, 0.75].
  EXPECT_EQ(m.tpot.count, 3u);
  EXPECT_NEAR(m.tpot.mean, 0.375, kTol);
  EXPECT_NEAR(m.tpot.median, 0.25, kTol);
  EXPECT_DOUBLE_EQ(m.tpot.min, 0.125);
  EXPECT_DOUBLE_EQ(m.tpot.max, 0.75);

  // ITL pools every gap: [0.125 x4, 0.25, 0.5, 1]; p90 at h = 5.4.
  EXPECT_EQ(m.itl.count, 7u);
  EXPECT_NEAR(m.itl.mean, 2.25 / 7, kTol);
  EXPECT_NEAR(m.itl.median, 0.125, kTol);
  EXPECT_NEAR(m.itl.p90, 0.7, kTol);
  EXPECT_DOUBLE_EQ(m.itl.max, 1.0);

  // E2EL [1, 1.75, 2, 2.5].
  EXPECT_EQ(m.e2el.count, 4u);
  EXPECT_NEAR(m.e2el.mean, 1.8125, kTol);
  EXPECT_NEAR(m.e2el.median, 1.875, kTol);
  EXPECT_DOUBLE_EQ(m.e2el.max, 2.5);

  // Interactivity: 1 / median TPOT (InferenceX's median_intvty); the mean-based one beside it.
  EXPECT_NEAR(m.interactivity, 4.0, kTol);
  EXPECT_NEAR(m.interactivityMean, 1 / 0.375, kTol);
}

TEST(ServingMetricsLatency, WarmUpRequestsAreLeftOutOfLatencyButNotThroughput) {
  std::vector<RequestRecord> records = fourRequests();
  records.push_back(record(99, 0.0, {2.5, 2.75, 2.875}, 1000, /*measured=*/false));
  const ServingMetrics base = computeServingMetrics(fourRequests(), {2.5, 3.0});
  const ServingMetrics m = computeServingMetrics(records, {2.5, 3.0});

  EXPECT_EQ(m.requests, 4u);
  EXPECT_EQ(m.ttft.count, base.ttft.count);
  EXPECT_DOUBLE_EQ(m.ttft.max, base.ttft.max);
  EXPECT_DOUBLE_EQ(m.tpot.mean, base.tpot.mean);
  EXPECT_EQ(m.itl.count, base.itl.count);
  EXPECT_DOUBLE_EQ(m.e2el.max, base.e2el.max);

  // The window, not the flag, excludes warm-up work: request 99's three tokens are inside it.
  EXPECT_EQ(m.outputTokensInWindow, base.outputTokensInWindow + 3);
  EXPECT_EQ(m.inputTokensInWindow, base.inputTokensInWindow + 1000);
  EXPECT_EQ(m.requestsFinishedInWindow, base.requestsFinishedInWindow + 1);
}

TEST(ServingMetricsLatency, TimeToFirstTokenPerTurnOfMultiTurnConversations) {
  std::vector<RequestRecord> records = fourRequests();  // TTFT 1, 1.5, 2, 0.5
  EXPECT_TRUE(computeServingMetrics(records, {0.0, 3.0}).ttftByTurn.empty()) << "single-turn load";
  records[0].turn = 2;  // TTFT 1, 100 input tokens
  records[1].turn = 1;  // TTFT 1.5, 200
  records[2].turn = 2;  // TTFT 2, 300
  records[3].turn = 1;  // TTFT 0.5, 400
  records.push_back(record(5, 0.0, {9.0}, 50, false));
  records.back().turn = 3;  // warm-up: no turn 3 row
  const ServingMetrics m = computeServingMetrics(records, {0.0, 3.0});
  ASSERT_EQ(m.ttftByTurn.size(), 2u);
  EXPECT_EQ(m.ttftByTurn[0].turn, 1);
  EXPECT_EQ(m.ttftByTurn[0].ttft.count, 2u);
  EXPECT_NEAR(m.ttftByTurn[0].ttft.mean, 1.0, kTol);
  EXPECT_NEAR(m.ttftByTurn[0].meanInputTokens, 300.0, kTol);
  EXPECT_EQ(m.ttftByTurn[1].turn, 2);
  EXPECT_NEAR(m.ttftByTurn[1].ttft.median, 1.5, kTol);
  EXPECT_NEAR(m.ttftByTurn[1].meanInputTokens, 200.0, kTol);
  const auto json = servingMetricsJson(m, 1, 0.0);
  ASSERT_EQ(json["ttft_by_turn_s"].size(), 2u);
  EXPECT_EQ(json["ttft_by_turn_s"][1]["turn"], 2);
  EXPECT_EQ(json["ttft_by_turn_s"][1]["requests"], 2);
  EXPECT_NEAR(json["ttft_by_turn_s"][1]["p90"].get<double>(), 1.9, kTol);
}

TEST(ServingMetricsThroughput, InFlightRequestsCountTheirTokensOnly) {
  // The run stops when the last measured request finishes; unmeasured requests still in flight
  // have produced some of their tokens (or none: firstToken and finish are then unset).
  std::vector<RequestRecord> records = fourRequests();
  RequestRecord partial = record(5, 1.5, {2.0, 2.5}, 1000, /*measured=*/false);
  partial.outputTokens = 8;
  partial.finish = 0.0;
  RequestRecord waiting;
  waiting.id = 6;
  waiting.arrival = 2.75;
  waiting.inputTokens = 2000;
  waiting.outputTokens = 4;
  waiting.measured = false;
  records.push_back(partial);
  records.push_back(waiting);

  const ServingMetrics base = computeServingMetrics(fourRequests(), {0.0, 3.0});
  const ServingMetrics m = computeServingMetrics(records, {0.0, 3.0});
  EXPECT_EQ(m.requestsInFlight, 2u);
  EXPECT_EQ(m.requests, 4u);
  EXPECT_EQ(m.outputTokensInWindow, base.outputTokensInWindow + 2);
  EXPECT_EQ(m.inputTokensInWindow, base.inputTokensInWindow + 1000);  // request 6 not prefilled yet
  EXPECT_EQ(m.requestsFinishedInWindow, base.requestsFinishedInWindow);
  EXPECT_EQ(m.itl.count, base.itl.count);
  EXPECT_DOUBLE_EQ(m.tpot.mean, base.tpot.mean);
  EXPECT_EQ(servingMetricsJson(m, 1, 0.0)["requests_in_flight_at_stop"].get<std::size_t>(), 2u);
}

TEST(ServingMetricsThroughput, CountsOnlyWorkInsideTheWindow) {
  // [1, 2]: output tokens 1, 1.5 (req 1), 2 (req 2), 1 (req 4); input of reqs 1 and 2 (first
  // token 1 and 2, both ends included); req 4 finishes at 1.
  const ServingMetrics a = computeServingMetrics(fourRequests(), {1.0, 2.0});
  EXPECT_EQ(a.outputTokensInWindow, 4u);
  EXPECT_EQ(a.inputTokensInWindow, 300u);
  EXPECT_EQ(a.requestsFinishedInWindow, 1u);
  EXPECT_DOUBLE_EQ(a.outputThroughput, 4);
  EXPECT_DOUBLE_EQ(a.inputThroughput, 300);
  EXPECT_DOUBLE_EQ(a.totalThroughput, 304);
  EXPECT_DOUBLE_EQ(a.requestThroughput, 1);

  // [1, 3], two seconds: 7 output tokens, input of reqs 1-3, all four finish inside.
  const ServingMetrics b = computeServingMetrics(fourRequests(), {1.0, 3.0});
  EXPECT_EQ(b.outputTokensInWindow, 7u);
  EXPECT_EQ(b.inputTokensInWindow, 600u);
  EXPECT_DOUBLE_EQ(b.outputThroughput, 3.5);
  EXPECT_DOUBLE_EQ(b.inputThroughput, 300);
  EXPECT_DOUBLE_EQ(b.totalThroughput, 303.5);
  EXPECT_DOUBLE_EQ(b.requestThroughput, 2);
  // Latencies do not depend on the window.
  EXPECT_DOUBLE_EQ(a.ttft.mean, b.ttft.mean);
}

TEST(ServingMetricsThroughput, PerRequestAsInferenceXCountsIt) {
  // InferenceX (benchmark_serving) divides the prompt and output tokens of the requests the
  // benchmark ran by its duration, from its first request's arrival to its last one's finish.
  // Two measured requests over [1, 5]: 1,000 + 3,000 prompt tokens and 4 + 2 output tokens, two
  // requests: 1,001.5 tok/s in all, 1.5 output, 0.5 req/s. A warm-up request still decoding at
  // 1.5 and 2 and the first token of one sent after the last measured one (at 4.5) count in the
  // window's steady-state rate and not per request.
  const std::vector<RequestRecord> records = {
      record(1, 0.0, {0.5, 1.5, 2.0}, 500, /*measured=*/false),
      record(2, 1.0, {2.0, 3.0, 4.0, 4.5}, 1000),
      record(3, 2.5, {3.0, 5.0}, 3000),
      [] {
        RequestRecord r = record(4, 4.0, {4.5}, 700, /*measured=*/false);
        r.outputTokens = 8;
        r.finish = 0.0;
        return r;
      }(),
  };
  const ServingMetrics m = computeServingMetrics(records, {1.0, 5.0});
  EXPECT_EQ(m.completedInputTokens, 4000u);
  EXPECT_EQ(m.completedOutputTokens, 6u);
  EXPECT_DOUBLE_EQ(m.completedTotalThroughput, 4006.0 / 4);
  EXPECT_DOUBLE_EQ(m.completedOutputThroughput, 1.5);
  EXPECT_DOUBLE_EQ(m.completedInputThroughput, 1000);
  EXPECT_DOUBLE_EQ(m.completedRequestThroughput, 0.5);
  // In the window: 2 warm-up + 6 measured + 1 later output tokens; prompts of requests 2, 3, 4.
  EXPECT_EQ(m.outputTokensInWindow, 9u);
  EXPECT_EQ(m.inputTokensInWindow, 4700u);
  EXPECT_DOUBLE_EQ(m.totalThroughput, 4709.0 / 4);

  const nlohmann::ordered_json j = servingMetricsJson(m, 2, 1400.0);
  EXPECT_DOUBLE_EQ(j["inferencex"]["tput_per_gpu"].get<double>(), 4006.0 / 4 / 2);
  EXPECT_DOUBLE_EQ(j["inferencex"]["output_tput_per_gpu"].get<double>(), 1.5 / 2);
  EXPECT_DOUBLE_EQ(j["benchmark_serving"]["total_token_throughput"].get<double>(), 4006.0 / 4);
  EXPECT_DOUBLE_EQ(j["benchmark_serving"]["output_throughput"].get<double>(), 1.5);
  EXPECT_DOUBLE_EQ(j["benchmark_serving"]["request_throughput"].get<double>(), 0.5);
  EXPECT_EQ(j["benchmark_serving"]["total_input_tokens"].get<uint64_t>(), 4000u);
  EXPECT_EQ(j["benchmark_serving"]["total_output_tokens"].get<uint64_t>(), 6u);
  EXPECT_DOUBLE_EQ(j["throughput_tok_per_s"]["total"].get<double>(), 4709.0 / 4);
  EXPECT_DOUBLE_EQ(j["completed_throughput_tok_per_s"]["total"].get<double>(), 4006.0 / 4);
}

TEST(ServingMetricsReport, PerChipAndPerKwScale) {
  const ServingMetrics m = computeServingMetrics(fourRequests(), {1.0, 3.0});
  const nlohmann::ordered_json j = servingMetricsJson(m, 4, 2000.0);
  EXPECT_DOUBLE_EQ(j["throughput_tok_per_s"]["total"].get<double>(), 303.5);
  EXPECT_DOUBLE_EQ(j["throughput_per_chip_tok_per_s"]["total"].get<double>(), 303.5 / 4);
  EXPECT_DOUBLE_EQ(j["throughput_per_chip_tok_per_s"]["output"].get<double>(), 3.5 / 4);
  EXPECT_DOUBLE_EQ(j["throughput_per_kw_tok_per_s"]["total"].get<double>(), 303.5 / 2);
  EXPECT_DOUBLE_EQ(j["throughput_per_kw_tok_per_s"]["input"].get<double>(), 300.0 / 2);
  // InferenceX's rates count per request: all four requests' 1,000 prompt and 11 output tokens
  // over the two seconds.
  const auto& ix = j["inferencex"];
  EXPECT_DOUBLE_EQ(ix["tput_per_gpu"].get<double>(), 505.5 / 4);
  EXPECT_DOUBLE_EQ(ix["output_tput_per_gpu"].get<double>(), 5.5 / 4);
  EXPECT_DOUBLE_EQ(ix["input_tput_per_gpu"].get<double>(), 500.0 / 4);
  EXPECT_DOUBLE_EQ(ix["tput_per_kw"].get<double>(), 505.5 / 2);
  EXPECT_DOUBLE_EQ(ix["output_tput_per_kw"].get<double>(), 5.5 / 2);
  EXPECT_DOUBLE_EQ(ix["input_tput_per_kw"].get<double>(), 500.0 / 2);
  EXPECT_DOUBLE_EQ(j["completed_throughput_per_chip_tok_per_s"]["total"].get<double>(), 505.5 / 4);

  // Twice the chips and power: half per chip and per kW, same totals.
  const nlohmann::ordered_json k = servingMetricsJson(m, 8, 4000.0);
  EXPECT_DOUBLE_EQ(k["inferencex"]["tput_per_gpu"].get<double>(), ix["tput_per_gpu"].get<double>() / 2);
  EXPECT_DOUBLE_EQ(k["inferencex"]["tput_per_kw"].get<double>(), ix["tput_per_kw"].get<double>() / 2);
  EXPECT_EQ(k["throughput_tok_per_s"], j["throughput_tok_per_s"]);
}

TEST(ServingMetricsReport, UnitsOfEachView) {
  const ServingMetrics m = computeServingMetrics(fourRequests(), {0.0, 3.0});
  const nlohmann::ordered_json j = servingMetricsJson(m, 1, 1000.0);

  // Ours: seconds, full statistics.
  EXPECT_DOUBLE_EQ(j["ttft_s"]["median"].get<double>(), m.ttft.median);
  EXPECT_DOUBLE_EQ(j["ttft_s"]["p90"].get<double>(), m.ttft.p90);
  EXPECT_EQ(j["tpot_s"]["count"].get<std::size_t>(), 3u);
  EXPECT_DOUBLE_EQ(j["interactivity_tok_per_s_per_user"].get<double>(), 4.0);

  // InferenceX's aggregated results: seconds (its process_result.py divides benchmark_serving's
  // *_ms by 1000), interactivity = 1 / TPOT statistic.
  const auto& ix = j["inferencex"];
  EXPECT_DOUBLE_EQ(ix["median_ttft"].get<double>(), 1.25);
  EXPECT_DOUBLE_EQ(ix["mean_e2el"].get<double>(), 1.8125);
  EXPECT_DOUBLE_EQ(ix["median_tpot"].get<double>(), 0.25);
  EXPECT_DOUBLE_EQ(ix["p99_tpot"].get<double>(), m.tpot.p99);
  EXPECT_DOUBLE_EQ(ix["median_itl"].get<double>(), 0.125);
  EXPECT_DOUBLE_EQ(ix["std_ttft"].get<double>(), m.ttft.stddev);
  EXPECT_DOUBLE_EQ(ix["median_intvty"].get<double>(), 4.0);
  EXPECT_NEAR(ix["mean_intvty"].get<double>(), 1 / 0.375, kTol);
  EXPECT_DOUBLE_EQ(ix["p99_intvty"].get<double>(), 1 / m.tpot.p99);

  // vLLM benchmark_serving: milliseconds.
  const auto& bs = j["benchmark_serving"];
  EXPECT_DOUBLE_EQ(bs["median_ttft_ms"].get<double>(), 1250);
  EXPECT_DOUBLE_EQ(bs["p90_ttft_ms"].get<double>(), m.ttft.p90 * 1000);
  EXPECT_DOUBLE_EQ(bs["mean_tpot_ms"].get<double>(), 375);
  EXPECT_DOUBLE_EQ(bs["median_itl_ms"].get<double>(), 125);
  EXPECT_DOUBLE_EQ(bs["p99_e2el_ms"].get<double>(), m.e2el.p99 * 1000);
  EXPECT_EQ(bs["completed"].get<std::size_t>(), 4u);
  expectAllFinite(j);
}

TEST(ServingMetricsReport, DegenerateInputsStayFinite) {
  // No records, zero-length window, unknown power.
  const ServingMetrics empty = computeServingMetrics({}, {2.0, 2.0});
  EXPECT_EQ(empty.requests, 0u);
  EXPECT_EQ(empty.totalThroughput, 0);
  EXPECT_EQ(empty.interactivity, 0);
  expectAllFinite(servingMetricsJson(empty, 1, 0.0));

  // Tokens inside a zero-length window: counted, but no rate.
  const ServingMetrics instant = computeServingMetrics(fourRequests(), {1.0, 1.0});
  EXPECT_GT(instant.outputTokensInWindow, 0u);
  EXPECT_EQ(instant.outputThroughput, 0);
  EXPECT_EQ(instant.requestThroughput, 0);
  expectAllFinite(servingMetricsJson(instant, 2, 0.0));

  // Only single-token requests: no TPOT, no ITL, interactivity undefined -> 0.
  const ServingMetrics single = computeServingMetrics({record(1, 0.0, {1.0}, 8), record(2, 0.5, {1.0}, 8)}, {0, 2});
  EXPECT_EQ(single.tpot.count, 0u);
  EXPECT_EQ(single.itl.count, 0u);
  EXPECT_EQ(single.interactivity, 0);
  EXPECT_EQ(single.interactivityMean, 0);
  const nlohmann::ordered_json j = servingMetricsJson(single, 1, 700.0);
  EXPECT_EQ(j["inferencex"]["median_intvty"].get<double>(), 0);
  expectAllFinite(j);

  // Every token at its arrival instant: TPOT 0 -> interactivity 0, not infinity.
  const ServingMetrics instantTokens = computeServingMetrics({record(1, 1.0, {1.0, 1.0, 1.0})}, {0, 2});
  EXPECT_EQ(instantTokens.tpot.count, 1u);
  EXPECT_EQ(instantTokens.interactivity, 0);
  expectAllFinite(servingMetricsJson(instantTokens, 1, 700.0));
}

TEST(ServingMetricsReport, DeterministicForAnyRecordOrder) {
  std::vector<RequestRecord> records = fourRequests();
  const std::string forward = servingMetricsJson(computeServingMetrics(records, {0.5, 2.5}), 2, 1400.0).dump();
  std::reverse(records.begin(), records.end());
  EXPECT_EQ(servingMetricsJson(computeServingMetrics(records, {0.5, 2.5}), 2, 1400.0).dump(), forward);
}

TEST(ServingMetricsValidation, RejectsDriverBugsNamingTheRequest) {
  const auto expectRejected = [](RequestRecord r, const std::string& what) {
    r.id = 4242;
    try {
      computeServingMetrics({record(1, 0.0, {1.0}), r}, {0.0, 1.0});
      ADD_FAILURE() << "accepted: " << what;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("4242"), std::string::npos) << e.what();
    }
  };
  RequestRecord r = record(0, 0.0, {1.0, 2.0, 3.0});
  RequestRecord unfinished = r;
  unfinished.outputTokens = 4;
  expectRejected(unfinished, "measured request with fewer token times than output tokens");
  RequestRecord noTokens = r;
  noTokens.outputTokens = 0;
  noTokens.tokenTimes.clear();
  expectRejected(noTokens, "outputTokens == 0");
  RequestRecord unordered = r;
  unordered.tokenTimes = {1.0, 2.5, 2.0, 3.0};
  unordered.outputTokens = 4;
  expectRejected(unordered, "token times out of order");
  RequestRecord firstMismatch = r;
  firstMismatch.firstToken = 0.5;
  expectRejected(firstMismatch, "firstToken != tokenTimes.front()");
  RequestRecord early = r;
  early.arrival = 1.5;
  expectRejected(early, "first token before arrival");
  RequestRecord nan = r;
  nan.arrival = std::numeric_limits<double>::quiet_NaN();
  expectRejected(nan, "NaN arrival");
  RequestRecord tooMany = r;  // unmeasured records are checked too
  tooMany.outputTokens = 2;
  tooMany.measured = false;
  expectRejected(tooMany, "more token times than output tokens");

  EXPECT_THROW(computeServingMetrics(fourRequests(), {2.0, 1.0}), std::invalid_argument);
  EXPECT_THROW(computeServingMetrics(fourRequests(), {0.0, std::numeric_limits<double>::infinity()}),
               std::invalid_argument);
  const ServingMetrics m = computeServingMetrics(fourRequests(), {0.0, 3.0});
  EXPECT_THROW(servingMetricsJson(m, 0, 1000.0), std::invalid_argument);
  EXPECT_THROW(servingMetricsJson(m, 1, -1.0), std::invalid_argument);
  EXPECT_THROW(servingMetricsJson(m, 1, std::numeric_limits<double>::quiet_NaN()), std::invalid_argument);
}

}  // namespace
}  // namespace scoville::workload
