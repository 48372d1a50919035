#pragma once
// Where serving requests come from (pure C++, no simulated time): their arrival times and their
// prompt and output lengths, per the scenario's load model, drawn from a seeded generator.
//
//   closed_loop  `concurrency` users; each sends a request at time zero and its next one the
//                moment its last one finished (InferenceX). With multi_turn, a user's requests
//                continue one conversation for `turns` requests: each prompt is the conversation
//                so far (earlier prompts and answers) plus input_tokens new tokens.
//   poisson      open loop: exponential gaps at rate_per_s.
//   trace        open loop: arrival times and lengths from a CSV file.
// Lengths (closed loop, poisson) are drawn uniformly from [ceil(ratio x L), L] for the
// scenario's random_range_ratio (1: always L). Requests are numbered 1, 2, ... in sending order.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "workloads/Random.h"
#include "workloads/ScenarioConfig.h"

namespace scoville::workload {

/// A request as sent.
struct Arrival {
  double time = 0.0;  ///< simulated seconds
  uint64_t id = 0;
  int user = -1;  ///< closed loop: the sending user; open loop: -1
  uint64_t inputTokens = 0;
  uint64_t outputTokens = 0;
  /// Multi-turn: the conversation it continues (1-based; 0: none) and the tokens of its prompt
  /// that are the conversation's earlier turns (prompts and answers).
  uint64_t conversation = 0;
  uint64_t history = 0;
  uint64_t sharedPrefix =
      0;                ///< its first tokens that every conversation begins with (multi_turn.shared_prefix_tokens)
  double thinkS = 0.0;  ///< the user paused this long after its conversation's previous turn
  int turn = 0;         ///< multi-turn: the conversation's turn it is (1-based; 0: single-turn load)
};

/// One row of a load trace.
struct TraceRequest {
  double arrival = 0.0;
  uint64_t inputTokens = 0;
  uint64_t outputTokens = 0;
};

/// Reads a load trace: header `arrival_s,input_tokens,output_tokens`, then one row per request
/// with non-decreasing arrival times and positive lengths; `#` comment and blank lines skipped.
/// Throws config::ConfigError naming the file and line for a missing file or a bad row.
std::vector<TraceRequest> readLoadTrace(const std::string& file);

class LoadGenerator {
 public:
  /// `traceFile`: the load trace, already resolved (trace load only).
  LoadGenerator(const ScenarioConfig& scenario, uint64_t seed, const std::string& traceFile = "");

  bool closedLoop() const { return m_scenario.load.impl == LoadKind::kClosedLoop; }
  /// Closed loop: users sending from time zero.
  int users() const { return closedLoop() ? m_scenario.load.concurrency : 0; }
  /// Closed loop: the request user `user` sends at `now`.
  Arrival next(int user, double now);
  /// Open loop: the next arrival; empty once a trace is exhausted.
  std::optional<Arrival> nextOpen();
  /// The longest prompt and output a request can have (for capacity checks before the run).
  uint64_t maxInputTokens() const;
  uint64_t maxOutputTokens() const;
  uint64_t sent() const { return m_nextId - 1; }
  /// Trace load: the requests the trace holds.
  std::size_t traceRequests() const { return m_trace.size(); }

 private:
  uint64_t draw(uint64_t length);

  ScenarioConfig m_scenario;
  Rng m_rng;
  uint64_t m_nextId = 1;
  double m_clock = 0.0;
  struct Conversation {
    int turn = 0;
    uint64_t history = 0;  ///< tokens of the earlier turns (prompts and answers)
    uint64_t id = 0;       ///< 1-based, in the order conversations start
  };
  std::vector<Conversation> m_conversations;  // per user
  uint64_t m_conversationsStarted = 0;
  std::vector<TraceRequest> m_trace;
  std::size_t m_traceNext = 0;
};

}  // namespace scoville::workload
