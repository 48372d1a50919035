#include "cli/RunLimits.h"

#include <fmt/format.h>
#include <sys/time.h>
#include <unistd.h>

#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <systemc>

#include "cli/Commands.h"
#include "config/ConfigError.h"
#include "config/Units.h"
#include "tlm/Time.h"

namespace scoville::cli {

namespace {

/// The message the --timeout alarm prints; composed before the alarm is set, as a signal handler
/// may only write it.
char gTimeoutMessage[256] = "";

extern "C" void onRunTimeout(int /*signal*/) {
  const ssize_t ignored = ::write(STDERR_FILENO, gTimeoutMessage, std::strlen(gTimeoutMessage));
  (void)ignored;
  ::_exit(kExitSimulationError);  // no report: it is written last, whole, and not yet
}

}  // namespace

double timeOption(const std::string& option, const std::string& text) {
  try {
    return config::parseQuantityAs(text, config::dim::kTime);
  } catch (const config::UnitError& e) {
    throw config::ConfigError(config::ErrorKind::kBadUnit, option + " " + text, e.what());
  }
}

void armTimeout(const std::string& text) {
  const double seconds = timeOption("--timeout", text);
  if (!(seconds > 0) || seconds > 1e7) {
    throw config::ConfigError(config::ErrorKind::kOutOfRange, "--timeout " + text,
                              "the wall-clock limit must be positive and at most 1e7 s");
  }
  std::snprintf(gTimeoutMessage, sizeof gTimeoutMessage,
                "error[simulation]: the run took longer than --timeout %s of wall-clock time; no report written\n",
                text.c_str());
  struct sigaction action {};
  action.sa_handler = onRunTimeout;
  ::sigemptyset(&action.sa_mask);
  ::sigaction(SIGALRM, &action, nullptr);
  itimerval timer{};
  timer.it_value.tv_sec = static_cast<time_t>(seconds);
  timer.it_value.tv_usec = static_cast<suseconds_t>((seconds - std::floor(seconds)) * 1e6);
  if (timer.it_value.tv_sec == 0 && timer.it_value.tv_usec == 0) timer.it_value.tv_usec = 1;
  ::setitimer(ITIMER_REAL, &timer, nullptr);
}

double maxSimulatedTime(const std::string& text) {
  const double seconds = timeOption("--max-sim-time", text);
  if (!(seconds > 0) || seconds > tlm::kMaxSimulatedTimeS) {
    throw config::ConfigError(config::ErrorKind::kOutOfRange, "--max-sim-time " + text,
                              fmt::format("the simulated-time limit must be positive and at most {:g} s (beyond it "
                                          "SystemC's clock could wrap around)",
                                          tlm::kMaxSimulatedTimeS));
  }
  return seconds;
}

void simulate(double limitS, const std::string& limitText) {
  try {
    sc_core::sc_start(sc_core::sc_time(limitS, sc_core::SC_SEC), sc_core::SC_EXIT_ON_STARVATION);
  } catch (const sc_core::sc_report& e) {
    const std::string what = e.what();
    if (const std::size_t at = what.find(tlm::kTimeRangeMessage); at != std::string::npos) {
      throw SimulationError(what.substr(at));
    }
    throw;
  }
  if (sc_core::sc_pending_activity()) {
    throw SimulationError(
        fmt::format("the run reached --max-sim-time {} of simulated time without finishing; no "
                    "report written (raise the limit, or check the inputs for a near-zero rate)",
                    limitText));
  }
}

}  // namespace scoville::cli
