// PowerMonitor::report: the `power` section of report.json (docs/report.md, docs/power.md).

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "power/EnergyLevels.h"
#include "power/PowerMonitor.h"
#include "power/ThermalModel.h"

namespace scoville::power {

namespace {

using Json = nlohmann::ordered_json;

/// At most this many points in the report's timeline (averaged over whole fine bins).
constexpr std::size_t kTimelinePoints = 1000;

/// Bin b of `bins` (0 past the last event).
double binAt(const std::vector<double>& bins, std::size_t b) {
  return b < bins.size() ? bins[b] : 0.0;
}

/// Width of bin b of a run that ended at `endS` (the last one may be partial).
double binWidth(std::size_t b, std::size_t bins, double interval, double endS) {
  if (b + 1 < bins) return interval;
  return std::max(endS - static_cast<double>(b) * interval, interval * 1e-9);
}

Json sustainedJson(const SustainedPower& s, double limitW) {
  Json j;
  j["window_s"] = s.windowS;
  if (!s.fits) {
    j["max_w"] = nullptr;
    j["note"] = "the run is shorter than the window";
    return j;
  }
  j["max_w"] = s.maxW;
  j["max_at_s"] = s.maxAtS;
  j["limit_w"] = limitW;
  j["headroom_w"] = limitW - s.maxW;
  j["violations"] = s.violations;
  Json list = Json::array();
  for (const SustainedPower::Violation& v : s.firstViolations) {
    list.push_back({{"start_s", v.startS}, {"end_s", v.endS}, {"max_w", v.maxW}});
  }
  j["first_violations"] = std::move(list);
  return j;
}

/// Power, energy and sustained windows of one bin series.
struct Series {
  std::vector<double> watts;  ///< per fine bin, static included
  double energyJ = 0.0;
  double peakW = 0.0;
  Json sustained = Json::array();
};

/// `intervalS`: the bins' width (the configured interval, or a power-of-two multiple of it when
/// a long run's timelines merged bins).
Series seriesOf(std::vector<double> watts, const PowerManagementConfig& config, double intervalS, double endS,
                double limitW) {
  Series s;
  s.watts = std::move(watts);
  for (std::size_t b = 0; b < s.watts.size(); ++b) {
    s.energyJ += s.watts[b] * binWidth(b, s.watts.size(), intervalS, endS);
    s.peakW = std::max(s.peakW, s.watts[b]);
  }
  for (const double window : config.windowsS) {
    const auto bins = static_cast<std::size_t>(std::max(1.0, std::round(window / intervalS)));
    SustainedPower sustained = sustainedPower(s.watts, intervalS, bins, limitW);
    // A window of whole bins is reported as configured (not as bins x interval, off in the last digit).
    if (std::fabs(sustained.windowS - window) <= 1e-9 * window) sustained.windowS = window;
    s.sustained.push_back(sustainedJson(sustained, limitW));
  }
  return s;
}

Json timelineOf(const std::vector<double>& watts, std::size_t stride) {
  Json points = Json::array();
  for (std::size_t b = 0; b < watts.size(); b += stride) {
    const std::size_t end = std::min(watts.size(), b + stride);
    double sum = 0.0;
    for (std::size_t i = b; i < end; ++i) sum += watts[i];
    points.push_back(sum / static_cast<double>(end - b));
  }
  return points;
}

/// Dynamic energy by level plus `static`, as report.json lists it.
Json byLevel(const std::array<double, kLevels>& levelJ, double staticJ) {
  Json j;
  for (std::size_t k = 0; k < kLevels; ++k) j[levelName(static_cast<Level>(k))] = levelJ[k];
  j["static"] = staticJ;
  return j;
}

/// A chip's entry in `power.chips` (its own name, as not a mirror).
/// `dynamic` and `saved`: the chip's timeline and the static energy it did not draw, binned at `I`.
Json chipEntry(const ChipPower& chip, const Series& s, const std::vector<double>& dynamic,
               const std::vector<double>& saved, std::size_t bins, double I, double endS, Json dvfs) {
  // Static energy of bins where the chip did nothing is its idle energy (less what gating and a lower
  // voltage saved).
  double idleJ = 0.0;
  for (std::size_t b = 0; b < bins; ++b) {
    if (binAt(dynamic, b) == 0.0) idleJ += chip.idleW() * binWidth(b, bins, I, endS) - binAt(saved, b);
  }
  const double chipStaticJ = chip.staticJ(endS);
  Json byPhase;
  for (std::size_t p = 0; p < kPhases; ++p) byPhase[phaseName(p)] = chip.phaseJ()[p];
  byPhase["static_busy"] = chipStaticJ - idleJ;
  byPhase["idle"] = idleJ;
  Json byBlock;
  for (std::size_t k = 0; k < tlm::kOpBlocks; ++k)
    byBlock[tlm::opBlockName(static_cast<tlm::OpBlock>(k))] = chip.blockJ()[k];

  Json entry;
  entry["chip"] = chip.name();
  entry["type"] = chip.type();
  entry["mirror_of"] = nullptr;
  entry["rated_w"] = chip.ratedW();
  entry["idle_w"] = chip.idleW();
  entry["energy_j"] = chip.dynamicJ() + chipStaticJ;
  entry["average_w"] = endS > 0 ? (chip.dynamicJ() + chipStaticJ) / endS : chip.idleW();
  entry["peak_bin_w"] = s.peakW;
  entry["sustained"] = s.sustained;
  entry["by_level_j"] = byLevel(chip.levelJ(), chipStaticJ);
  entry["by_phase_j"] = std::move(byPhase);
  entry["by_layer_kind_j"] = std::move(byBlock);
  entry["dvfs"] = std::move(dvfs);
  return entry;
}

}  // namespace

Json PowerMonitor::thermalJson(const ChipPower& chip, double endS) const {
  const ThermalConfig& config = *chip.thermalConfig();
  const ThermalModel model(config);
  const ChipPower::ThermalTrace trace = chip.thermalUntil(endS);
  const CoolerConfig& cooler = config.cooler();
  Json j;
  j["cooling"] = cooler.name;
  j["kind"] = coolingKindName(cooler.kind);
  j["ambient_c"] = cooler.ambientC;
  j["junction_limit_c"] = config.junctionLimitC;
  j["hbm_refresh_limit_c"] = config.hbmRefreshLimitC;
  j["start"] = config.start;
  Json tau = Json::array();
  for (double t : model.network().timeConstantsS()) tau.push_back(t);
  j["time_constants_s"] = std::move(tau);
  const double span = endS - (trace.samples.empty() ? 0.0 : trace.samples.front().timeS);
  const auto temperatures = [&](double peak, double integral, double end, double start) {
    return Json{{"start", start}, {"peak", peak}, {"mean", span > 0.0 ? integral / span : end}, {"end", end}};
  };
  const double startDie = trace.samples.empty() ? trace.dieC : trace.samples.front().dieC;
  const double startHbm = trace.samples.empty() ? trace.hbmC : trace.samples.front().hbmC;
  j["die_c"] = temperatures(trace.peakDieC, trace.dieCSeconds, trace.dieC, startDie);
  j["hbm_c"] = temperatures(trace.peakHbmC, trace.hbmCSeconds, trace.hbmC, startHbm);
  j["leakage_scale_end"] = trace.leakageScale;
  j["time_throttled_s"] = trace.throttledS;
  j["time_hbm_refresh_doubled_s"] = trace.refreshDoubledS;
  // Where this run's average power would settle the chip if it served so indefinitely: the die draws
  // the average less the HBM's share, its core leakage following the die temperature.
  const ChipEnergyConfig& e = chip.energy();
  const double averageW = endS > 0.0 ? (chip.dynamicJ() + chip.staticJ(endS)) / endS : chip.idleW();
  const double hbmW = e.hbm.staticW + (endS > 0.0 ? chip.levelJ()[static_cast<std::size_t>(Level::kHbm)] / endS : 0.0);
  const double leakageW = (endS > 0.0 ? chip.staticJ(endS) / endS : chip.idleW()) - (e.idleW() - e.coreStaticW());
  const double meanDieC = span > 0.0 ? trace.dieCSeconds / span : trace.dieC;
  const double leakageRefW = leakageW / config.leakage.scale(std::min(meanDieC, kLeakageCapC));
  const auto steady = model.steadyState(averageW - hbmW - leakageW, leakageRefW, hbmW);
  Json settle;
  settle["average_w"] = averageW;
  settle["hbm_w"] = hbmW;
  settle["runaway"] = !steady.has_value();
  settle["die_c"] = steady ? Json(steady->dieC) : Json(nullptr);
  settle["hbm_c"] = steady ? Json(steady->hbmC) : Json(nullptr);
  settle["total_w"] = steady ? Json(steady->totalW) : Json(nullptr);
  settle["over_junction_limit"] = !steady || steady->dieC > config.junctionLimitC;
  j["steady_state_at_average"] = std::move(settle);
  // The highest power the chip holds at its junction limit with this cooling (its HBM at this
  // run's average), against its rating.
  const double sustainable = model.sustainableW(hbmW);
  j["sustainable_w"] = sustainable;
  j["binding_limit"] = sustainable < chip.ratedW() ? "thermal" : "rating";
  j["headroom_under_rating_w"] = chip.ratedW() - averageW;
  Json times = Json::array();
  Json die = Json::array();
  Json hbm = Json::array();
  const std::size_t stride = std::max<std::size_t>(1, (trace.samples.size() + kTimelinePoints - 1) / kTimelinePoints);
  for (std::size_t i = 0; i < trace.samples.size(); i += stride) {
    times.push_back(trace.samples[i].timeS);
    die.push_back(trace.samples[i].dieC);
    hbm.push_back(trace.samples[i].hbmC);
  }
  j["timeline"] = {{"time_s", std::move(times)}, {"die_c", std::move(die)}, {"hbm_c", std::move(hbm)}};
  return j;
}

Json PowerMonitor::dvfsJson(const ChipPower& chip, const std::vector<double>& watts, double I, double endS) const {
  Json j;
  const GovernorConfig& g = m_config.governor;
  const bool isGoverned = governed(chip);
  const double capW = g.capW(chip.ratedW());
  j["governor"] = !isGoverned                         ? "none"
                  : g.kind == GovernorKind::kCapRated ? "cap_rated"
                  : g.kind == GovernorKind::kThermal  ? "thermal"
                                                      : "cap_target";
  j["cap_w"] = isGoverned && std::isfinite(capW) ? Json(capW) : Json(nullptr);
  const std::vector<double> times = chip.timeAtPoints(endS);
  Json points = Json::array();
  for (std::size_t k = 0; k < chip.points().size(); ++k) {
    points.push_back({{"frequency_hz", chip.points()[k].frequencyHz},
                      {"voltage_v", chip.points()[k].voltageV},
                      {"time_s", k < times.size() ? times[k] : 0.0}});
  }
  j["points"] = std::move(points);
  j["changes"] = chip.clockChanges();
  j["changed_by"] = chip.clockChanges() == 0 ? "none" : isGoverned ? "governor" : "phase_policy";
  if (isGoverned) {
    // The highest power over the governor's window once it has decided for the first time.
    const auto first = std::min(watts.size(), static_cast<std::size_t>(std::ceil(g.responseTimeS / I - 1e-9)));
    const std::vector<double> after(watts.begin() + static_cast<std::ptrdiff_t>(first), watts.end());
    const auto bins = static_cast<std::size_t>(std::max(1.0, std::round(g.windowS / I)));
    const SustainedPower s = sustainedPower(after, I, bins, capW);
    j["window_s"] = s.windowS;
    j["max_w_after_first_decision"] = s.fits ? Json(s.maxW) : Json(nullptr);
    j["windows_over_cap_after_first_decision"] = s.violations;
  }
  return j;
}

Json PowerMonitor::report(double endS, const std::optional<ServingWindow>& window) const {
  Json j;
  if (!modelled()) {
    j["modelled"] = false;
    j["reason"] = fmt::format("chip type(s) without a `power` section: {}", fmt::join(m_missing, ", "));
    return j;
  }
  // Every timeline at the coarsest interval any of them reached (the configured one unless the
  // run outgrew `max_bins` bins).
  double I = m_config.intervalS;
  std::map<std::size_t, EnergyBins> savedOf;  // each simulated chip's static energy not drawn, to endS
  for (std::size_t c = 0; c < m_chips.size(); ++c) {
    if (m_mirrorOf[c] >= 0) continue;
    const EnergyBins& saved = savedOf.emplace(c, m_chips[c]->savedStaticBins(endS)).first->second;
    I = std::max({I, m_chips[c]->timeline().interval(), saved.interval()});
  }
  if (m_switches) I = std::max(I, m_switches->timeline().interval());
  j["modelled"] = true;
  j["interval_s"] = I;
  j["configured_interval_s"] = m_config.intervalS;
  j["windows_s"] = m_config.windowsS;
  j["duration_s"] = endS;
  const std::size_t bins = std::max<std::size_t>(1, static_cast<std::size_t>(std::ceil(endS / I - 1e-9)));
  const std::size_t stride = std::max<std::size_t>(1, (bins + kTimelinePoints - 1) / kTimelinePoints);

  // One series and one entry per simulated chip; a mirror reuses its leader's, under its own name.
  std::map<std::size_t, Series> series;
  std::map<std::size_t, Json> entries;
  std::vector<double> platformW(bins, 0.0);
  double ratedW = 0.0;
  std::array<double, kLevels> levelJ{};
  double staticJ = 0.0;
  Json chips = Json::array();
  Json chipTimelines = Json::object();
  for (std::size_t c = 0; c < m_chips.size(); ++c) {
    const std::size_t src = m_mirrorOf[c] >= 0 ? static_cast<std::size_t>(m_mirrorOf[c]) : c;
    const ChipPower& chip = *m_chips[src];
    auto it = series.find(src);
    if (it == series.end()) {
      const std::vector<double> dynamic = chip.timeline().fineBins().resampled(I);
      const std::vector<double> saved = savedOf.at(src).resampled(I);
      std::vector<double> watts(bins);
      for (std::size_t b = 0; b < bins; ++b) {
        const double w = binWidth(b, bins, I, endS);
        watts[b] = (binAt(dynamic, b) - binAt(saved, b)) / w + chip.idleW();
      }
      it = series.emplace(src, seriesOf(std::move(watts), m_config, I, endS, chip.ratedW())).first;
      chipTimelines[chip.name()] = timelineOf(it->second.watts, stride);
      Json entry =
          chipEntry(chip, it->second, dynamic, saved, bins, I, endS, dvfsJson(chip, it->second.watts, I, endS));
      if (chip.thermalConfig() != nullptr) entry["thermal"] = thermalJson(chip, endS);
      entries.emplace(src, std::move(entry));
    }
    const Series& s = it->second;
    for (std::size_t b = 0; b < bins; ++b) platformW[b] += s.watts[b];
    ratedW += chip.ratedW();
    const double chipStaticJ = chip.staticJ(endS);
    for (std::size_t k = 0; k < kLevels; ++k) levelJ[k] += chip.levelJ()[k];
    staticJ += chipStaticJ;
    Json entry = entries.at(src);
    entry["chip"] = m_chips[c]->name();
    entry["mirror_of"] = m_mirrorOf[c] >= 0 ? Json(chip.name()) : Json(nullptr);
    chips.push_back(std::move(entry));
  }
  double switchJ = 0.0;
  if (m_switches) {
    const std::vector<double> dynamic = m_switches->timeline().fineBins().resampled(I);
    for (std::size_t b = 0; b < bins; ++b) {
      platformW[b] += binAt(dynamic, b) / binWidth(b, bins, I, endS) + m_switches->staticW();
    }
    switchJ = m_switches->dynamicJ() + m_switches->staticW() * endS;
  }
  const Series platform = seriesOf(std::move(platformW), m_config, I, endS, ratedW);

  Json p;
  p["chips"] = m_chips.size();
  p["rated_w"] = ratedW;
  p["energy_j"] = platform.energyJ;
  p["average_w"] = endS > 0 ? platform.energyJ / endS : 0.0;
  p["peak_bin_w"] = platform.peakW;
  p["sustained"] = platform.sustained;
  Json platformLevels = byLevel(levelJ, staticJ);
  platformLevels["switches"] = switchJ;
  p["by_level_j"] = std::move(platformLevels);
  if (m_switches) {
    p["switches"] = {{"count", m_switches->switches()},
                     {"static_w", m_switches->staticW()},
                     {"bytes_j", m_switches->bytesJ()},
                     {"packets_j", m_switches->packetsJ()}};
  } else {
    p["switches"] = nullptr;
  }
  j["platform"] = std::move(p);
  j["chips"] = std::move(chips);
  j["timeline"] = {{"interval_s", I * static_cast<double>(stride)},
                   {"platform_w", timelineOf(platform.watts, stride)},
                   {"chips_w", std::move(chipTimelines)}};

  if (window && window->endS > window->startS) {
    const double ws = window->startS;
    const double we = window->endS;
    const double duration = we - ws;
    // Energy in the window: every chip (a mirror as its leader) and the switches, static included.
    double energy = 0.0;
    double staticInWindow = 0.0;
    std::array<double, kPhases> phase{};
    std::array<double, kLevels> level{};
    for (std::size_t c = 0; c < m_chips.size(); ++c) {
      const ChipPower& chip = *m_chips[m_mirrorOf[c] >= 0 ? static_cast<std::size_t>(m_mirrorOf[c]) : c];
      const double chipStatic = chip.idleW() * duration - chip.savedStaticBins(we).energyIn(ws, we);
      energy += chip.timeline().fineBins().energyIn(ws, we) + chipStatic;
      staticInWindow += chipStatic;
      for (std::size_t k = 0; k < kPhases; ++k) phase[k] += chip.timeline().phaseEnergy(k, ws, we);
      for (std::size_t k = 0; k < kLevels; ++k) level[k] += chip.timeline().groupEnergy(k, ws, we);
    }
    double switchesInWindow = 0.0;
    if (m_switches) {
      switchesInWindow = m_switches->timeline().fineBins().energyIn(ws, we) + m_switches->staticW() * duration;
      energy += switchesInWindow;
    }
    // Prefill and decode carry their own dynamic energy and a share of the rest (communication,
    // static, switches) in proportion to it.
    const double compute = phase[0] + phase[1];
    const double rest = energy - compute;
    const double prefillJ = phase[0] + (compute > 0 ? rest * phase[0] / compute : 0.0);
    const double decodeJ = phase[1] + (compute > 0 ? rest * phase[1] / compute : rest);
    const auto per = [](double a, double b) { return b > 0 ? Json(a / b) : Json(nullptr); };
    const double tokens = window->inputTokens + window->outputTokens;

    // Sustained platform power inside the window: the longest configured window that fits.
    std::vector<double> inWindow;
    for (std::size_t b = static_cast<std::size_t>(ws / I);
         b < platform.watts.size() && static_cast<double>(b + 1) * I <= we; ++b) {
      inWindow.push_back(platform.watts[b]);
    }
    Json sustained = nullptr;
    double sustainedW = 0.0;
    for (auto it = m_config.windowsS.rbegin(); it != m_config.windowsS.rend(); ++it) {
      const auto n = static_cast<std::size_t>(std::max(1.0, std::round(*it / I)));
      const SustainedPower s = sustainedPower(inWindow, I, n, ratedW);
      if (!s.fits) continue;
      sustainedW = s.maxW;
      sustained = {{"window_s", s.windowS}, {"platform_w", s.maxW}, {"per_chip_w", s.maxW / m_chips.size()}};
      break;
    }
    Json d;
    d["window_s"] = {{"start", ws}, {"end", we}, {"duration", duration}};
    d["energy_j"] = energy;
    d["average_power_per_chip_w"] = energy / duration / static_cast<double>(m_chips.size());
    // The chips' own draw, without the switches' share: what a GPU's board telemetry (NVML,
    // nvidia-smi's power.draw) reports, and so what a measured power per GPU is compared with.
    d["average_chip_power_w"] = (energy - switchesInWindow) / duration / static_cast<double>(m_chips.size());
    d["energy_by_phase_j"] = {{"prefill", phase[0]},
                              {"decode", phase[1]},
                              {"communication", phase[2]},
                              {"static_and_switches", energy - phase[0] - phase[1] - phase[2]}};
    d["energy_per_token_j"] = {{"prefill_per_input_token", per(prefillJ, window->inputTokens)},
                               {"decode_per_output_token", per(decodeJ, window->outputTokens)},
                               {"all_tokens", per(energy, tokens)}};
    d["tokens_per_joule"] = {{"output", per(window->outputTokens, energy)}, {"total", per(tokens, energy)}};
    // The window's energy by level (coarse bins cut in proportion at its edges; the rounding that
    // leaves against the fine total is put on no level) and per output token.
    Json byLevelInWindow = byLevel(level, staticInWindow);
    byLevelInWindow["switches"] = switchesInWindow;
    Json perOutputToken;
    for (const auto& [name, joules] : byLevelInWindow.items())
      perOutputToken[name] = per(joules.get<double>(), window->outputTokens);
    d["energy_by_level_j"] = std::move(byLevelInWindow);
    d["energy_per_output_token_by_level_j"] = std::move(perOutputToken);
    d["sustained_in_window"] = sustained;
    const double outputRate = window->outputTokens / duration;
    const double totalRate = tokens / duration;
    d["throughput_per_kw_average_tok_per_s"] = {{"output", per(outputRate, energy / duration / 1000.0)},
                                                {"total", per(totalRate, energy / duration / 1000.0)}};
    d["throughput_per_kw_sustained_tok_per_s"] = {{"output", per(outputRate, sustainedW / 1000.0)},
                                                  {"total", per(totalRate, sustainedW / 1000.0)}};
    d["throughput_per_kw_rated_tok_per_s"] = {{"output", per(outputRate, ratedW / 1000.0)},
                                              {"total", per(totalRate, ratedW / 1000.0)}};
    j["serving"] = std::move(d);
  }
  return j;
}

}  // namespace scoville::power
