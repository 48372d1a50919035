#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include <nlohmann/json.hpp>

namespace scoville::workload {

/// What happened to one request, as the serving driver records it. Times are simulated seconds
/// from the start of the run. The driver sets every field; computeServingMetrics only reads them
/// and rejects a record that breaks the invariants below (a driver bug).
///
/// A finished request has tokenTimes.size() == outputTokens. A request still in flight when the
/// run stopped (fewer token times than outputTokens; finish unset, and firstToken too if it has
/// produced no token) is accepted only if it is not measured: its tokens inside the window count
/// toward throughput, nothing else.
struct RequestRecord {
  uint64_t id = 0;
  int user = -1;            ///< closed-loop user (-1: open loop)
  int replica = 0;          ///< data-parallel replica that served it
  double arrival = 0.0;     ///< when it was sent
  double firstToken = 0.0;  ///< when its first output token was produced (prefill done)
  double finish = 0.0;      ///< when its last output token was produced
  uint64_t inputTokens = 0;
  uint64_t outputTokens = 0;  ///< >= 1
  /// Time of every output token produced: non-decreasing, at most outputTokens of them (exactly
  /// outputTokens once finished); front() == firstToken >= arrival; finished: back() == finish.
  std::vector<double> tokenTimes;
  int preemptions = 0;
  bool measured = true;  ///< false: warm-up (or after-measurement) request, left out of latency stats
  int turn = 0;          ///< multi-turn: its conversation's turn (1-based; 0: single-turn load)
};

/// Summary of a sample set, in the samples' unit.
struct LatencyStats {
  std::size_t count = 0;
  double mean = 0, median = 0, p90 = 0, p99 = 0, min = 0, max = 0;
  double stddev = 0;  ///< population standard deviation (ddof = 0, as numpy's np.std)
};

/// The p-th percentile (p in [0, 100]) of `sorted` (ascending, non-empty), by linear
/// interpolation between the closest ranks: numpy's default method ('linear'), which vLLM's
/// benchmark_serving uses through np.percentile / np.median. Index h = p/100 * (n-1); the result
/// is sorted[floor(h)] + (h - floor(h)) * (sorted[floor(h)+1] - sorted[floor(h)]).
double percentileOfSorted(const std::vector<double>& sorted, double p);

/// Count, mean, median, p90, p99, min, max and population standard deviation of `samples`.
/// Percentiles as percentileOfSorted. Empty input: every field zero. A non-finite sample throws
/// std::invalid_argument.
LatencyStats latencyStats(std::vector<double> samples);

/// The measurement window, simulated seconds, both ends included. end >= start.
struct ServingWindow {
  double start = 0.0;
  double end = 0.0;
};

/// Time to first token of one turn of multi-turn conversations: every measured request that was
/// that turn of its conversation.
struct TurnTtft {
  int turn = 0;                  ///< 1-based
  double meanInputTokens = 0.0;  ///< its prompts, the conversation's earlier turns included
  LatencyStats ttft;
};

/// Serving metrics of one run.
///
/// Latency statistics (seconds) cover every measured request (RequestRecord::measured), wherever
/// it falls relative to the window, following vLLM's benchmark_serving:
///  - TTFT = firstToken - arrival; E2EL = finish - arrival;
///  - TPOT, per request, excludes the first token: (finish - firstToken) / (outputTokens - 1);
///    requests with a single output token have no TPOT and are left out of it;
///  - ITL: every gap between consecutive output tokens, of every measured request, pooled.
///
/// Throughput is counted two ways over the same window (docs/serving.md#throughput-accounting):
///  - per request (`completed*`), as InferenceX, vLLM's benchmark_serving and trtllm-bench count
///    it: the prompt and output tokens of the measured requests, all of which finished, divided
///    by the benchmark's duration, from the first measured request's arrival to the last one's
///    finish (the window). It includes the ramp at the start and the drain at the end, so it
///    depends on how many requests the benchmark runs;
///  - in the window (`*Throughput`, `*InWindow`), a steady-state rate: the work done inside the
///    window, whichever request it belongs to, so tokens of warm-up and in-flight requests
///    produced inside it count too (in a closed-loop steady state the machine produces them
///    alongside measured ones): input tokens of requests whose first token (prefill completion)
///    falls inside the window, output tokens whose tokenTimes fall inside it, requests whose last
///    token falls inside it.
/// Each is divided by the window's duration (end - start). A zero-length window gives zero rates.
struct ServingMetrics {
  ServingWindow window;
  std::size_t requests = 0;  ///< measured requests
  LatencyStats ttft;
  LatencyStats tpot;
  LatencyStats itl;
  LatencyStats e2el;
  /// Interactivity, tok/s/user = 1 / median TPOT (s). InferenceX's headline `median_intvty` is
  /// 1000 / median_tpot_ms (its dashboard's interactivity axis); 0 when there is no TPOT sample.
  double interactivity = 0;
  double interactivityMean = 0;           ///< 1 / mean TPOT (InferenceX's `mean_intvty`); 0 when undefined
  uint64_t completedInputTokens = 0;      ///< prompt tokens of the measured requests
  uint64_t completedOutputTokens = 0;     ///< output tokens of the measured requests
  double completedInputThroughput = 0;    ///< completedInputTokens / duration, tok/s
  double completedOutputThroughput = 0;   ///< completedOutputTokens / duration, tok/s
  double completedTotalThroughput = 0;    ///< input + output, tok/s
  double completedRequestThroughput = 0;  ///< measured requests / duration, req/s
  uint64_t inputTokensInWindow = 0;
  uint64_t outputTokensInWindow = 0;
  uint64_t requestsFinishedInWindow = 0;
  std::size_t requestsInFlight = 0;  ///< unmeasured records not finished when the run stopped
  double inputThroughput = 0;        ///< tok/s
  double outputThroughput = 0;       ///< tok/s
  double totalThroughput = 0;        ///< input + output, tok/s
  double requestThroughput = 0;      ///< req/s
  /// Multi-turn loads (RequestRecord::turn > 0): TTFT per turn, turns in order, those with a
  /// measured request only; empty otherwise.
  std::vector<TurnTtft> ttftByTurn;
};

/// Aggregates `records` (see ServingMetrics for the definitions). Deterministic: the result
/// depends only on the records' contents, not on hash order. Throws std::invalid_argument, naming
/// the request id, for a record that breaks RequestRecord's invariants (more token times than
/// outputTokens, or fewer for a measured request; outputTokens == 0; non-finite or out-of-order
/// times), and for a window that is not finite or ends before it starts.
ServingMetrics computeServingMetrics(const std::vector<RequestRecord>& records, const ServingWindow& window);

/// The report block for `m`, served by `chips` accelerators (>= 1) of summed rated power
/// `ratedPowerW` (>= 0; 0: unknown, per-kW rates are then 0). Three views of the same numbers:
///  - our names: seconds and tok/s, unit in the key (`ttft_s`: {mean, median, p90, p99, min, max,
///    stddev, count}, `throughput_tok_per_s`, `throughput_per_chip_tok_per_s`,
///    `throughput_per_kw_tok_per_s`, ...);
///  - `inferencex`: the field names and units of InferenceX's aggregated results
///    (utils/process_result.py): latencies in SECONDS (`median_ttft`, `p99_tpot`, ..., which
///    InferenceX derives from benchmark_serving's `*_ms` fields divided by 1000), `*_intvty` =
///    1 / that TPOT statistic (tok/s/user), and tok/s per accelerator (`tput_per_gpu` = input +
///    output, `output_tput_per_gpu`, `input_tput_per_gpu`), counted per request as InferenceX
///    counts them. Our extension, not InferenceX's: `tput_per_kw`, `output_tput_per_kw`,
///    `input_tput_per_kw`, per kW of rated power;
///  - `benchmark_serving`: vLLM benchmark_serving's result names and units (`mean_ttft_ms`, ...,
///    milliseconds; `output_throughput`, `total_token_throughput` in tok/s; `request_throughput`),
///    counted per request, as it counts them.
/// Our names give both: `completed_throughput_*` per request, `throughput_*` in the window.
/// Every number is finite (JSON cannot hold NaN or infinity): undefined ratios are reported as 0.
/// Throws std::invalid_argument for chips < 1 or a negative or non-finite ratedPowerW.
nlohmann::ordered_json servingMetricsJson(const ServingMetrics& m, int chips, double ratedPowerW);

}  // namespace scoville::workload
