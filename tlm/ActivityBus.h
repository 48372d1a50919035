#pragma once
// Activity events: what the hardware did, in units an energy table can price. Timing models emit
// them; power and statistics listeners subscribe (DRAMSys-style: the power model only listens, the
// timing model never computes energy). Emitting costs one branch when nobody listens.

#include <cstdint>
#include <systemc>
#include <vector>

#include "tlm/OpExtension.h"

namespace scoville::tlm {

/// Kinds of activity; `amount` is counted in the unit named here.
enum class Activity {
  kMacs,             ///< multiply-accumulates on a tensor core (precision says which datapath)
  kOperandBytes,     ///< GEMM operand and result bytes moved into and out of the tensor arrays
  kVectorOps,        ///< element operations on a vector unit
  kSramReadBytes,    ///< bytes read from SRAM
  kSramWriteBytes,   ///< bytes written to SRAM
  kDramActivates,    ///< ACT commands
  kDramPrecharges,   ///< PRE commands
  kDramReadBursts,   ///< read bursts (burst size from the memory's config)
  kDramWriteBursts,  ///< write bursts
  kDramRefreshes,    ///< all-bank refreshes of one channel
  kNocMemoryBytes,   ///< bytes the on-chip network moves between a unit and the HBM controller
  kNocSramBytes,     ///< bytes the on-chip network moves between a unit and the SRAM
  kLinkBytes,        ///< wire bytes (payload + headers) through a chip's link port (sent or received)
  kSwitchBytes,      ///< wire bytes forwarded by a switch output port
  kSwitchPackets,    ///< packets forwarded by a switch output port
  kClockActive,      ///< seconds the chip's clocks ran for work (its power manager's clock gating)
  kWakeArrays,       ///< power-gated tensor arrays powered back on (its power manager)
  kConvertOps,       ///< a vector unit's weight conversions in registers (priced apart; its kVectorOps omit them)
};

const char* activityName(Activity activity);

/// One emitted event. `source` is the emitting module's hierarchical name (stable for the run).
struct ActivityEvent {
  Activity activity = Activity::kMacs;
  double amount = 0.0;
  Precision precision = Precision::kBf16;
  LlmPhase phase = LlmPhase::kDecode;
  OpBlock block = OpBlock::kOther;
  sc_core::sc_time start;  ///< when the activity begins (the unit starts on the transaction)
  sc_core::sc_time time;   ///< when the activity ends (the transaction's completion)
  const char* source = "";
  int chip = -1;                ///< network events: the chip whose port moved the bytes (-1: a switch's activity)
  OpKind kind = OpKind::kRead;  ///< the transaction's op (for traces)
  uint32_t layer = 0;           ///< its layer
  uint64_t request = 0;         ///< its serving request (0: shared)
  int srcChip = 0;              ///< its issuing chip
  int dstChip = 0;              ///< the chip that serves it (kSend: the receiver)
  /// Switching activity of the data moved, relative to random data (1): wires toggle in proportion
  /// to it. 0 for data that does not change (a constant fill).
  float toggle = 1.0F;
};

/// A change of a chip's power state. Its power manager (hw/power/PowerManager.h) emits the
/// operating point and the gating of tensor arrays; the serving runtime that drives the chip
/// emits what the chip is doing (kServingState), for attribution only.
struct PowerStateEvent {
  enum class Kind {
    kOperatingPoint,  ///< the core clock domain moved to `point` (frequencyScale, voltageScale)
    kGating,          ///< `gatedArrays` of the tensor core's `arrays` are powered off from now
    kServingState,    ///< the chip does `state` from now (power::ServingState order)
    kThermal,         ///< the thermal model's state from now: temperatures, leakage, HBM refresh rate
    kThrottle,        ///< a governor's decisions are (`throttled`) or stop being bound by the junction limit
  };
  Kind kind = Kind::kOperatingPoint;
  sc_core::sc_time time;
  std::size_t point = 0;        ///< kOperatingPoint: index into the chip type's dvfs points
  double frequencyScale = 1.0;  ///< kOperatingPoint: f / f nominal
  double voltageScale = 1.0;    ///< kOperatingPoint: V / V nominal
  int gatedArrays = 0;          ///< kGating
  int arrays = 1;               ///< kGating
  int state = 0;                ///< kServingState
  double dieC = 0.0;            ///< kThermal: die temperature
  double hbmC = 0.0;            ///< kThermal: HBM temperature
  double leakageScale = 1.0;    ///< kThermal: core-rail leakage over its value at the reference temperature
  double refreshRate = 1.0;     ///< kThermal: HBM refresh rate over the normal one (1 or 2)
  bool throttled = false;       ///< kThrottle
};

class ActivityListener {
 public:
  virtual ~ActivityListener() = default;
  virtual void onActivity(const ActivityEvent& event) = 0;
  /// A change of the chip's power state; emitted at its time, in time order. Default: ignored.
  virtual void onPowerState(const PowerStateEvent& /*event*/) {}
  /// Whether this listener uses the network events of chip `chip` (ActivityEvent::chip >= 0: a
  /// chip's link bytes); an emitter may leave out events of chips no listener uses. Default: all.
  virtual bool usesChip(int /*chip*/) const { return true; }
};

/// A set of activities (bit i: Activity i), for a listener that hears only some.
using ActivityMask = uint32_t;
inline constexpr ActivityMask kAllActivities = ~ActivityMask{0};
inline constexpr ActivityMask activityBit(Activity a) {
  return ActivityMask{1} << static_cast<unsigned>(a);
}

/// Fan-out of activity events to listeners. Owned by a chip (or a fabric); listeners outlive it.
class ActivityBus {
 public:
  /// `listener` hears the activities of `mask` (every power-state change whatever the mask).
  void subscribe(ActivityListener& listener, ActivityMask mask = kAllActivities) {
    m_listeners.push_back(&listener);
    m_masks.push_back(mask);
  }
  /// `listener` hears nothing more (a listener that goes before the bus).
  void unsubscribe(const ActivityListener& listener) {
    for (std::size_t i = 0; i < m_listeners.size(); ++i) {
      if (m_listeners[i] != &listener) continue;
      m_listeners.erase(m_listeners.begin() + static_cast<std::ptrdiff_t>(i));
      m_masks.erase(m_masks.begin() + static_cast<std::ptrdiff_t>(i));
      return;
    }
  }
  /// Changes the activities `listener` hears.
  void resubscribe(const ActivityListener& listener, ActivityMask mask) {
    for (std::size_t i = 0; i < m_listeners.size(); ++i) {
      if (m_listeners[i] == &listener) m_masks[i] = mask;
    }
  }
  bool active() const { return !m_listeners.empty(); }
  /// Whether a listener uses network events of chip `chip` (ActivityListener::usesChip).
  bool usesChip(int chip) const {
    for (const ActivityListener* listener : m_listeners) {
      if (listener->usesChip(chip)) return true;
    }
    return false;
  }
  void emit(const ActivityEvent& event) const {
    const ActivityMask bit = activityBit(event.activity);
    for (std::size_t i = 0; i < m_listeners.size(); ++i) {
      if ((m_masks[i] & bit) != 0) m_listeners[i]->onActivity(event);
    }
  }
  void emit(const PowerStateEvent& event) const {
    for (ActivityListener* listener : m_listeners) listener->onPowerState(event);
  }

 private:
  std::vector<ActivityListener*> m_listeners;
  std::vector<ActivityMask> m_masks;
};

/// What a module holds to emit: a bus (or none) and its own name.
class ActivitySource {
 public:
  void attach(const ActivityBus& bus, const char* source) {
    m_bus = &bus;
    m_source = source;
  }
  /// Emits when a listener is attached and `amount` is not zero: the activity ran from `start`
  /// to `end` (at a chip's port `chip`, for network modules).
  void emit(Activity activity, double amount, const OpExtension& op, const sc_core::sc_time& start,
            const sc_core::sc_time& end, int chip = -1) const {
    if (!listening() || amount == 0.0) return;
    m_bus->emit(event(activity, amount, op, start, end, chip));
  }
  /// Whether emit() sends anything: a listener is attached.
  bool listening() const { return m_bus != nullptr && m_bus->active(); }
  /// The event emit() would send, for a caller that sends it several times over, changing only
  /// its chips (send()).
  ActivityEvent event(Activity activity, double amount, const OpExtension& op, const sc_core::sc_time& start,
                      const sc_core::sc_time& end, int chip = -1) const {
    return ActivityEvent{activity,   amount,     op.precision, op.phase, op.block, std::min(start, end),
                         end,        m_source,   chip,         op.kind,  op.layer, op.requestId,
                         op.srcChip, op.dstChip, op.dataToggle};
  }
  /// Sends an event made by event(); only when listening() and its amount is not zero.
  void send(const ActivityEvent& e) const { m_bus->emit(e); }
  /// Whether a listener uses network events of chip `chip`; only when listening().
  bool usesChip(int chip) const { return m_bus->usesChip(chip); }

 private:
  const ActivityBus* m_bus = nullptr;
  const char* m_source = "";
};

}  // namespace scoville::tlm
