#include "trace/VcdWriter.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace scoville::trace {

namespace {

/// VCD identifier codes: letters and digits, little-endian base 62 (no '$' or '#', which some
/// readers take for keywords and timestamps).
std::string code(std::size_t index) {
  static constexpr char kDigits[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
  std::string id;
  do {
    id += kDigits[index % 62];
    index /= 62;
  } while (index > 0);
  return id;
}

}  // namespace

void VcdWriter::add(const std::string& scope, const std::string& name, std::vector<double> values) {
  m_signals.push_back(Signal{scope, name, std::move(values)});
}

std::string VcdWriter::text(double startS, double intervalS, const std::string& comment) const {
  std::string out = fmt::format("$comment {} $end\n$timescale 1 ns $end\n", comment);
  std::vector<std::string> scopes;
  for (const Signal& s : m_signals) {
    if (std::find(scopes.begin(), scopes.end(), s.scope) == scopes.end()) scopes.push_back(s.scope);
  }
  for (const std::string& scope : scopes) {
    out += fmt::format("$scope module {} $end\n", scope);
    for (std::size_t i = 0; i < m_signals.size(); ++i) {
      if (m_signals[i].scope == scope) out += fmt::format("$var real 64 {} {} $end\n", code(i), m_signals[i].name);
    }
    out += "$upscope $end\n";
  }
  out += "$enddefinitions $end\n";
  std::size_t samples = 0;
  for (const Signal& s : m_signals) samples = std::max(samples, s.values.size());
  std::vector<double> last(m_signals.size(), std::nan(""));
  for (std::size_t t = 0; t < samples; ++t) {
    std::string changes;
    for (std::size_t i = 0; i < m_signals.size(); ++i) {
      if (t >= m_signals[i].values.size()) continue;
      const double v = m_signals[i].values[t];
      if (v == last[i]) continue;
      last[i] = v;
      changes += fmt::format("r{:.6g} {}\n", v, code(i));
    }
    if (changes.empty()) continue;
    out += fmt::format("#{}\n", std::llround((startS + intervalS * static_cast<double>(t)) * 1e9));
    out += changes;
  }
  return out;
}

}  // namespace scoville::trace
