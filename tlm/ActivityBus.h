#pragma once
// Activity events: what the hardware did, in units an energy table can price. Timing models emit
// them; power and statistics listeners subscribe (DRAMSys-style: the power model only listens, the
// timing model never computes energy). Emitting costs one branch when nobody listens.

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
  kNocBytes,         ///< bytes through an on-chip interconnect port
  kLinkBytes,        ///< wire bytes (payload + headers) through a chip's link port (sent or received)
  kSwitchBytes,      ///< wire bytes forwarded by a switch output port
  kSwitchPackets,    ///< packets forwarded by a switch output port
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
};

class ActivityListener {
 public:
  virtual ~ActivityListener() = default;
  virtual void onActivity(const ActivityEvent& event) = 0;
  /// Whether this listener uses the network events of chip `chip` (ActivityEvent::chip >= 0: a
  /// chip's link bytes); an emitter may leave out events of chips no listener uses. Default: all.
  virtual bool usesChip(int /*chip*/) const { return true; }
};

/// Fan-out of activity events to listeners. Owned by a chip (or a fabric); listeners outlive it.
class ActivityBus {
 public:
  void subscribe(ActivityListener& listener) { m_listeners.push_back(&listener); }
  bool active() const { return !m_listeners.empty(); }
  /// Whether a listener uses network events of chip `chip` (ActivityListener::usesChip).
  bool usesChip(int chip) const {
    for (const ActivityListener* listener : m_listeners) {
      if (listener->usesChip(chip)) return true;
    }
    return false;
  }
  void emit(const ActivityEvent& event) const {
    for (ActivityListener* listener : m_listeners) listener->onActivity(event);
  }

 private:
  std::vector<ActivityListener*> m_listeners;
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
    return ActivityEvent{activity, amount, op.precision, op.phase, op.block,     std::min(start, end), end,
                         m_source, chip,   op.kind,      op.layer, op.requestId, op.srcChip,           op.dstChip};
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
