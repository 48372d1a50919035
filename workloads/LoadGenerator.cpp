#include "workloads/LoadGenerator.h"

#include <fmt/format.h>
#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

#include "config/ConfigError.h"
#include "config/Units.h"

namespace scoville::workload {

using config::ConfigError;
using config::ErrorKind;

std::vector<TraceRequest> readLoadTrace(const std::string& file) {
  std::ifstream in(file);
  if (!in) throw ConfigError(ErrorKind::kFileNotFound, file, "cannot open the load trace");
  std::vector<TraceRequest> rows;
  std::string line;
  int lineNo = 0;
  bool header = false;
  const auto fail = [&](const std::string& what) {
    throw ConfigError(ErrorKind::kInvalidConfig, fmt::format("{}:{}", file, lineNo), what);
  };
  while (std::getline(in, line)) {
    ++lineNo;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() || line.front() == '#') continue;
    if (!header) {
      if (line != "arrival_s,input_tokens,output_tokens") {
        fail(fmt::format("expected the header 'arrival_s,input_tokens,output_tokens', got '{}'", line));
      }
      header = true;
      continue;
    }
    std::istringstream fields(line);
    TraceRequest r;
    char comma1 = 0, comma2 = 0;
    int64_t input = 0, output = 0;  // signed: "-5" must not wrap around
    std::string rest;
    if (!(fields >> r.arrival >> comma1 >> input >> comma2 >> output) || comma1 != ',' || comma2 != ',' ||
        (fields >> rest)) {
      fail(fmt::format("expected 'arrival_s,input_tokens,output_tokens' (a number and two integers), got '{}'", line));
    }
    if (!std::isfinite(r.arrival) || r.arrival < 0) fail("arrival_s must be a finite time >= 0");
    if (r.arrival > config::kMaxSimulatedTimeS) {
      fail(fmt::format("arrival_s {:g} is past the {:g} s a run may simulate", r.arrival, config::kMaxSimulatedTimeS));
    }
    if (!rows.empty() && r.arrival < rows.back().arrival) fail("arrival_s must not decrease");
    if (input <= 0 || output <= 0) fail("input_tokens and output_tokens must be at least 1");
    r.inputTokens = static_cast<uint64_t>(input);
    r.outputTokens = static_cast<uint64_t>(output);
    rows.push_back(r);
  }
  if (!header) throw ConfigError(ErrorKind::kEmptyFile, file, "the load trace has no header line");
  if (rows.empty()) throw ConfigError(ErrorKind::kEmptyFile, file, "the load trace has no request");
  return rows;
}

LoadGenerator::LoadGenerator(const ScenarioConfig& scenario, uint64_t seed, const std::string& traceFile)
    : m_scenario(scenario), m_rng(seed ^ 0x6c6f6164ull /* "load" */) {
  if (scenario.load.impl == LoadKind::kTrace) m_trace = readLoadTrace(traceFile);
  m_conversations.resize(static_cast<std::size_t>(users()));
}

uint64_t LoadGenerator::draw(uint64_t length) {
  const auto low = static_cast<uint64_t>(std::ceil(m_scenario.randomRangeRatio * static_cast<double>(length)));
  const uint64_t first = std::clamp<uint64_t>(low, 1, length);
  return first + m_rng.below(length - first + 1);
}

Arrival LoadGenerator::next(int user, double now) {
  Arrival a{now, m_nextId++, user, 0, 0};
  Conversation& c = m_conversations.at(static_cast<std::size_t>(user));
  if (c.turn == m_scenario.multiTurn.turns) c = Conversation{};
  const auto shared = static_cast<uint64_t>(m_scenario.multiTurn.sharedPrefixTokens);
  if (c.turn == 0) {
    c.id = ++m_conversationsStarted;
    c.history = shared;  // the system prompt opens every conversation
  } else {
    a.thinkS = m_scenario.multiTurn.thinkTimeS;
  }
  a.conversation = c.id;
  a.history = c.history;
  a.sharedPrefix = shared;
  a.inputTokens = c.history + draw(static_cast<uint64_t>(m_scenario.inputTokens));
  a.outputTokens = draw(static_cast<uint64_t>(m_scenario.outputTokens));
  ++c.turn;
  if (m_scenario.multiTurn.turns > 1) a.turn = c.turn;
  c.history = a.inputTokens + a.outputTokens;
  return a;
}

std::optional<Arrival> LoadGenerator::nextOpen() {
  if (m_scenario.load.impl == LoadKind::kTrace) {
    if (m_traceNext >= m_trace.size()) return std::nullopt;
    const TraceRequest& r = m_trace[m_traceNext++];
    return Arrival{r.arrival, m_nextId++, -1, r.inputTokens, r.outputTokens};
  }
  // Exponential gap: -ln(U) / rate with U in (0, 1].
  const double u = 1.0 - m_rng.unit();
  m_clock += -std::log(u) / m_scenario.load.ratePerS;
  Arrival a{m_clock, m_nextId++, -1, 0, 0};
  a.inputTokens = draw(static_cast<uint64_t>(m_scenario.inputTokens));
  a.outputTokens = draw(static_cast<uint64_t>(m_scenario.outputTokens));
  return a;
}

uint64_t LoadGenerator::maxInputTokens() const {
  if (m_scenario.load.impl == LoadKind::kTrace) {
    uint64_t most = 0;
    for (const TraceRequest& r : m_trace) most = std::max(most, r.inputTokens);
    return most;
  }
  // The last turn of a conversation holds every earlier prompt and answer.
  const auto turns = static_cast<uint64_t>(m_scenario.multiTurn.turns);
  return static_cast<uint64_t>(m_scenario.multiTurn.sharedPrefixTokens) +
         turns * static_cast<uint64_t>(m_scenario.inputTokens) +
         (turns - 1) * static_cast<uint64_t>(m_scenario.outputTokens);
}

uint64_t LoadGenerator::maxOutputTokens() const {
  if (m_scenario.load.impl == LoadKind::kTrace) {
    uint64_t most = 0;
    for (const TraceRequest& r : m_trace) most = std::max(most, r.outputTokens);
    return most;
  }
  return static_cast<uint64_t>(m_scenario.outputTokens);
}

}  // namespace scoville::workload
