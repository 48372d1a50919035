#pragma once
// Synthetic and traced memory traffic for `scoville memory` (cli/MemoryBench.h): the requests a
// generator issues to one HBM controller, in issue order. Pure C++.
//
// Patterns over [0, capacity), each request `request_bytes` long and aligned to it:
// - sequential: request i at i x request_bytes (wrapping at the capacity);
// - random: a uniformly drawn aligned address (splitmix64 from the seed: reproducible to the bit);
// - strided: request i at i x stride (aligned down to the request size, wrapping);
// - trace: the requests of a trace file, each issued no earlier than its time.
// Reads and writes mix at `read_ratio` on every synthetic pattern, exactly: request i is a write
// when floor((i + 1) x w) > floor(i x w), w = 1 - read_ratio (so 0.75 gives R R R W R R R W ...).
//
// Trace files are CSV: one request per line, `time_ns,address,bytes,op`; the address is decimal
// or 0x-hexadecimal, op is R or W (or read, write); '#' starts a comment, and a first line naming
// the columns is skipped. Times must not decrease.

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "workloads/Random.h"

namespace scoville::workload {

enum class TrafficPattern { kSequential, kRandom, kStrided, kTrace };

/// The pattern names of the command line, in order: sequential, random, strided, trace.
const std::vector<std::pair<std::string, TrafficPattern>>& trafficPatternNames();

/// One memory request: issued no earlier than `time` (trace) or as soon as a slot frees.
struct TrafficRequest {
  double time = 0.0;  ///< seconds; 0 for synthetic patterns
  uint64_t address = 0;
  uint64_t bytes = 0;
  bool write = false;
};

struct MemoryTrafficConfig {
  TrafficPattern pattern = TrafficPattern::kSequential;
  uint64_t requestBytes = 64;
  uint64_t strideBytes = 4096;  ///< strided only
  double readRatio = 1.0;       ///< fraction of reads, [0, 1]
  uint64_t requests = 100000;   ///< synthetic patterns; a trace has its own count
  uint64_t seed = 1;
  std::string traceFile;  ///< trace only
};

/// Reads a trace file; throws config::ConfigError naming the file and line of a bad entry, or an
/// address range beyond `capacityBytes`.
std::vector<TrafficRequest> readTrafficTrace(const std::string& file, uint64_t capacityBytes);

/// Generates the requests of a synthetic pattern in issue order, one at a time.
class TrafficGenerator {
 public:
  /// Throws std::invalid_argument for a request size of 0 or above the capacity, a zero stride,
  /// or a read ratio outside [0, 1]. Not for the trace pattern (use readTrafficTrace).
  TrafficGenerator(const MemoryTrafficConfig& config, uint64_t capacityBytes);

  /// The next request; false when all have been issued.
  bool next(TrafficRequest& out);

 private:
  MemoryTrafficConfig m_config;
  uint64_t m_slots;  ///< aligned request positions in the capacity
  uint64_t m_capacity;
  uint64_t m_issued = 0;
  Rng m_random;
};

}  // namespace scoville::workload
