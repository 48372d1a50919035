#pragma once
// The limits a run keeps: --timeout (wall clock), --max-sim-time (simulated time) and the
// SystemC time range, each ending the run with error[simulation] and no report rather than with a
// wrong one or a hang (README.md, the run options).

#include <string>

namespace scoville::cli {

/// A time option's value in seconds ("20 ms"), or ConfigError kBadUnit naming the option.
double timeOption(const std::string& option, const std::string& text);

/// Ends the process with error[simulation] (exit kExitSimulationError) once `text` ("10 min") of
/// wall-clock time have passed: a SIGALRM whose handler writes a message composed beforehand.
/// ConfigError for a value that is not a time in (0, 1e7 s].
void armTimeout(const std::string& text);

/// The --max-sim-time limit in seconds: positive and at most tlm::kMaxSimulatedTimeS.
double maxSimulatedTime(const std::string& text);

/// Runs the simulation until it has nothing left to do or reaches `limitS` of simulated time.
/// Throws SimulationError when it stops at the limit with work left, or when a model asked for a
/// duration that cannot be represented (tlm::TimeRangeError, reported by SystemC).
void simulate(double limitS, const std::string& limitText);

}  // namespace scoville::cli
