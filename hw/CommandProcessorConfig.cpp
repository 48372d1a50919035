#include "hw/CommandProcessorConfig.h"

namespace scoville::hw {

using namespace scoville::config;

const Schema<CommandProcessorConfig>& CommandProcessorConfig::schema() {
  using T = CommandProcessorConfig;
  static const Schema<T> s =
      Schema<T>("command_processor",
                "The chip's front end that starts kernels on its stream (docs/validation.md#the-launch-gap).")
          .quantity("kernel_launch", &T::kernelLaunchS, dim::kTime, optional("0 s"), nonNegative(),
                    "time from one kernel's end to the next one's first work: the launch read and the grid set up, "
                    "the previous kernel's completion and memory flush (plus the on-chip hops each way). Above 0 "
                    "the chip runs kernels one after another, each op class of a layer one kernel; 0: its work "
                    "streams from one op to the next");
  return s;
}

}  // namespace scoville::hw
