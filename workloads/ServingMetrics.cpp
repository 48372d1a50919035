#include "workloads/ServingMetrics.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>
#include <string>

#include <fmt/format.h>

namespace scoville::workload {
namespace {

/// a + t * (b - a), computed as numpy's _lerp does (from the nearer end), so results match
/// np.percentile to the last bit on the same data.
double lerp(double a, double b, double t) {
  const double diff = b - a;
  return t >= 0.5 ? b - diff * (1.0 - t) : a + diff * t;
}

/// numerator / denominator, or 0 where the ratio is undefined or not finite.
double ratio(double numerator, double denominator) {
  if (denominator == 0.0) return 0.0;
  const double r = numerator / denominator;
  return std::isfinite(r) ? r : 0.0;
}

void check(bool ok, const RequestRecord& r, const char* what) {
  if (!ok) throw std::invalid_argument(fmt::format("serving metrics: request {}: {}", r.id, what));
}

bool finished(const RequestRecord& r) {
  return r.tokenTimes.size() == r.outputTokens;
}

void validate(const RequestRecord& r) {
  check(r.outputTokens >= 1, r, "outputTokens is 0 (a request produces at least one token)");
  // More token times than tokens is always wrong; fewer only for a request the run stopped in
  // flight, which a measured request must not be (its latencies would be missing).
  if (r.tokenTimes.size() > r.outputTokens || (r.measured && !finished(r))) {
    throw std::invalid_argument(fmt::format("serving metrics: request {}: {} token times for {} output tokens{}", r.id,
                                            r.tokenTimes.size(), r.outputTokens,
                                            r.measured ? " (a measured request must finish)" : ""));
  }
  check(std::isfinite(r.arrival), r, "non-finite arrival");
  check(std::all_of(r.tokenTimes.begin(), r.tokenTimes.end(), [](double t) { return std::isfinite(t); }), r,
        "non-finite token time");
  check(std::is_sorted(r.tokenTimes.begin(), r.tokenTimes.end()), r, "token times out of order");
  if (r.tokenTimes.empty()) return;
  check(r.tokenTimes.front() == r.firstToken, r, "tokenTimes.front() != firstToken");
  check(r.arrival <= r.firstToken, r, "first token before arrival");
  if (finished(r)) check(r.tokenTimes.back() == r.finish, r, "tokenTimes.back() != finish");
}

bool inside(double t, const ServingWindow& w) {
  return t >= w.start && t <= w.end;
}

nlohmann::ordered_json statsJson(const LatencyStats& s) {
  return {{"mean", s.mean}, {"median", s.median}, {"p90", s.p90},       {"p99", s.p99},
          {"min", s.min},   {"max", s.max},       {"stddev", s.stddev}, {"count", s.count}};
}

/// InferenceX's / benchmark_serving's mean, median, std, p90, p99 of one metric, scaled to `unit`
/// (1: seconds, 1000: ms), under "{stat}_{name}{suffix}".
void addBenchmarkStats(nlohmann::ordered_json& out, const std::string& name, const std::string& suffix,
                       const LatencyStats& s, double unit) {
  out["mean_" + name + suffix] = s.mean * unit;
  out["median_" + name + suffix] = s.median * unit;
  out["std_" + name + suffix] = s.stddev * unit;
  out["p90_" + name + suffix] = s.p90 * unit;
  out["p99_" + name + suffix] = s.p99 * unit;
}

}  // namespace

double percentileOfSorted(const std::vector<double>& sorted, double p) {
  if (sorted.empty()) throw std::invalid_argument("percentileOfSorted: no samples");
  if (!(p >= 0.0 && p <= 100.0)) throw std::invalid_argument(fmt::format("percentileOfSorted: p = {}", p));
  const double h = p / 100.0 * static_cast<double>(sorted.size() - 1);
  const auto lo = std::min(static_cast<std::size_t>(std::floor(h)), sorted.size() - 1);
  const std::size_t hi = std::min(lo + 1, sorted.size() - 1);
  return lerp(sorted[lo], sorted[hi], h - static_cast<double>(lo));
}

LatencyStats latencyStats(std::vector<double> samples) {
  LatencyStats s;
  if (samples.empty()) return s;
  if (!std::all_of(samples.begin(), samples.end(), [](double x) { return std::isfinite(x); })) {
    throw std::invalid_argument("latencyStats: non-finite sample");
  }
  std::sort(samples.begin(), samples.end());
  const double n = static_cast<double>(samples.size());
  double sum = 0;
  for (double x : samples) sum += x;
  double squares = 0;
  s.count = samples.size();
  s.mean = sum / n;
  for (double x : samples) squares += (x - s.mean) * (x - s.mean);
  s.stddev = std::sqrt(squares / n);
  s.median = percentileOfSorted(samples, 50);
  s.p90 = percentileOfSorted(samples, 90);
  s.p99 = percentileOfSorted(samples, 99);
  s.min = samples.front();
  s.max = samples.back();
  return s;
}

ServingMetrics computeServingMetrics(const std::vector<RequestRecord>& records, const ServingWindow& window) {
  if (!std::isfinite(window.start) || !std::isfinite(window.end) || window.end < window.start) {
    throw std::invalid_argument(
        fmt::format("serving metrics: window [{}, {}] is not a finite interval", window.start, window.end));
  }
  ServingMetrics m;
  m.window = window;
  std::vector<double> ttft, tpot, itl, e2el;
  std::map<int, std::pair<std::vector<double>, uint64_t>> byTurn;  // turn -> (TTFTs, input tokens)
  for (const RequestRecord& r : records) {
    validate(r);
    if (!r.tokenTimes.empty() && inside(r.firstToken, window)) m.inputTokensInWindow += r.inputTokens;
    m.outputTokensInWindow += static_cast<uint64_t>(
        std::count_if(r.tokenTimes.begin(), r.tokenTimes.end(), [&](double t) { return inside(t, window); }));
    if (!finished(r)) {
      ++m.requestsInFlight;
      continue;  // unmeasured (validate): no latencies
    }
    if (inside(r.finish, window)) ++m.requestsFinishedInWindow;

    if (!r.measured) continue;
    ++m.requests;
    m.completedInputTokens += r.inputTokens;
    m.completedOutputTokens += r.outputTokens;
    ttft.push_back(r.firstToken - r.arrival);
    if (r.turn > 0) {
      byTurn[r.turn].first.push_back(ttft.back());
      byTurn[r.turn].second += r.inputTokens;
    }
    e2el.push_back(r.finish - r.arrival);
    if (r.outputTokens > 1) tpot.push_back((r.finish - r.firstToken) / static_cast<double>(r.outputTokens - 1));
    for (std::size_t i = 1; i < r.tokenTimes.size(); ++i) itl.push_back(r.tokenTimes[i] - r.tokenTimes[i - 1]);
  }
  m.ttft = latencyStats(std::move(ttft));
  m.tpot = latencyStats(std::move(tpot));
  m.itl = latencyStats(std::move(itl));
  m.e2el = latencyStats(std::move(e2el));
  for (auto& [turn, samples] : byTurn) {
    const double n = static_cast<double>(samples.first.size());
    m.ttftByTurn.push_back(
        TurnTtft{turn, static_cast<double>(samples.second) / n, latencyStats(std::move(samples.first))});
  }
  m.interactivity = ratio(1.0, m.tpot.median);
  m.interactivityMean = ratio(1.0, m.tpot.mean);

  const double duration = window.end - window.start;
  m.inputThroughput = ratio(static_cast<double>(m.inputTokensInWindow), duration);
  m.outputThroughput = ratio(static_cast<double>(m.outputTokensInWindow), duration);
  m.totalThroughput = ratio(static_cast<double>(m.inputTokensInWindow + m.outputTokensInWindow), duration);
  m.requestThroughput = ratio(static_cast<double>(m.requestsFinishedInWindow), duration);
  m.completedInputThroughput = ratio(static_cast<double>(m.completedInputTokens), duration);
  m.completedOutputThroughput = ratio(static_cast<double>(m.completedOutputTokens), duration);
  m.completedTotalThroughput = ratio(static_cast<double>(m.completedInputTokens + m.completedOutputTokens), duration);
  m.completedRequestThroughput = ratio(static_cast<double>(m.requests), duration);
  return m;
}

nlohmann::ordered_json servingMetricsJson(const ServingMetrics& m, int chips, double ratedPowerW) {
  if (chips < 1) throw std::invalid_argument(fmt::format("serving metrics: chips = {} (need >= 1)", chips));
  if (!std::isfinite(ratedPowerW) || ratedPowerW < 0) {
    throw std::invalid_argument(fmt::format("serving metrics: rated power {} W (need finite, >= 0)", ratedPowerW));
  }
  const double kw = ratedPowerW / 1000.0;
  const auto perChip = [&](double rate) { return ratio(rate, chips); };
  const auto perKw = [&](double rate) { return ratio(rate, kw); };
  const auto rates = [](double input, double output, double total) {
    return nlohmann::ordered_json{{"input", input}, {"output", output}, {"total", total}};
  };

  nlohmann::ordered_json j;
  j["window_s"] = {{"start", m.window.start}, {"end", m.window.end}, {"duration", m.window.end - m.window.start}};
  j["requests"] = m.requests;
  j["chips"] = chips;
  j["rated_power_w"] = ratedPowerW;
  j["ttft_s"] = statsJson(m.ttft);
  j["tpot_s"] = statsJson(m.tpot);
  j["itl_s"] = statsJson(m.itl);
  j["e2el_s"] = statsJson(m.e2el);
  if (!m.ttftByTurn.empty()) {
    nlohmann::ordered_json turns = nlohmann::ordered_json::array();
    for (const TurnTtft& t : m.ttftByTurn) {
      turns.push_back({{"turn", t.turn},
                       {"requests", t.ttft.count},
                       {"mean_input_tokens", t.meanInputTokens},
                       {"mean", t.ttft.mean},
                       {"median", t.ttft.median},
                       {"p90", t.ttft.p90},
                       {"p99", t.ttft.p99}});
    }
    j["ttft_by_turn_s"] = std::move(turns);
  }
  j["interactivity_tok_per_s_per_user"] = m.interactivity;
  j["interactivity_mean_tok_per_s_per_user"] = m.interactivityMean;
  j["tokens_in_window"] = {{"input", m.inputTokensInWindow}, {"output", m.outputTokensInWindow}};
  j["requests_finished_in_window"] = m.requestsFinishedInWindow;
  j["requests_in_flight_at_stop"] = m.requestsInFlight;
  j["throughput_tok_per_s"] = rates(m.inputThroughput, m.outputThroughput, m.totalThroughput);
  j["throughput_per_chip_tok_per_s"] =
      rates(perChip(m.inputThroughput), perChip(m.outputThroughput), perChip(m.totalThroughput));
  j["throughput_per_kw_tok_per_s"] =
      rates(perKw(m.inputThroughput), perKw(m.outputThroughput), perKw(m.totalThroughput));
  j["request_throughput_req_per_s"] = m.requestThroughput;
  j["completed_tokens"] = {{"input", m.completedInputTokens}, {"output", m.completedOutputTokens}};
  j["completed_throughput_tok_per_s"] =
      rates(m.completedInputThroughput, m.completedOutputThroughput, m.completedTotalThroughput);
  j["completed_throughput_per_chip_tok_per_s"] = rates(
      perChip(m.completedInputThroughput), perChip(m.completedOutputThroughput), perChip(m.completedTotalThroughput));
  j["completed_request_throughput_req_per_s"] = m.completedRequestThroughput;

  nlohmann::ordered_json ix;
  addBenchmarkStats(ix, "ttft", "", m.ttft, 1.0);
  addBenchmarkStats(ix, "tpot", "", m.tpot, 1.0);
  addBenchmarkStats(ix, "itl", "", m.itl, 1.0);
  addBenchmarkStats(ix, "e2el", "", m.e2el, 1.0);
  // InferenceX maps each TPOT statistic X to X_intvty = 1000 / X_tpot_ms; std_intvty (the
  // reciprocal of a spread) means nothing and is left out.
  ix["mean_intvty"] = ratio(1.0, m.tpot.mean);
  ix["median_intvty"] = ratio(1.0, m.tpot.median);
  ix["p90_intvty"] = ratio(1.0, m.tpot.p90);
  ix["p99_intvty"] = ratio(1.0, m.tpot.p99);
  // Per request, as InferenceX counts (utils/process_result.py: benchmark_serving's
  // total_token_throughput and output_throughput over the GPUs).
  ix["tput_per_gpu"] = perChip(m.completedTotalThroughput);
  ix["output_tput_per_gpu"] = perChip(m.completedOutputThroughput);
  ix["input_tput_per_gpu"] = perChip(m.completedInputThroughput);
  ix["tput_per_kw"] = perKw(m.completedTotalThroughput);
  ix["output_tput_per_kw"] = perKw(m.completedOutputThroughput);
  ix["input_tput_per_kw"] = perKw(m.completedInputThroughput);
  j["inferencex"] = std::move(ix);

  nlohmann::ordered_json bs;
  bs["completed"] = m.requests;
  bs["duration"] = m.window.end - m.window.start;
  bs["total_input_tokens"] = m.completedInputTokens;
  bs["total_output_tokens"] = m.completedOutputTokens;
  bs["request_throughput"] = m.completedRequestThroughput;
  bs["output_throughput"] = m.completedOutputThroughput;
  bs["total_token_throughput"] = m.completedTotalThroughput;
  addBenchmarkStats(bs, "ttft", "_ms", m.ttft, 1000.0);
  addBenchmarkStats(bs, "tpot", "_ms", m.tpot, 1000.0);
  addBenchmarkStats(bs, "itl", "_ms", m.itl, 1000.0);
  addBenchmarkStats(bs, "e2el", "_ms", m.e2el, 1000.0);
  j["benchmark_serving"] = std::move(bs);
  return j;
}

}  // namespace scoville::workload
