#include "cli/RunRequest.h"

#include <tuple>

namespace po = boost::program_options;

namespace scoville::cli {

namespace {

/// Every field, for comparison.
auto fields(const RunRequest& r) {
  return std::tie(r.inputs.platform, r.inputs.model, r.inputs.scenario, r.inputs.sets, r.out, r.seed, r.timing, r.quiet,
                  r.verbose, r.exact, r.exactAllChips, r.samplePeriod, r.dryRun, r.trace, r.traceStart, r.traceDuration,
                  r.vcd, r.rtlVcd, r.vcdInterval, r.maxSimTime, r.timeout, r.maxMemory);
}

}  // namespace

void RunRequest::addOptions(po::options_description& description) {
  addInputOptions(description, inputs, true);
  description.add_options()("out,o", po::value(&out)->default_value(out),
                            "output directory; report.json is written there")(
      "seed", unsignedValue(seed, "--seed"), "random seed, an integer 0 .. 2^64-1 (recorded in the report)")(
      "timing", po::value(&timing)->default_value(timing),
      "timing mode: lt (loosely timed, b_transport + quantum keeper: fast) or at (approximately timed, "
      "4-phase nb_transport: queues, scheduling policies, backpressure)")(
      "exact", po::bool_switch(&exact),
      "serving: simulate every data-parallel replica and every step (otherwise a closed-loop run over alike, "
      "uncoupled replicas simulates one replica per class of equal load and the others mirror it, "
      "docs/serving.md#replica-classes, and steady decode runs are sampled, --sample-period)")(
      "sample-period", po::value(&samplePeriod)->default_value(samplePeriod),
      "serving: simulate the first two steps of each steady decode run (the same requests decoding) and then every "
      "N-th in detail; the steps between replay the last detailed one (docs/serving.md#sampled-decode-steps). "
      "1: every step")(
      "dry-run", po::bool_switch(&dryRun),
      "check the inputs, then print what the run would simulate and its predicted wall time and memory "
      "(docs/performance.md#cost-model); run nothing, write nothing")(
      "exact-all-chips", po::bool_switch(&exactAllChips),
      "serving: --exact, and simulate every chip's memory and compute, also on tensor-parallel ranks that provably "
      "repeat their rank 0 (which otherwise mirror it: same results, less wall time)")(
      "trace", po::value(&trace),
      "write a Perfetto / Chrome trace (JSON) of every unit's transactions in the window to FILE "
      "(open it in ui.perfetto.dev)")("trace-start", po::value(&traceStart)->default_value(traceStart),
                                      "the trace window's start (simulated time, e.g. '20 ms')")(
      "trace-duration", po::value(&traceDuration)->default_value(traceDuration), "the trace window's length")(
      "vcd", po::value(&vcd),
      "write VCD waveforms (per chip: unit utilisations, HBM bandwidth and requests in flight, fabric bytes/s, "
      "power, core clock; the platform's power and requests in flight) over the trace window to FILE (GTKWave)")(
      "vcd-interval", po::value(&vcdInterval)->default_value(vcdInterval), "the waveforms' sample interval")(
      "rtl-vcd", po::value(&rtlVcd),
      "write the RTL co-simulation's waveforms (the Verilated blocks' ports and registers at every clock edge in "
      "the trace window) to FILE (GTKWave); needs a tensor core with impl rtl or lockstep (docs/cosim.md)")(
      "max-sim-time", po::value(&maxSimTime)->default_value(maxSimTime),
      "fail (exit 1, no report) when the simulation reaches this simulated time unfinished; at most 1e6 s")(
      "max-memory", po::value(&maxMemory)->default_value(maxMemory),
      "refuse (exit 2) a run whose estimated memory exceeds this, e.g. '16 GiB'; auto: the machine's available "
      "memory")("timeout", po::value(&timeout),
                "fail (exit 1, no report) when the run has taken this much wall-clock time, e.g. '600 s'")(
      "quiet,q", po::bool_switch(&quiet), "print only errors")("verbose,v", po::bool_switch(&verbose),
                                                               "print the resolved inputs too");
}

RunRequest RunRequest::fromArgs(const std::vector<std::string>& args) {
  RunRequest request;
  po::options_description description;
  request.addOptions(description);
  po::variables_map vm = parseOptions(args, description);
  po::notify(vm);
  request.check();
  return request;
}

std::vector<std::string> RunRequest::toArgs() const {
  const RunRequest defaults;
  std::vector<std::string> args = inputArgs(inputs, true);
  args.insert(args.end(), {"--seed", std::to_string(seed)});
  appendOption(args, "--timing", timing);
  appendOption(args, "--out", out);
  if (quiet) args.emplace_back("--quiet");
  if (verbose) args.emplace_back("--verbose");
  if (exact) args.emplace_back("--exact");
  if (exactAllChips) args.emplace_back("--exact-all-chips");
  if (samplePeriod != defaults.samplePeriod) appendOption(args, "--sample-period", std::to_string(samplePeriod));
  if (dryRun) args.emplace_back("--dry-run");
  const auto option = [&args](const char* name, const std::string& value, const std::string& unset) {
    if (value != unset) appendOption(args, name, value);
  };
  option("--trace", trace, defaults.trace);
  option("--trace-start", traceStart, defaults.traceStart);
  option("--trace-duration", traceDuration, defaults.traceDuration);
  option("--vcd", vcd, defaults.vcd);
  option("--vcd-interval", vcdInterval, defaults.vcdInterval);
  option("--rtl-vcd", rtlVcd, defaults.rtlVcd);
  option("--max-sim-time", maxSimTime, defaults.maxSimTime);
  option("--timeout", timeout, defaults.timeout);
  option("--max-memory", maxMemory, defaults.maxMemory);
  const std::vector<std::string> sets = overrideArgs(inputs);
  args.insert(args.end(), sets.begin(), sets.end());
  return args;
}

std::vector<std::string> RunRequest::commandLine() const {
  std::vector<std::string> line{kRunCommandName};
  const std::vector<std::string> args = toArgs();
  line.insert(line.end(), args.begin(), args.end());
  return line;
}

void RunRequest::check() const {
  if (quiet && verbose) throw po::error("--quiet and --verbose exclude each other");
  if (samplePeriod < 1) {
    throw po::error("--sample-period " + std::to_string(samplePeriod) +
                    ": expected a whole number of steps, at least 1");
  }
}

bool RunRequest::operator==(const RunRequest& other) const {
  return fields(*this) == fields(other);
}

SamplingRequest samplingRequest(const RunRequest& options, bool traced, bool cosim) {
  if (options.exact || options.exactAllChips) return {0, "asked for (--exact)"};
  if (options.samplePeriod < 2) return {0, "asked for (--sample-period 1)"};
  if (traced) return {0, "a trace or waveforms record every step's transactions"};
  if (cosim) return {0, "the RTL co-simulation runs every step's GEMMs"};
  return {options.samplePeriod, ""};
}

}  // namespace scoville::cli
