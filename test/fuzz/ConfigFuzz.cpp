// libFuzzer target over the configuration loaders, the --set and run-option parsers, include
// trees, load and routing traces, software-stack and kernel datasets, and the report and sweep
// readers (scripts/fuzz runs it; FuzzTargets.h lists the targets and what each input holds).
//
// The first byte of an input picks the target. SCOVILLE_FUZZ_TARGET=NAME (config, overrides,
// run-args, includes, load-trace, routing-trace, stack, kernels, report) pins a run to one
// target: inputs for another one are refused and never enter its corpus. SCOVILLE_FUZZ_VERBOSE=1
// says whether each input was accepted (or why it was refused); SCOVILLE_FUZZ_OPEN_BUGS=1 turns off
// the step-arounds of known open bugs (skipOpenBugs in FuzzTargets.h); SCOVILLE_FUZZ_SCRATCH=DIR
// is the folder the targets write their files to (emptied for each input; default: a new
// temporary folder). A reader must accept an
// input or refuse it the documented way, and what it accepts must pass the properties of
// FuzzChecks.h; anything else (another exception, a broken property, a crash, a leak, undefined
// behaviour) aborts with a message, and the input becomes a regression test
// (test/fuzz/regressions/README.md).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <string_view>

#include "test/fuzz/FuzzTargets.h"

namespace {

const scoville::test::fuzz::TargetInfo* g_pinned = nullptr;
bool g_verbose = false;  // SCOVILLE_FUZZ_VERBOSE=1: say whether each input was accepted or why it was refused

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  namespace fuzz = scoville::test::fuzz;
  if (const char* name = std::getenv("SCOVILLE_FUZZ_TARGET"); name != nullptr && *name != '\0') {
    g_pinned = fuzz::targetNamed(name);
    if (g_pinned == nullptr) {
      std::cerr << "scoville_config_fuzz: no target '" << name << "'; targets:";
      for (const fuzz::TargetInfo& t : fuzz::kTargets) std::cerr << " " << t.name;
      std::cerr << "\n";
      std::exit(2);
    }
  }
  g_verbose = std::getenv("SCOVILLE_FUZZ_VERBOSE") != nullptr;
  // SCOVILLE_FUZZ_OPEN_BUGS=1: no step-arounds, so that the open- regressions fail (or pass once fixed).
  if (std::getenv("SCOVILLE_FUZZ_OPEN_BUGS") != nullptr) fuzz::skipOpenBugs() = false;
  // Load the shipped inputs of the estimates once, before the first input is timed.
  try {
    (void)fuzz::tinyDense();
    (void)fuzz::decodeStepScenario();
    (void)fuzz::referenceChips();
  } catch (const std::exception& e) {
    std::cerr << "scoville_config_fuzz: cannot load the shipped reference inputs: " << e.what() << "\n";
    std::exit(2);
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  namespace fuzz = scoville::test::fuzz;
  if (size == 0) return -1;
  if (g_pinned != nullptr && (data[0] < g_pinned->first || data[0] > g_pinned->last)) return -1;
  const std::string_view payload(reinterpret_cast<const char*>(data) + 1, size - 1);
  try {
    const fuzz::Outcome outcome = fuzz::runFuzzInput(data[0], payload);
    if (g_verbose) {
      std::cerr << "scoville fuzz: selector " << static_cast<int>(data[0]) << ": "
                << (outcome == fuzz::Outcome::kAccepted  ? std::string("accepted")
                    : outcome == fuzz::Outcome::kRefused ? "refused: " + fuzz::lastRefusal()
                                                         : std::string("not an input"))
                << "\n";
    }
    if (outcome == fuzz::Outcome::kNotAnInput) return -1;
  } catch (const fuzz::FuzzFailure& f) {
    std::cerr << "\nscoville fuzz failure (selector " << static_cast<int>(data[0]) << "): " << f.message << "\n";
    std::abort();
  } catch (const std::exception& e) {
    std::cerr << "\nscoville fuzz failure (selector " << static_cast<int>(data[0])
              << "): exception escaped the target: " << fuzz::typeName(e) << ": " << e.what() << "\n";
    std::abort();
  }
  return 0;
}

// libsystemc.so defines main() and needs sc_main() to link; libFuzzer's own main() (linked into
// the executable) takes precedence, so this is never called.
extern "C" int sc_main(int, char*[]) {
  std::cerr << "scoville_config_fuzz: started through SystemC's main instead of libFuzzer's\n";
  return 1;
}
