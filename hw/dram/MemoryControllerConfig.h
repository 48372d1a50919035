#pragma once

#include <string>

#include "hw/dram/AddressDecoder.h"
#include "config/Schema.h"

namespace scoville::hw {

/// DRAM timing parameters of one (pseudo-)channel, in seconds.
struct DramTimingConfig {
  double tRCD = 0.0;    ///< ACT to column command
  double tRP = 0.0;     ///< PRE to ACT (same bank)
  double tCL = 0.0;     ///< column command to first data
  double tRAS = 0.0;    ///< ACT to PRE (same bank); tRC = tRAS + tRP
  double tRRDs = 0.0;   ///< ACT to ACT, different bank groups
  double tRRDl = 0.0;   ///< ACT to ACT, same bank group
  double tFAW = 0.0;    ///< window holding at most four ACTs
  double tWTR = 0.0;    ///< end of write data to read command (turnaround)
  double tRTW = 0.0;    ///< read to write turnaround on the data bus
  double tREFI = 0.0;   ///< refresh interval
  double tRFC = 0.0;    ///< all-bank refresh time: the channel is blocked
  double tRFCpb = 0.0;  ///< per-bank refresh time (0: not given; needed by per_bank refresh)
  double tRFCsb = 0.0;  ///< same-bank refresh time (0: not given; needed by same_bank refresh)

  static const config::Schema<DramTimingConfig>& schema();
};

/// An HBM memory controller and its channels (see MemoryController.h and DramChannel.h).
struct MemoryControllerConfig {
  double capacityBytes = 0.0;
  double bandwidthBytesPerS = 0.0;  ///< aggregate peak over all channels
  int channels = 0;
  double interleaveBytes = 0.0;  ///< consecutive bytes mapped to one channel
  int bankGroups = 0;
  int banksPerGroup = 0;
  double rowBytes = 0.0;            ///< page (row buffer) size of one channel
  double burstBytes = 0.0;          ///< bytes of one burst (the data-bus transfer unit)
  double controllerLatencyS = 0.0;  ///< controller + PHY pipeline, paid per request, overlapped
  DramTimingConfig timing;
  std::string scheduler;  ///< DramScheduler implementation name (see DramScheduler.h)
  AddressMapping addressMapping = AddressMapping::kBankGroupInterleaved;  ///< see AddressDecoder.h
  std::string pagePolicy = "open";   ///< PagePolicy implementation name (see BankMachine.h)
  std::string refresh = "all_bank";  ///< RefreshPolicy implementation name (see RefreshPolicy.h)
  int queueDepth = 0;                ///< requests the controller accepts before it stops granting END_REQ (AT)
  /// Pseudo-channels timed as one (see MemoryController.h): 1 times every channel on its own.
  int lockstepChannels = 1;

  double channelBandwidth() const { return bandwidthBytesPerS / channels; }
  int banks() const { return bankGroups * banksPerGroup; }
  /// The channels as the timing model sees them: `lockstepChannels` adjacent channels as one,
  /// with that many times the interleave granule, row and bandwidth (and the same banks, timings
  /// and burst size). `channels` is then the number of lockstep groups, and a DramChannel built
  /// from it counts each command and each second of bus time `lockstepChannels` times.
  MemoryControllerConfig lockstepGroups() const;
  static const config::Schema<MemoryControllerConfig>& schema();
};

}  // namespace scoville::hw
