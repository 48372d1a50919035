#include "cli/Waveforms.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "power/PowerMonitor.h"
#include "trace/VcdWriter.h"

namespace scoville::cli {

namespace {

using trace::UnitActivity;

/// Average watts of a power timeline over each sample [t, t + interval): its binned energy
/// (fine bins of `fineInterval` from time 0) over the sample, plus a constant floor.
std::vector<double> averagePower(const std::vector<double>& fineBins, double fineInterval, double floorW,
                                 const UnitActivity& a) {
  std::vector<double> watts(a.bins());
  for (std::size_t b = 0; b < a.bins(); ++b) {
    const double from = a.start() + a.interval() * static_cast<double>(b);
    watts[b] = power::energyIn(fineBins, fineInterval, from, from + a.interval()) / a.interval() + floorW;
  }
  return watts;
}

}  // namespace

std::string waveformsVcd(const UnitActivity& a, const platform::Platform& platform, const std::vector<int>& mirrorOf,
                         const std::vector<workload::RequestRecord>* records) {
  trace::VcdWriter vcd;
  const power::PowerMonitor& power = platform.power();
  const bool powered = power.modelled();
  const std::size_t bins = a.bins();
  const double interval = a.interval();
  std::vector<double> platformW(bins, 0.0);
  for (int c = 0; c < platform.chipCount(); ++c) {
    const auto chip = static_cast<std::size_t>(c);
    // A mirrored rank computes and reads memory exactly as its leader; its fabric traffic is its own.
    const auto source = static_cast<std::size_t>(chip < mirrorOf.size() && mirrorOf[chip] >= 0 ? mirrorOf[chip] : c);
    const hw::ChipConfig& config = platform.config().chipConfig(c);
    const auto series = [&](std::size_t of, UnitActivity::Quantity q, double scale) {
      std::vector<double> values(bins);
      for (std::size_t b = 0; b < bins; ++b) values[b] = a.at(of, q, b) * scale;
      return values;
    };
    const std::string scope = platform::PlatformConfig::chipName(c);
    vcd.add(scope, "tensor_core_utilization", series(source, UnitActivity::kTensorBusyS, 1.0 / interval));
    vcd.add(scope, "vector_unit_utilization", series(source, UnitActivity::kVectorBusyS, 1.0 / interval));
    vcd.add(scope, "hbm_bandwidth_utilization",
            series(source, UnitActivity::kHbmBytes, 1.0 / (interval * config.hbm.bandwidthBytesPerS)));
    vcd.add(scope, "hbm_requests_in_flight", series(source, UnitActivity::kHbmRequestS, 1.0 / interval));
    vcd.add(scope, "fabric_bytes_per_s", series(chip, UnitActivity::kFabricBytes, 1.0 / interval));
    if (!powered) continue;
    const power::ChipPower& chipPower = *power.chip(source);
    std::vector<double> watts =
        averagePower(chipPower.timeline().fine(), chipPower.timeline().interval(), chipPower.idleW(), a);
    for (std::size_t b = 0; b < bins; ++b) platformW[b] += watts[b];
    vcd.add(scope, "power_w", std::move(watts));
    // The core clock: the nominal point until the governor's first change, then each change.
    const auto& points = chipPower.points();
    std::vector<double> clock(bins, config.tensorCore.clockHz);
    if (!points.empty()) {
      std::size_t next = 0, point = 0;
      const auto& log = chipPower.clockLog();
      for (std::size_t b = 0; b < bins; ++b) {
        const double t = a.start() + interval * static_cast<double>(b);
        while (next < log.size() && log[next].timeS <= t) point = log[next++].point;
        clock[b] = points[point].frequencyHz;
      }
    }
    vcd.add(scope, "core_clock_hz", std::move(clock));
    if (const power::ChipPower::ThermalTrace* thermal = chipPower.thermal()) {
      // The thermal model's temperatures, each held from its step's end to the next's.
      std::vector<double> die(bins, thermal->samples.front().dieC);
      std::vector<double> hbm(bins, thermal->samples.front().hbmC);
      std::size_t next = 0;
      for (std::size_t b = 0; b < bins; ++b) {
        const double t = a.start() + interval * static_cast<double>(b);
        while (next + 1 < thermal->samples.size() && thermal->samples[next + 1].timeS <= t) ++next;
        die[b] = thermal->samples[next].dieC;
        hbm[b] = thermal->samples[next].hbmC;
      }
      vcd.add(scope, "die_c", std::move(die));
      vcd.add(scope, "hbm_c", std::move(hbm));
    }
  }
  if (powered) {
    if (const power::SwitchPower* switches = power.switches()) {
      const std::vector<double> switchW =
          averagePower(switches->timeline().fine(), switches->timeline().interval(), switches->staticW(), a);
      for (std::size_t b = 0; b < bins; ++b) platformW[b] += switchW[b];
    }
    vcd.add("platform", "power_w", std::move(platformW));
  }
  if (records != nullptr) {
    // Requests sent and not finished at the start of each sample (t_b = start + b x interval):
    // those with arrival <= t_b < finish, counted by differences over the samples.
    std::vector<double> inFlight(bins + 1, 0.0);
    const auto firstSampleAtOrAfter = [&](double t) {
      const double k = std::ceil((t - a.start()) / interval);
      return static_cast<std::size_t>(std::clamp(k, 0.0, static_cast<double>(bins)));
    };
    for (const workload::RequestRecord& r : *records) {
      const bool finished = r.tokenTimes.size() == r.outputTokens;
      const std::size_t from = firstSampleAtOrAfter(r.arrival);
      const std::size_t to = finished ? firstSampleAtOrAfter(r.finish) : bins;
      if (to <= from) continue;
      inFlight[from] += 1.0;
      inFlight[to] -= 1.0;
    }
    for (std::size_t b = 1; b < bins; ++b) inFlight[b] += inFlight[b - 1];
    inFlight.resize(bins);
    vcd.add("platform", "requests_in_flight", std::move(inFlight));
  }
  return vcd.text(a.start(), interval,
                  fmt::format("scoville: {} samples of {:g} s from {:g} s", bins, interval, a.start()));
}

}  // namespace scoville::cli
