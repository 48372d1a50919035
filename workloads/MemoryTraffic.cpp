#include "workloads/MemoryTraffic.h"

#include <fmt/format.h>

#include <cmath>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "config/ConfigError.h"
#include "config/Text.h"

namespace scoville::workload {

const std::vector<std::pair<std::string, TrafficPattern>>& trafficPatternNames() {
  static const std::vector<std::pair<std::string, TrafficPattern>> kNames{
      {"sequential", TrafficPattern::kSequential},
      {"random", TrafficPattern::kRandom},
      {"strided", TrafficPattern::kStrided},
      {"trace", TrafficPattern::kTrace},
  };
  return kNames;
}

namespace {

/// (a x b) mod m without overflow, by doubling (m < 2^63, which any memory capacity is).
uint64_t mulMod(uint64_t a, uint64_t b, uint64_t m) {
  uint64_t result = 0;
  a %= m;
  b %= m;
  while (b != 0) {
    if (b & 1U) result = (result + a) % m;
    a = (a << 1U) % m;
    b >>= 1U;
  }
  return result;
}

[[noreturn]] void badLine(const std::string& file, int line, const std::string& what) {
  throw config::ConfigError(config::ErrorKind::kOutOfRange, fmt::format("{}:{}", file, line), what);
}

uint64_t parseUnsigned(const std::string& text, const std::string& file, int line, const char* column) {
  try {
    std::size_t used = 0;
    const uint64_t v = std::stoull(text, &used, 0);  // base 0: decimal or 0x-hex
    if (used == text.size() && !text.empty() && text[0] != '-') return v;
  } catch (const std::exception&) {
  }
  badLine(file, line, fmt::format("column '{}' expects a non-negative integer, got '{}'", column, text));
}

}  // namespace

std::vector<TrafficRequest> readTrafficTrace(const std::string& file, uint64_t capacityBytes) {
  std::ifstream in(file);
  if (!in)
    throw config::ConfigError(config::ErrorKind::kFileNotFound, file,
                              "the trace file does not exist or cannot be read");
  std::vector<TrafficRequest> requests;
  std::string text;
  int line = 0;
  double last = 0.0;
  while (std::getline(in, text)) {
    ++line;
    text = std::string(config::trimBlanks(text.substr(0, text.find('#'))));
    if (text.empty()) continue;
    if (requests.empty() && text.rfind("time", 0) == 0) continue;  // the header
    std::vector<std::string> cells;
    std::stringstream cellStream(text);
    for (std::string cell; std::getline(cellStream, cell, ',');) cells.emplace_back(config::trimBlanks(cell));
    if (cells.size() != 4) {
      badLine(file, line,
              fmt::format("expected 4 columns 'time_ns,address,bytes,op', got {}: '{}'", cells.size(), text));
    }
    TrafficRequest r;
    try {
      std::size_t used = 0;
      r.time = std::stod(cells[0], &used) * 1e-9;
      if (used != cells[0].size() || !std::isfinite(r.time) || r.time < 0) throw std::invalid_argument("time");
    } catch (const std::exception&) {
      badLine(file, line, fmt::format("column 'time_ns' expects a non-negative number of ns, got '{}'", cells[0]));
    }
    if (r.time < last) badLine(file, line, fmt::format("time {} ns is before the previous line's", cells[0]));
    // Beyond SystemC's time range (about 1.8e7 s) times would wrap.
    if (r.time > 1e6) badLine(file, line, fmt::format("time {} ns is beyond 1e6 s", cells[0]));
    last = r.time;
    r.address = parseUnsigned(cells[1], file, line, "address");
    r.bytes = parseUnsigned(cells[2], file, line, "bytes");
    if (r.bytes == 0) badLine(file, line, "column 'bytes' must be at least 1");
    if (r.address > capacityBytes || r.bytes > capacityBytes - r.address) {
      badLine(file, line,
              fmt::format("request [{}, {}) lies beyond the memory's {} bytes", r.address, r.address + r.bytes,
                          capacityBytes));
    }
    const std::string& op = cells[3];
    if (op == "R" || op == "r" || op == "read") {
      r.write = false;
    } else if (op == "W" || op == "w" || op == "write") {
      r.write = true;
    } else {
      badLine(file, line, fmt::format("column 'op' expects R or W, got '{}'", op));
    }
    requests.push_back(r);
  }
  if (requests.empty()) {
    throw config::ConfigError(config::ErrorKind::kEmptyFile, file, "the trace file holds no request");
  }
  return requests;
}

TrafficGenerator::TrafficGenerator(const MemoryTrafficConfig& config, uint64_t capacityBytes)
    : m_config(config), m_slots(0), m_capacity(capacityBytes), m_random(config.seed) {
  if (config.pattern == TrafficPattern::kTrace) throw std::invalid_argument("a trace is read, not generated");
  if (config.requestBytes == 0 || config.requestBytes > capacityBytes) {
    throw std::invalid_argument(fmt::format("--request-size must be between 1 and the capacity ({} B), got {}",
                                            capacityBytes, config.requestBytes));
  }
  if (config.pattern == TrafficPattern::kStrided && config.strideBytes == 0) {
    throw std::invalid_argument("--stride must be at least 1 byte");
  }
  if (!(config.readRatio >= 0.0 && config.readRatio <= 1.0)) {
    throw std::invalid_argument(fmt::format("--read-ratio must be within [0, 1], got {}", config.readRatio));
  }
  m_slots = capacityBytes / config.requestBytes;
}

bool TrafficGenerator::next(TrafficRequest& out) {
  if (m_issued >= m_config.requests) return false;
  const uint64_t i = m_issued++;
  const uint64_t size = m_config.requestBytes;
  out = TrafficRequest{};
  out.bytes = size;
  switch (m_config.pattern) {
    case TrafficPattern::kSequential: out.address = (i % m_slots) * size; break;
    case TrafficPattern::kRandom: out.address = m_random.below(m_slots) * size; break;
    case TrafficPattern::kStrided: {
      // i x stride mod capacity without overflow, aligned down to the request.
      const uint64_t offset = mulMod(i, m_config.strideBytes, m_slots * size);
      out.address = offset / size * size;
      break;
    }
    case TrafficPattern::kTrace: return false;
  }
  const double w = 1.0 - m_config.readRatio;
  out.write = std::floor(static_cast<double>(i + 1) * w) > std::floor(static_cast<double>(i) * w);
  return true;
}

}  // namespace scoville::workload
