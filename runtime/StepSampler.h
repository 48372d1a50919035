#pragma once
// Sampled decode steps: systematic sampling of a replica's steady decode runs (SMARTS-style), so
// that a long run of alike decode steps costs a few simulated steps rather than all of them.
//
// A steady run is a sequence of steps that each feed one token to every sequence of the same batch
// (the same requests in the same order, decode only, no KV copies). Within one, only the contexts
// grow, by a token per step, so consecutive steps differ by a few KV reads out of a step's
// weights and KV. The sampler simulates in detail the run's first two steps and then, in every
// `period` steps, the last two (steps period - 1 and period, 2 period - 1 and 2 period, ...): the
// first of each pair warms the hardware's state (open rows, busy banks and ports: what a step
// leaves to the next) after the replays, the second is recorded, as SMARTS warms before it
// measures. Each step in between replays the last recorded one:
//   - its time is that step's simulated time (the runner waits it);
//   - the activity the replica's simulated chips emitted during it (their units' events, and the
//     fabric's events of messages they sent), merged per unit and kind of activity into spans
//     that keep every idle gap a power manager's clock gating would see, is emitted again,
//     shifted to the replayed step: the power model, the power managers' clock gating and the
//     energy breakdowns hear it as they heard the original;
//   - the counters of those chips' modules, their memory controllers' command counts and the
//     counters of the replica's collective groups and pipeline links add what the recorded step
//     added;
//   - the recorded step's DRAM refreshes (those that fell due since the step before it) stand
//     for the replayed step's: its channels issue the refreshes due by its end uncounted, so
//     that their next request does not count them again.
// Left out of the recording: the power manager's own clock-active and wake events and counters
// (it hears the replayed activity and announces its clock gating from it). Switch and
// fabric-port counters count the detailed steps only (their energy is replayed). The scheduler, the front end, the KV
// cache, the MoE routing draws and the step statistics run for every step, replayed or not.
//
// Accuracy, measured as the run goes: every detailed step after the run's second predicts its own
// time with the one the steps before it replayed. The mean and spread of these prediction errors
// bound the error of the replayed time (mean +- 1.96 standard errors), reported with the run.
// A thermal model runs on: it hears the replayed activity, and what it changes (leakage, the HBM's
// refresh rate) changes slowly against a sampling period; the detailed steps measure its effect.
// A DVFS governor (or a thermal limit) may move a chip's clock between any two steps: a recording
// holds only while the replica's chips keep the operating points it was made at. A step whose
// chips changed point since the recording, or a recording during which they changed, starts a new
// run (two detailed steps); a change the replayed activity itself brings about (the governor hears
// it) ends the run at the next step, so at most one replayed step runs at the old clock.
// Not sampled (ServingEngine and the run command decide): off-chip KV, experts across replicas,
// traces and waveforms (they record every transaction) and RTL co-simulation.

#include <cstdint>
#include <memory>
#include <string>
#include <systemc>
#include <unordered_map>
#include <vector>

#include "platforms/Platform.h"
#include "runtime/Replica.h"
#include "stats/StatsGroup.h"
#include "tlm/ActivityBus.h"

namespace scoville::runtime {

/// Records the activity a bus carries while armed, merged: events of the same unit (or port), kind,
/// issuing chip and attribution (precision, phase, block, toggle) whose spans overlap or lie less
/// than `gapS` apart become one event over their union carrying their summed amount (the first
/// one's layer, request and receiving chip, which no power or statistics listener reads). Replays
/// the recording on the bus, shifted in time.
class ActivityRecorder : public tlm::ActivityListener {
 public:
  /// `chips`: on a network bus, the issuing chips whose messages it keeps (empty: every event, a
  /// chip's own bus).
  ActivityRecorder(tlm::ActivityBus& bus, std::vector<int> chips, double gapS);
  ~ActivityRecorder() override;
  ActivityRecorder(const ActivityRecorder&) = delete;
  ActivityRecorder& operator=(const ActivityRecorder&) = delete;

  /// Starts a recording of the activity from `start` (forgetting the last one).
  void arm(const sc_core::sc_time& start);
  /// Stops recording.
  void disarm();
  /// Emits the recorded events on the bus again, as if the recording started at `start`.
  void replay(const sc_core::sc_time& start) const;
  /// The recording: merged events, times as offsets from the recording's start, by start.
  const std::vector<tlm::ActivityEvent>& recorded() const { return m_events; }

  void onActivity(const tlm::ActivityEvent& event) override;
  /// Leaves the emitters' choice to the other listeners: it keeps what they are sent.
  bool usesChip(int /*chip*/) const override { return false; }

 private:
  struct Key {
    tlm::Activity activity;
    tlm::Precision precision;
    tlm::LlmPhase phase;
    tlm::OpBlock block;
    const char* source;
    int chip;
    int srcChip;
    float toggle;
    bool operator==(const Key& o) const;
  };
  struct KeyHash {
    std::size_t operator()(const Key& k) const;
  };

  tlm::ActivityBus& m_bus;
  std::vector<int> m_chips;
  sc_core::sc_time m_gap;
  bool m_armed = false;
  sc_core::sc_time m_start;
  std::vector<tlm::ActivityEvent> m_events;
  std::unordered_map<Key, std::size_t, KeyHash> m_latest;  ///< key -> its latest merged event
};

/// What sampling did over a run, for the report.
struct SamplingSummary {
  int period = 0;
  uint64_t detailedSteps = 0;  ///< every step simulated in detail (sampled runs and the rest)
  uint64_t replayedSteps = 0;
  double replayedS = 0.0;    ///< summed time of the replayed steps
  double busyS = 0.0;        ///< summed time of every step
  uint64_t predictions = 0;  ///< detailed steps whose time the replayed ones predicted
  double errorSum = 0.0;     ///< of (predicted - simulated) / simulated
  double errorSquares = 0.0;
  double errorMaxAbs = 0.0;
  /// Adds another replica's summary.
  void add(const SamplingSummary& other);
  double meanError() const { return predictions > 0 ? errorSum / static_cast<double>(predictions) : 0.0; }
  /// Sample standard deviation of the prediction errors (0 below two).
  double errorSd() const;
  /// |mean| + 1.96 standard errors of the prediction error: the bound (95%) on the relative error
  /// of the replayed steps' time; 0 without replayed steps, and the largest error seen while fewer
  /// than two predictions were made.
  double replayedErrorBound() const;
};

/// Samples one replica's decode steps (see above). The runner asks replays() for every step.
/// `period` 16 simulates 2 steps in 16 of a long run (and replays 14).
class StepSampler {
 public:
  /// `period` >= 2: steps from one detailed step of a steady run to the next.
  StepSampler(int period, Replica& replica, platform::Platform& platform);
  StepSampler(const StepSampler&) = delete;
  StepSampler& operator=(const StepSampler&) = delete;
  ~StepSampler();

  /// Whether the step of `batch` replays the last detailed step; advances the steady run.
  bool replays(const workload::StepBatch& batch);
  /// A detailed step starts now (after replays() said no); `plans`: its chips' plans.
  void detailedStarted(const std::vector<std::shared_ptr<const workload::StepPlan>>& plans);
  /// The detailed step ended now.
  void detailedFinished();
  /// A replayed step: its time, the recorded step's start (for its operations' timings) and its
  /// chips' plans.
  const sc_core::sc_time& stepTime() const { return m_recordedTime; }
  const sc_core::sc_time& recordedStart() const { return m_recordedStart; }
  const std::vector<std::shared_ptr<const workload::StepPlan>>& plans() const { return m_plans; }
  /// Emits the recorded activity and counts for a replayed step that started at `start` and ends now.
  void replayed(const sc_core::sc_time& start);
  const SamplingSummary& summary() const { return m_summary; }

 private:
  /// Whether the current step of the run is one the replays copy: its second, and each period's last.
  bool recordedPosition() const;
  /// Changes of operating point so far on the replica's simulated chips.
  uint64_t pointChanges() const;

  int m_period;
  std::vector<std::unique_ptr<ActivityRecorder>> m_recorders;
  std::vector<stats::Counter*> m_counters;
  std::vector<double> m_before;                     ///< counter values at the recorded step's start
  std::vector<double> m_delta;                      ///< what the recorded step added
  std::vector<hw::MemoryController*> m_memories;    ///< of the simulated chips
  std::vector<const hw::PowerManager*> m_managers;  ///< of the simulated chips
  /// pointChanges() at the recording's start: a recording that ends with another stands for no
  /// step, and the replays hold only while it stays the same.
  uint64_t m_recordedChanges = 0;
  std::vector<hw::DramCommandCounts> m_commandsBefore;
  std::vector<hw::DramCommandCounts> m_commandsDelta;
  std::vector<uint64_t> m_batch;  ///< requests of the current steady run, in order
  uint64_t m_index = 0;           ///< the current step's position in its run
  bool m_recording = false;       ///< the current detailed step is being recorded
  bool m_recorded = false;        ///< the run has a recording to replay
  bool m_replayedSince = false;   ///< steps were replayed since the last detailed one
  sc_core::sc_time m_start;
  sc_core::sc_time m_recordedStart;
  sc_core::sc_time m_recordedTime;
  std::vector<std::shared_ptr<const workload::StepPlan>> m_plans;
  SamplingSummary m_summary;
};

}  // namespace scoville::runtime
