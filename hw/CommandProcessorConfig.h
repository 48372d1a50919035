#pragma once

#include "config/Schema.h"

namespace scoville::hw {

/// The chip's command processor: the front end that starts kernels (hw/CommandProcessor.h).
struct CommandProcessorConfig {
  /// Time from one kernel's end to the next one's first work on the chip's stream: the launch
  /// read and the grid set up, the previous kernel's completion and memory flush. 0: the chip
  /// has no such gap; its work streams from one op to the next.
  double kernelLaunchS = 0.0;

  bool launchesKernels() const { return kernelLaunchS > 0.0; }
  static const config::Schema<CommandProcessorConfig>& schema();
};

}  // namespace scoville::hw
