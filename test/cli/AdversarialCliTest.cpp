// Adversarial command lines for the scoville executable, one table row each: broken YAML files
// (typos at several depths, wrong types, missing and duplicate keys, syntax errors, includes that
// are missing, cyclic or a directory), malformed quantities and integers, malformed --set and
// --vary, bad options of every command, and outputs that cannot be written. Every row must end
// with the documented exit code and a classed `error[CLASS]: LOCATION: message` on stderr that
// names the file (and line) or the option or key, print nothing on stdout, and write no file.
// Each row fails before simulating anything, so the whole table runs in a few seconds.
//
// Placeholders in arguments, file contents, edits and expected text: {dir} is the row's temporary
// directory, {src} the source tree. A file whose content is "{file:REL}" starts as a copy of
// {src}/REL; its edits then replace the first occurrence of each `from` (which must occur).
//
// Rows in kFixedBugs showed wrong behaviour when this table was written (exit 0 on bad input, no
// error line, a message without its place) and were fixed with it (issue 38).
#include <gtest/gtest.h>

#include <filesystem>
#include <ostream>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "test/support/Subprocess.h"

namespace scoville::test {
namespace {

namespace fs = std::filesystem;
using Args = std::vector<std::string>;

struct File {
  std::string name;
  std::string content;
  std::vector<std::pair<std::string, std::string>> edits = {};
};

struct Case {
  std::string name;
  Args args;
  std::vector<File> files;
  int exitCode;
  std::vector<std::string> stderrHas;
  std::vector<std::string> dirs = {};  // empty directories to create in {dir}
};

// The name alone: ctest's test names carry it (the command line is traced on failure).
void PrintTo(const Case& c, std::ostream* os) {
  *os << c.name;
}

// A one-chip platform of the shipped jalapeno chip type (line numbers are asserted below).
const std::string kPlatform =
    "name: p\n"                                         // 1
    "description: test platform\n"                      // 2
    "chip_types:\n"                                     // 3
    "- include: {src}/platforms/chips/jalapeno.yaml\n"  // 4
    "chips:\n"                                          // 5
    "- {type: jalapeno, count: 1}\n"                    // 6
    "network:\n"                                        // 7
    "  topology: none\n"                                // 8
    "host:\n"                                           // 9
    "  memory: 2 TiB\n"                                 // 10
    "  chips_per_host: 8\n"                             // 11
    "  link_bandwidth: 64 GB/s\n"                       // 12
    "  link_latency: 1 us\n";                           // 13

// tiny-moe without its comments.
const std::string kMoe =
    "name: tiny-moe\n"                    // 1
    "family: moe\n"                       // 2
    "layers: 4\n"                         // 3
    "hidden: 1024\n"                      // 4
    "vocab: 32000\n"                      // 5
    "attention: gqa\n"                    // 6
    "q_heads: 16\n"                       // 7
    "kv_heads: 4\n"                       // 8
    "head_dim: 64\n"                      // 9
    "attention_bias: true\n"              // 10
    "attention_sinks: true\n"             // 11
    "sliding_window: 128\n"               // 12
    "sliding_window_every: 2\n"           // 13
    "routed_experts: 16\n"                // 14
    "experts_per_token: 4\n"              // 15
    "moe_intermediate: 1024\n"            // 16
    "weight_precision: bf16\n"            // 17
    "expert_weights: {precision: fp4}\n"  // 18
    "compute_precision: bf16\n"           // 19
    "kv_precision: bf16\n";               // 20

// A small closed-loop serving scenario.
const std::string kServing =
    "name: s\n"                                                                      // 1
    "description: small serving\n"                                                   // 2
    "kind: serving\n"                                                                // 3
    "load: {impl: closed_loop, concurrency: 2}\n"                                    // 4
    "input_tokens: 64\n"                                                             // 5
    "output_tokens: 4\n"                                                             // 6
    "requests: 2\n"                                                                  // 7
    "scheduler: {max_batch: 16, max_tokens_per_step: 1024, prefill_chunk: 1024}\n";  // 8

// A validation dataset of one tiny-dense point.
const std::string kValidation =
    "name: t\n"                                  // 1
    "description: test\n"                        // 2
    "points:\n"                                  // 3
    "- id: a\n"                                  // 4
    "  source: a test\n"                         // 5
    "  hardware: jalapeno\n"                     // 6
    "  framework: none\n"                        // 7
    "  platform: jalapeno\n"                     // 8
    "  model: tiny-dense\n"                      // 9
    "  isl: 64\n"                                // 10
    "  osl: 4\n"                                 // 11
    "  concurrency: 1\n"                         // 12
    "  requests: 2\n"                            // 13
    "  sets: [scenario.random_range_ratio=1]\n"  // 14
    "  metrics:\n"                               // 15
    "  - {name: tpot, value: 50, unit: us}\n";   // 16

// The shipped jalapeno chip type as a file of the temporary directory (its timing include made
// absolute).
File chipFile(std::vector<std::pair<std::string, std::string>> edits = {}) {
  edits.insert(edits.begin(), {"{include: ../dram/", "{include: {src}/platforms/dram/"});
  return {"chip.yaml", "{file:platforms/chips/jalapeno.yaml}", edits};
}

// The platform file of kPlatform with one edit.
File platform(const std::string& from, const std::string& to, const std::string& name = "p.yaml") {
  return {name, kPlatform, {{from, to}}};
}

Args cat(Args head, const Args& tail) {
  head.insert(head.end(), tail.begin(), tail.end());
  return head;
}

Args run(const Args& extra) {
  return cat({"run", "--out", "{dir}/out"}, extra);
}
Args tiny(const Args& extra) {
  return run(cat({"-m", "tiny-dense"}, extra));
}
Args tinySet(const std::string& set) {
  return tiny({"--set", set});
}
Args serving(const Args& extra) {
  return tiny(cat({"-s", "inferencex-1k1k", "--set", "scenario.requests=2", "--set", "scenario.input_tokens=64",
                   "--set", "scenario.output_tokens=4"},
                  extra));
}
Args sweepTo(const std::string& out, const Args& extra) {
  return cat({"sweep", "-m", "tiny-dense", "-s", "inferencex-1k1k", "--set", "scenario.requests=2", "--set",
              "scenario.input_tokens=64", "--set", "scenario.output_tokens=4", "--out", out},
             extra);
}
Args sweep(const Args& extra) {
  return sweepTo("{dir}/sw", extra);
}
Args memory(const Args& extra) {
  return cat({"memory", "hbm2-8ch", "--requests", "1000"}, extra);
}

const std::string kHbm = "platform.chip_types[0].hbm.";
const std::string kBandwidth = kHbm + "bandwidth";
const std::string kChannels = kHbm + "channels";

const std::vector<Case> kCases = {
    // ---- platform files -------------------------------------------------------------------------
    {"PlatformHostKeyMisspelt",
     run({"-p", "{dir}/p.yaml", "-m", "tiny-dense"}),
     {platform("chips_per_host", "chips_per_hots")},
     2,
     {"error[unknown-key]: {dir}/p.yaml:11:3", "'platform.host'", "did you mean 'chips_per_host'"}},
    {"PlatformNetworkKeyMisspelt",
     run({"-p", "{dir}/p.yaml", "-m", "tiny-dense"}),
     {platform("topology:", "topolgy:")},
     2,
     {"error[unknown-key]: {dir}/p.yaml:8:3", "'platform.network'", "did you mean 'topology'"}},
    {"PlatformKeyMisspeltInAFlowMap",
     run({"-p", "{dir}/p.yaml", "-m", "tiny-dense"}),
     {platform("count: 1}", "count: 1, typ: x}")},
     2,
     {"error[unknown-key]: {dir}/p.yaml:6:30", "'platform.chips[0]'", "did you mean 'type'"}},
    {"PlatformListWhereASizeBelongs",
     run({"-p", "{dir}/p.yaml", "-m", "tiny-dense"}),
     {platform("memory: 2 TiB", "memory: [2 TiB]")},
     2,
     {"error[wrong-type]: {dir}/p.yaml:10:11", "'platform.host.memory'", "got a list"}},
    {"PlatformMissingRequiredKey",
     run({"-p", "{dir}/p.yaml", "-m", "tiny-dense"}),
     {platform("  link_latency: 1 us\n", "")},
     2,
     {"error[missing-key]: {dir}/p.yaml:10:", "'platform.host.link_latency'"}},
    {"PlatformDuplicateKey",
     run({"-p", "{dir}/p.yaml", "-m", "tiny-dense"}),
     {platform("  memory: 2 TiB\n", "  memory: 2 TiB\n  memory: 1 TiB\n")},
     2,
     {"error[duplicate-key]: {dir}/p.yaml:11:3", "'platform.host.memory' is given twice"}},
    {"PlatformUnclosedFlowMap",
     run({"-p", "{dir}/p.yaml", "-m", "tiny-dense"}),
     {platform("count: 1}", "count: 1")},
     2,
     {"error[yaml-syntax]: {dir}/p.yaml:7:", "YAML syntax error"}},
    {"PlatformFileOfCommentsOnly",
     run({"-p", "{dir}/c.yaml", "-m", "tiny-dense"}),
     {{"c.yaml", "# nothing but a comment\n\n"}},
     2,
     {"error[empty-file]: {dir}/c.yaml", "expected a platform map"}},
    {"PlatformFileIsADirectory",
     run({"-p", "{dir}/d.yaml", "-m", "tiny-dense"}),
     {},
     2,
     {"error[file-not-found]: {dir}/d.yaml", "--platform {dir}/d.yaml"},
     {"d.yaml"}},
    {"PlatformIncludeOfAMissingFile",
     run({"-p", "{dir}/p.yaml", "-m", "tiny-dense"}),
     {platform("chips/jalapeno.yaml", "chips/no-such-chip.yaml")},
     2,
     {"error[file-not-found]: {src}/platforms/chips/no-such-chip.yaml",
      "included by 'platform.chip_types[0]' at {dir}/p.yaml:4:3"}},
    {"PlatformIncludeCycle",
     run({"-p", "{dir}/p.yaml", "-m", "tiny-dense"}),
     {platform("{src}/platforms/chips/jalapeno.yaml", "a.yaml"),
      {"a.yaml", "include: b.yaml\n"},
      {"b.yaml", "include: a.yaml\n"}},
     2,
     {"error[invalid-config]: {dir}/b.yaml:1:1", "include 'a.yaml' is a cycle"}},
    {"PlatformIncludeOfItself",
     run({"-p", "{dir}/p.yaml", "-m", "tiny-dense"}),
     {platform("{src}/platforms/chips/jalapeno.yaml", "a.yaml"), {"a.yaml", "include: a.yaml\n"}},
     2,
     {"error[invalid-config]: {dir}/a.yaml:1:1", "includes the file it is in"}},
    {"PlatformIncludeOfADirectory",
     run({"-p", "{dir}/p.yaml", "-m", "tiny-dense"}),
     {platform("{src}/platforms/chips/jalapeno.yaml", "sub")},
     2,
     {"error[file-not-found]: {dir}/sub", "not a regular file", "included by 'platform.chip_types[0]' at {dir}/p.yaml"},
     {"sub"}},
    {"IncludedChipFileKeyMisspelt",
     run({"-p", "{dir}/p.yaml", "-m", "tiny-dense"}),
     {platform("{src}/platforms/chips/jalapeno.yaml", "chip.yaml"), chipFile({{"  channels: 192", "  chanels: 192"}})},
     2,
     {"error[unknown-key]: {dir}/chip.yaml:31:3", "'platform.chip_types[0].hbm'", "did you mean 'channels'"}},
    {"IncludedChipFileIncludesAMissingTimingSet",
     run({"-p", "{dir}/p.yaml", "-m", "tiny-dense"}),
     {platform("{src}/platforms/chips/jalapeno.yaml", "chip.yaml"), chipFile({{"dram/hbm3.yaml", "dram/hbm9.yaml"}})},
     2,
     {"error[file-not-found]: {src}/platforms/dram/hbm9.yaml",
      "'platform.chip_types[0].hbm.timing' at {dir}/chip.yaml:39"}},
    {"IncludedTimingSetKeyMisspelt",
     tinySet(kHbm + "timing={include: {dir}/t.yaml}"),
     {{"t.yaml", "{file:platforms/dram/hbm3.yaml}", {{"t_rcd:", "t_rdc:"}}}},
     2,
     {"error[unknown-key]: {dir}/t.yaml:5:1", "'t_rdc'", "'platform.chip_types[0].hbm.timing'",
      "did you mean 't_rcd' or 't_rfc'?"}},
    {"IncludedTimingSetMissingKey",
     tinySet(kHbm + "timing={include: {dir}/t.yaml}"),
     {{"t.yaml", "{file:platforms/dram/hbm3.yaml}", {{"t_rp: 14 ns\n", ""}}}},
     2,
     {"error[missing-key]: {dir}/t.yaml:", "'platform.chip_types[0].hbm.timing.t_rp'"}},
    {"OverrideIncludesAMissingFile",
     tinySet(kHbm + "timing={include: {dir}/none.yaml}"),
     {},
     2,
     {"error[file-not-found]: {dir}/none.yaml", "at --set platform.chip_types[0].hbm.timing="}},

    // ---- model files ----------------------------------------------------------------------------
    {"ModelNestedKeyMisspelt",
     run({"-m", "{dir}/m.yaml"}),
     {{"m.yaml", kMoe, {{"{precision: fp4}", "{precison: fp4}"}}}},
     2,
     {"error[unknown-key]: {dir}/m.yaml:18:18", "'model.expert_weights'", "did you mean 'precision'"}},
    {"ModelListWhereAnIntegerBelongs",
     run({"-m", "{dir}/m.yaml"}),
     {{"m.yaml", kMoe, {{"layers: 4", "layers: [4]"}}}},
     2,
     {"error[wrong-type]: {dir}/m.yaml:3:9", "'model.layers' expects an integer, got a list"}},
    {"ModelMissingRequiredKey",
     run({"-m", "{dir}/m.yaml"}),
     {{"m.yaml", kMoe, {{"hidden: 1024\n", ""}}}},
     2,
     {"error[missing-key]: {dir}/m.yaml:1:1", "'model.hidden'"}},
    {"ModelDuplicateKey",
     run({"-m", "{dir}/m.yaml"}),
     {{"m.yaml", kMoe, {{"family: moe\n", "family: moe\nfamily: dense\n"}}}},
     2,
     {"error[duplicate-key]: {dir}/m.yaml:3:1", "'model.family' is given twice"}},
    {"ModelUnknownFamily",
     run({"-m", "{dir}/m.yaml"}),
     {{"m.yaml", kMoe, {{"family: moe", "family: mixture"}}}},
     2,
     {"error[out-of-range]: {dir}/m.yaml:2:9", "'mixture' is not one of: dense, moe"}},
    {"ModelPrecisionMisspelt",
     run({"-m", "{dir}/m.yaml"}),
     {{"m.yaml", kMoe, {{"weight_precision: bf16", "weight_precision: bf17"}}}},
     2,
     {"error[out-of-range]: {dir}/m.yaml:17:19", "'model.weight_precision'", "did you mean 'bf16'"}},
    {"ModelBooleanIsProse",
     run({"-m", "{dir}/m.yaml"}),
     {{"m.yaml", kMoe, {{"attention_bias: true", "attention_bias: yes please"}}}},
     2,
     {"error[wrong-type]: {dir}/m.yaml:10:17", "'model.attention_bias' expects true or false"}},
    {"ModelTopKAboveTheExperts",
     run({"-m", "{dir}/m.yaml"}),
     {{"m.yaml", kMoe, {{"experts_per_token: 4", "experts_per_token: 32"}}}},
     2,
     {"error[invalid-config]: {dir}/m.yaml:15:20", "'model.experts_per_token'", "exceeds routed_experts"}},
    {"ModelScaleBlockWithoutScaleBits",
     run({"-m", "{dir}/m.yaml"}),
     {{"m.yaml", kMoe, {{"weight_precision: bf16\n", "weight_precision: bf16\nweight_scale_block: 32\n"}}}},
     2,
     {"error[invalid-config]: {dir}/m.yaml:1:1", "weight_scale_block and weight_scale_bits"}},
    {"ModelFileIsAList",
     run({"-m", "{dir}/m.yaml"}),
     {{"m.yaml", "- a\n- b\n"}},
     2,
     {"error[wrong-type]: {dir}/m.yaml", "expected the file to hold a model map, got a list"}},
    {"ModelFileIsAScalar",
     run({"-m", "{dir}/m.yaml"}),
     {{"m.yaml", "just a string\n"}},
     2,
     {"error[wrong-type]: {dir}/m.yaml", "got 'just a string'"}},
    {"ModelTabIndentation",
     run({"-m", "{dir}/m.yaml"}),
     {{"m.yaml", "name: x\n\tfamily: dense\n"}},
     2,
     {"error[yaml-syntax]: {dir}/m.yaml:2:1", "tab"}},
    {"ModelIncludeOfAMissingFile",
     run({"-m", "{dir}/m.yaml"}),
     {{"m.yaml", "include: nothere.yaml\n"}},
     2,
     {"error[file-not-found]: {dir}/nothere.yaml", "included by 'model' at {dir}/m.yaml:1:1"}},
    {"ModelIncludeWithKeysBeside",
     run({"-m", "{dir}/m.yaml"}),
     {{"base.yaml", kMoe}, {"m.yaml", "include: base.yaml\nlayers: 2\n"}},
     2,
     {"error[unknown-key]: {dir}/m.yaml:1:1", "'include' in 'model'"}},
    {"ModelGivenAScenarioFile",
     run({"-m", "{src}/workloads/scenarios/decode-step.yaml"}),
     {},
     2,
     {"error[unknown-key]: {src}/workloads/scenarios/decode-step.yaml:4:1", "'description' in 'model'"}},
    {"PlatformGivenAModelFile",
     run({"-p", "{src}/workloads/models/tiny-dense.yaml", "-m", "tiny-dense"}),
     {},
     2,
     {"error[unknown-key]: {src}/workloads/models/tiny-dense.yaml:4:1", "'family' in 'platform'"}},
    {"ModelFolderGivenAsAFile",
     run({"-m", "{src}/workloads/models"}),
     {},
     2,
     {"error[file-not-found]: {src}/workloads/models", "--model"}},

    // ---- scenario files -------------------------------------------------------------------------
    {"ScenarioNestedKeyMisspelt",
     run({"-m", "tiny-dense", "-s", "{dir}/s.yaml"}),
     {{"s.yaml", kServing, {{"max_batch", "max_bach"}}}},
     2,
     {"error[unknown-key]: {dir}/s.yaml:8:13", "'scenario.scheduler'", "did you mean 'max_batch'"}},
    {"ScenarioLoadImplMisspelt",
     run({"-m", "tiny-dense", "-s", "{dir}/s.yaml"}),
     {{"s.yaml", kServing, {{"impl: closed_loop", "impl: closedloop"}}}},
     2,
     {"error[out-of-range]: {dir}/s.yaml:4:14", "'scenario.load.impl'", "did you mean 'closed_loop'"}},
    {"ScenarioPhasePolicyMisspeltThreeDeep",
     run({"-m", "tiny-dense", "-s", "{dir}/s.yaml"}),
     {{"s.yaml", kServing, {{"requests: 2\n", "requests: 2\nserving: {decode_policy: {impl: fastest}}\n"}}}},
     2,
     {"error[out-of-range]: {dir}/s.yaml:8:", "'scenario.serving.decode_policy.impl' = 'fastest'"}},
    {"ScenarioPoissonWithoutARate",
     run({"-m", "tiny-dense", "-s", "{dir}/s.yaml"}),
     {{"s.yaml", kServing, {{"impl: closed_loop, concurrency: 2", "impl: poisson, rate_per_s: 0"}}}},
     2,
     {"error[out-of-range]: {dir}/s.yaml:4:", "'scenario.load.rate_per_s' = '0' is out of range"}},
    {"ScenarioWithoutRequests",
     run({"-m", "tiny-dense", "-s", "{dir}/s.yaml"}),
     {{"s.yaml", kServing, {{"requests: 2\n", ""}}}},
     2,
     {"error[missing-key]: {dir}/s.yaml:1:1", "'scenario.requests' is required"}},
    {"ScenarioServingKeysInADecodeStep",
     run({"-m", "tiny-dense", "-s", "{dir}/s.yaml"}),
     {{"s.yaml", kServing, {{"kind: serving", "kind: decode_step"}}}},
     2,
     {"error[invalid-config]: {dir}/s.yaml:4:7", "'scenario.load' is a serving key"}},
    {"ScenarioDuplicateMap",
     run({"-m", "tiny-dense", "-s", "{dir}/s.yaml"}),
     {{"s.yaml", kServing, {{"requests: 2\n", "requests: 2\nscheduler: {max_batch: 4}\n"}}}},
     2,
     {"error[duplicate-key]: {dir}/s.yaml:9:1", "'scenario.scheduler' is given twice"}},
    {"ScenarioQuantityWithoutUnit",
     run({"-m", "tiny-dense", "-s", "{dir}/s.yaml"}),
     {{"s.yaml", kServing, {{"prefill_chunk: 1024}", "prefill_chunk: 1024, step_overhead: 5}"}}}},
     2,
     {"error[bad-unit]: {dir}/s.yaml:8:", "'scenario.scheduler.step_overhead'", "has no unit"}},
    {"ScenarioPromptBeyondItsRange",
     run({"-m", "tiny-dense", "-s", "{dir}/s.yaml"}),
     {{"s.yaml", kServing, {{"input_tokens: 64", "input_tokens: 64000000"}}}},
     2,
     {"error[out-of-range]: {dir}/s.yaml:5:15", "'scenario.input_tokens'"}},
    {"ScenarioConversationsNeedAClosedLoop",
     run({"-m", "tiny-dense", "-s", "{dir}/s.yaml"}),
     {{"s.yaml",
       kServing,
       {{"impl: closed_loop, concurrency: 2", "impl: poisson, rate_per_s: 10"},
        {"requests: 2\n", "requests: 2\nmulti_turn: {turns: 3}\n"}}}},
     2,
     {"error[invalid-config]: {dir}/s.yaml:", "'scenario.multi_turn'", "closed_loop"}},
    {"ScenarioZipfExponentZero",
     run({"-m", "tiny-moe", "-s", "{dir}/s.yaml"}),
     {{"s.yaml", kServing, {{"requests: 2\n", "requests: 2\nrouting: {impl: skewed, zipf_exponent: 0}\n"}}}},
     2,
     {"error[out-of-range]: {dir}/s.yaml:8:", "'scenario.routing.zipf_exponent'"}},
    {"ScenarioLoadTraceMissing",
     run({"-m", "tiny-dense", "-s", "{dir}/s.yaml"}),
     {{"s.yaml", kServing, {{"impl: closed_loop, concurrency: 2", "impl: trace, file: missing.csv"}}}},
     2,
     {"error[file-not-found]:", "missing.csv"}},
    {"ScenarioLoadTraceBadLine",
     run({"-m", "tiny-dense", "-s", "{dir}/s.yaml"}),
     {{"s.yaml", kServing, {{"impl: closed_loop, concurrency: 2", "impl: trace, file: t.csv"}}},
      {"t.csv", "arrival_s,input_tokens,output_tokens\n0,64,4\nabc,64,4\n"}},
     2,
     {"error[invalid-config]: {dir}/t.csv:3", "'abc,64,4'"}},
    {"ScenarioLoadTraceNegativeArrival",
     run({"-m", "tiny-dense", "-s", "{dir}/s.yaml"}),
     {{"s.yaml", kServing, {{"impl: closed_loop, concurrency: 2", "impl: trace, file: t.csv"}}},
      {"t.csv", "arrival_s,input_tokens,output_tokens\n0,64,4\n-1,64,4\n"}},
     2,
     {"error[invalid-config]: {dir}/t.csv:3", "arrival_s"}},
    {"ScenarioLoadTraceHeaderOnly",
     run({"-m", "tiny-dense", "-s", "{dir}/s.yaml"}),
     {{"s.yaml", kServing, {{"impl: closed_loop, concurrency: 2", "impl: trace, file: t.csv"}}},
      {"t.csv", "arrival_s,input_tokens,output_tokens\n"}},
     2,
     {"error[empty-file]: {dir}/t.csv"}},
    {"ScenarioRoutingTraceExpertOutOfRange",
     run({"-m", "tiny-moe", "-s", "{dir}/s.yaml"}),
     {{"s.yaml", kServing, {{"requests: 2\n", "requests: 2\nrouting: {impl: trace, file: r.csv}\n"}}},
      {"r.csv", "layer,experts\n0,1 2 3 99\n"}},
     2,
     {"error[invalid-config]: {dir}/r.csv:2", "expert id 99"}},

    // ---- quantities -----------------------------------------------------------------------------
    {"BandwidthGivenATime",
     tinySet(kBandwidth + "=5 ns"),
     {},
     2,
     {"error[bad-unit]: --set " + kBandwidth + "=5 ns", "is a time, expected a bandwidth"}},
    {"SizeGivenAFrequency",
     tinySet(kHbm + "capacity=8 GHz"),
     {},
     2,
     {"error[bad-unit]:", "'platform.chip_types[0].hbm.capacity'", "is a frequency, expected a size"}},
    {"PowerGivenACompoundUnit",
     tinySet("platform.chip_types[0].rated_power=700 mW/s"),
     {},
     2,
     {"error[bad-unit]:", "'platform.chip_types[0].rated_power'", "expected a power"}},
    {"BandwidthWithoutUnitInAnOverride",
     tinySet(kBandwidth + "=5"),
     {},
     2,
     {"error[bad-unit]: --set " + kBandwidth + "=5:", "has no unit"}},
    {"BandwidthImplausiblySmall",
     tinySet(kBandwidth + "=5 B/ms"),
     {},
     2,
     {"error[out-of-range]: --set " + kBandwidth + "=5 B/ms"}},
    {"ZeroBandwidth",
     tinySet(kBandwidth + "=0 TB/s"),
     {},
     2,
     {"error[out-of-range]: --set " + kBandwidth + "=0 TB/s", "must be > 0"}},
    {"NegativeLatency",
     tinySet("platform.host.link_latency=-1 us"),
     {},
     2,
     {"error[out-of-range]: --set platform.host.link_latency=-1 us", "must be >= 0 s"}},
    {"NegativeDramTiming",
     tinySet(kHbm + "timing.t_rcd=-1 ns"),
     {},
     2,
     {"error[out-of-range]:", "'platform.chip_types[0].hbm.timing.t_rcd'", "must be > 0 s"}},
    {"QuantityWithTwoDecimalPoints",
     tinySet(kBandwidth + "=1.2.3 TB/s"),
     {},
     2,
     {"error[bad-unit]: --set " + kBandwidth + "=1.2.3 TB/s", "'1.2.3 TB/s'"}},
    {"QuantityNan",
     tinySet(kBandwidth + "=nan TB/s"),
     {},
     2,
     {"error[bad-unit]:", "'nan TB/s' is not a finite number"}},
    {"QuantityNanWithoutUnit",
     tinySet(kBandwidth + "=nan"),
     {},
     2,
     {"error[bad-unit]:", "'nan' is not a finite number"}},
    {"QuantityInf",
     tinySet(kBandwidth + "=inf TB/s"),
     {},
     2,
     {"error[bad-unit]:", "'inf TB/s' is not a finite number"}},
    {"QuantityOverflowingExponent",
     tinySet(kBandwidth + "=1e999 TB/s"),
     {},
     2,
     {"error[bad-unit]:", "'1e999 TB/s' is not a finite number"}},
    {"QuantityInHex",
     tinySet(kBandwidth + "=0x10 TB/s"),
     {},
     2,
     {"error[bad-unit]:", "'0x10 TB/s' is not a decimal number"}},
    {"QuantityUnknownPrefix", tinySet(kBandwidth + "=5 XB/s"), {}, 2, {"error[bad-unit]:", "unknown unit 'XB'"}},
    {"QuantityLowerCasePrefix", tinySet(kBandwidth + "=5 tb/s"), {}, 2, {"error[bad-unit]:", "unknown unit 'tb'"}},
    {"QuantityTwoPrefixes", tinySet(kBandwidth + "=5 kTB/s"), {}, 2, {"error[bad-unit]:", "unknown unit 'kTB'"}},
    {"QuantityUnitAlone", tinySet(kBandwidth + "=TB/s"), {}, 2, {"error[bad-unit]:", "does not start with a number"}},
    {"QuantityEmpty",
     tinySet(kBandwidth + "="),
     {},
     2,
     {"error[wrong-type]: --set " + kBandwidth + "=:", "got nothing"}},
    {"QuantityTrailingWords", tinySet(kBandwidth + "=5 TB/s extra"), {}, 2, {"error[bad-unit]:", "'5 TB/s extra'"}},

    // ---- integers -------------------------------------------------------------------------------
    {"IntegerInHex", tinySet(kChannels + "=0x10"), {}, 2, {"error[wrong-type]:", "expects an integer, got '0x10'"}},
    {"IntegerBeyond64Bits",
     tinySet(kChannels + "=18446744073709551616"),
     {},
     2,
     {"error[out-of-range]: --set " + kChannels + "=18446744073709551616", "does not fit an integer"}},
    {"IntegerFraction", tinySet(kChannels + "=1.5"), {}, 2, {"error[wrong-type]:", "got '1.5'"}},
    {"IntegerWithExponent", tinySet(kChannels + "=1e3"), {}, 2, {"error[wrong-type]:", "got '1e3'"}},
    {"IntegerGivenABoolean", tinySet(kChannels + "=true"), {}, 2, {"error[wrong-type]:", "got 'true'"}},
    {"IntegerGivenAList", tinySet(kChannels + "=[1,2]"), {}, 2, {"error[wrong-type]:", "got a list"}},
    {"IntegerGivenAMap", tinySet(kChannels + "={a: 1}"), {}, 2, {"error[wrong-type]:", "got a map"}},
    {"IntegerGivenNull", tinySet(kChannels + "=~"), {}, 2, {"error[wrong-type]:", "got nothing"}},
    {"TensorParallelZero",
     tinySet("platform.placement.tp=0"),
     {},
     2,
     {"error[out-of-range]: --set platform.placement.tp=0", "must be >= 1"}},
    {"NegativeConcurrency",
     serving({"--set", "scenario.load.concurrency=-3"}),
     {},
     2,
     {"error[out-of-range]: --set scenario.load.concurrency=-3", "must be >= 0"}},
    {"ConcurrencyBeyond64Bits",
     serving({"--set", "scenario.load.concurrency=99999999999999999999999"}),
     {},
     2,
     {"error[out-of-range]:", "'scenario.load.concurrency'", "does not fit an integer"}},
    {"ZeroConcurrency",
     serving({"--set", "scenario.load.concurrency=0"}),
     {},
     2,
     {"error[out-of-range]: --set scenario.load.concurrency=0",
      "'scenario.load.concurrency' = '0' is out of range (at least 1)"}},
    {"LayersBeyond64Bits",
     tinySet("model.layers=99999999999999999999"),
     {},
     2,
     {"error[out-of-range]: --set model.layers=", "does not fit an integer"}},
    {"NegativeContextLength",
     tinySet("scenario.context_length=-1"),
     {},
     2,
     {"error[out-of-range]: --set scenario.context_length=-1"}},
    {"BatchAboveItsRange", tinySet("scenario.batch=65537"), {}, 2, {"error[out-of-range]: --set scenario.batch=65537"}},

    // ---- --set ----------------------------------------------------------------------------------
    {"SetWithoutEquals",
     tinySet("platform.placement.tp"),
     {},
     2,
     {"error[bad-override]: --set platform.placement.tp:", "expected --set root.key=value"}},
    {"SetWithoutKey", tinySet("=5"), {}, 2, {"error[bad-override]: --set =5"}},
    {"SetEmptyKeySegment",
     tinySet("platform..placement.tp=1"),
     {},
     2,
     {"error[bad-override]:", "'platform..placement.tp' has an empty key segment"}},
    {"SetTrailingDot", tinySet("platform.placement.=1"), {}, 2, {"error[bad-override]:", "empty key segment"}},
    {"SetLeadingDot",
     tinySet(".placement.tp=1"),
     {},
     2,
     {"error[bad-override]: --set .placement.tp=1", "must start with one of: platform. model. scenario"}},
    {"SetRootOnly", tinySet("platform=1"), {}, 2, {"error[bad-override]: --set platform=1", "must start with one of"}},
    {"SetIndexNotANumber",
     tinySet("platform.chip_types[x].hbm.channels=1"),
     {},
     2,
     {"error[bad-override]:", "'chip_types[x]' is not a key or key[index]"}},
    {"SetNegativeIndex",
     tinySet("platform.chip_types[-1].hbm.channels=1"),
     {},
     2,
     {"error[bad-override]:", "chip_types[-1]"}},
    {"SetIndexPastTheEnd",
     tinySet("platform.chip_types[5].hbm.channels=1"),
     {},
     2,
     {"error[bad-override]:", "'platform.chip_types' is a list of 1 entries"}},
    {"SetIndexBeyond64Bits",
     tinySet("platform.chip_types[99999999999999999999].hbm.channels=1"),
     {},
     2,
     {"error[bad-override]:", "is not a key or key[index]"}},
    {"SetUnclosedIndex",
     tinySet("platform.chip_types[0.hbm.channels=1"),
     {},
     2,
     {"error[bad-override]:", "'chip_types[0'"}},
    {"SetIndexIntoAMap",
     tinySet("platform.host[0].memory=1 TiB"),
     {},
     2,
     {"error[bad-override]:", "'platform.host' is a map"}},
    {"SetKeyUnderAList",
     tinySet("platform.chip_types.hbm.channels=1"),
     {},
     2,
     {"error[bad-override]:", "its parent is a list"}},
    {"SetKeyUnderAScalar",
     tinySet("model.layers.x=1"),
     {},
     2,
     {"error[bad-override]:", "its parent is '4', not a map"}},
    {"SetUnknownModelKey",
     tinySet("model.familly=dense"),
     {},
     2,
     {"error[unknown-key]: --set model.familly=dense", "did you mean 'family'"}},
    {"SetConflictingModelValues",
     tiny({"--set", "model.layers=2", "--set", "model.layers=3"}),
     {},
     2,
     {"error[conflicting-override]: --set model.layers=3", "'2' and '3'"}},
    {"SetValueNotYaml", tinySet("scenario.load={impl:"), {}, 2, {"error[bad-override]:", "not valid YAML"}},
    {"SetEmptyChipTypeList", tinySet("platform.chip_types=[]"), {}, 2, {"error[wrong-type]:", "non-empty list"}},
    {"SetChipGroupOfAnUnknownType",
     tinySet("platform.chips[0].type=nosuch"),
     {},
     2,
     {"error[invalid-config]: --set platform.chips[0].type=nosuch", "names no chip type"}},
    {"SetUnknownEnumValue",
     tinySet("scenario.kind=prefill"),
     {},
     2,
     {"error[out-of-range]: --set scenario.kind=prefill", "not one of: decode_step, serving"}},
    {"SetDecodeStepKeyOnServing",
     serving({"--set", "scenario.batch=4"}),
     {},
     2,
     {"error[invalid-config]: --set scenario.batch=4", "is a decode_step key"}},
    {"SetPoissonKeyOnClosedLoop",
     serving({"--set", "scenario.load.rate_per_s=5"}),
     {},
     2,
     {"error[invalid-config]: --set scenario.load.rate_per_s=5", "is a poisson key"}},
    {"SetRatioAboveOne",
     serving({"--set", "scenario.random_range_ratio=1.5"}),
     {},
     2,
     {"error[out-of-range]: --set scenario.random_range_ratio=1.5"}},
    {"SetTraceRoutingWithoutAFile",
     serving({"--set", "scenario.routing.impl=trace"}),
     {},
     2,
     {"error[missing-key]:", "'scenario.routing.file'"}},
    {"SetUnknownSoftwareStack",
     serving({"--set", "scenario.software_stack=nonexistent-stack"}),
     {},
     2,
     {"error[unknown-name]:", "scenario.software_stack", "'nonexistent-stack'"}},
    {"SetZeroTurns",
     serving({"--set", "scenario.multi_turn.turns=0"}),
     {},
     2,
     {"error[out-of-range]: --set scenario.multi_turn.turns=0"}},

    // ---- placement and fit ----------------------------------------------------------------------
    {"ParallelismNotMatchingTheChips",
     tinySet("platform.placement.tp=2"),
     {},
     2,
     {"error[invalid-config]: --set platform.placement.tp=2", "tp 2 x pp 1 x dp 1 = 2 chips"}},
    {"ExpertParallelismNotDividingTheStage",
     run({"-p", "jalapeno-8", "-m", "tiny-moe", "--set", "platform.placement.ep=3"}),
     {},
     2,
     {"error[invalid-config]: --set platform.placement.ep=3", "ep 3 must divide"}},
    {"KvHeadsNotDividingQueryHeads",
     tinySet("model.kv_heads=3"),
     {},
     2,
     {"error[invalid-config]: --set model.kv_heads=3", "q_heads must be a multiple of kv_heads"}},
    {"PrefillAndDecodeChipsOverlap",
     tinySet("platform.placement.disaggregation={prefill_chips: [0], decode_chips: [0]}"),
     {},
     2,
     {"error[invalid-config]:", "'platform.placement.disaggregation.decode_chips[0]'", "disjoint"}},
    {"ModelDoesNotFitASmallHbm",
     tinySet(kHbm + "capacity=100 MB"),
     {},
     2,
     {"error[does-not-fit]:", "model 'tiny-dense'", "> HBM capacity 100 MB"}},
    {"WeightTileDoesNotFitTheSram",
     tinySet("platform.chip_types[0].sram.capacity=1 KiB"),
     {},
     2,
     {"error[does-not-fit]:", "sram.capacity", "smaller than one weight tile"}},

    // ---- options --------------------------------------------------------------------------------
    {"CommandInCapitals", {"RUN"}, {}, 2, {"error[usage]: unknown command 'RUN'"}},
    {"OptionInsteadOfACommand", {"-x"}, {}, 2, {"error[usage]: unknown command '-x'"}},
    {"OutWithoutItsArgument", {"run", "--out"}, {}, 2, {"error[usage]:", "'--out' is missing"}},
    // boost loops for ever printing an error whose word holds one of its placeholders (fuzzer).
    {"AmbiguousOptionWithAPlaceholderInItsValue",
     {"run", "--s=pl%original_token%"},
     {},
     2,
     {"error[usage]: argument '--s=pl%original_token%' holds '%original_token%'"}},
    {"PlaceholderInAValue", {"run", "--seed", "%value%"}, {}, 2, {"error[usage]:", "holds '%value%'"}},
    {"SetWithoutItsArgument", {"run", "--set"}, {}, 2, {"error[usage]:", "'--set' is missing"}},
    {"SeedNotANumber", tiny({"--seed", "abc"}), {}, 2, {"error[usage]:", "--seed", "'abc'"}},
    {"SeedNegative", tiny({"--seed", "-1"}), {}, 2, {"error[usage]:", "--seed", "'-1'"}},
    {"SeedBeyond64Bits",
     tiny({"--seed", "99999999999999999999999"}),
     {},
     2,
     {"error[usage]:", "--seed", "'99999999999999999999999'"}},
    {"SeedFraction", tiny({"--seed", "1.5"}), {}, 2, {"error[usage]:", "--seed", "'1.5'"}},
    {"TimingEmpty", tiny({"--timing", ""}), {}, 2, {"error[usage]: --timing must be lt or at, not ''"}},
    {"QuietTwice", tiny({"-q", "-q"}), {}, 2, {"error[usage]:", "'--quiet' cannot be specified more than once"}},
    {"FlagGivenAValue", tiny({"--quiet=yes"}), {}, 2, {"error[usage]:", "'--quiet' does not take any arguments"}},
    {"PlatformTwice",
     tiny({"-p", "jalapeno", "-p", "jalapeno-8"}),
     {},
     2,
     {"error[usage]:", "'--platform' cannot be specified more than once"}},
    {"UnknownModelName",
     run({"-m", "tiny-dens"}),
     {},
     2,
     {"error[unknown-name]: --model tiny-dens", "did you mean 'tiny-dense'"}},
    {"UnknownScenarioName",
     tiny({"-s", "decod-step"}),
     {},
     2,
     {"error[unknown-name]: --scenario decod-step", "did you mean 'decode-step'"}},
    {"EmptyPlatformName",
     tiny({"-p", ""}),
     {},
     2,
     {"error[unknown-name]: --platform :", "no shipped platform named ''"}},
    {"UnknownKernelStackSaysItsOptionOnce",
     {"kernels", "h200-kernels", "--software-stack", "trtllm-h20", "--out", "{dir}/k"},
     {},
     2,
     {"error[unknown-name]: --software-stack trtllm-h20: no shipped software-stack profile named 'trtllm-h20'"}},
    {"UnknownDatasetIsNamedAsThePositionalItIs",
     {"kernels", "h200-kernel", "--out", "{dir}/k"},
     {},
     2,
     {"error[unknown-name]: DATASET h200-kernel: no shipped kernel dataset named", "did you mean 'h200-kernels'"}},
    {"MissingDatasetFileSaysWhereItCameFrom",
     {"validate", "{dir}/none.yaml", "--out", "{dir}/v"},
     {},
     2,
     {"error[file-not-found]: {dir}/none.yaml: dataset file not found (from DATASET {dir}/none.yaml)"}},
    {"SwappedLettersSuggestEveryKeyEquallyClose",
     tinySet(kHbm + "timing.t_rdc=1 ns"),
     {},
     2,
     {"unknown key 't_rdc'", "did you mean 't_rcd' or 't_rfc'?"}},
    {"HalfAByteIsNoSize",
     tinySet(kHbm + "capacity=4 b"),
     {},
     2,
     {"capacity' = '4 b' is implausible: a size must lie within 1 B"}},
    {"EnergyTakesAnArticleOfItsOwn",
     tinySet("platform.chip_types[0].power.uncore=5 J"),
     {},
     2,
     {"is an energy, expected a power"}},
    {"TraceStartNotATime",
     tiny({"--trace", "{dir}/t.json", "--trace-start", "abc"}),
     {},
     2,
     {"error[bad-unit]: --trace-start abc", "expected a time"}},
    {"TraceDurationIsASize",
     tiny({"--trace", "{dir}/t.json", "--trace-duration", "5 GB"}),
     {},
     2,
     {"error[bad-unit]: --trace-duration 5 GB", "is a size, expected a time"}},
    {"TraceDurationNegative",
     tiny({"--trace", "{dir}/t.json", "--trace-duration", "-1 ms"}),
     {},
     2,
     {"error[out-of-range]:", "--trace-duration -1 ms", "positive duration"}},
    {"VcdIntervalZero",
     tiny({"--vcd", "{dir}/w.vcd", "--vcd-interval", "0 s"}),
     {},
     2,
     {"error[out-of-range]: --vcd-interval 0 s", "positive interval"}},
    {"TraceIsADirectory",
     tiny({"--trace", "{dir}/sub"}),
     {},
     2,
     {"error[output-not-writable]: --trace:", "'{dir}/sub' is a directory"},
     {"sub"}},
    {"OutIsARegularFile",
     {"run", "-m", "tiny-dense", "--out", "{dir}/a-file"},
     {{"a-file", "not a directory\n"}},
     2,
     {"error[output-not-writable]: --out {dir}/a-file:", "Not a directory"}},
    {"OutUnderProc",
     {"run", "-m", "tiny-dense", "--out", "/proc/version/x"},
     {},
     2,
     {"error[output-not-writable]: --out /proc/version/x"}},
    {"OutEmpty", {"run", "-m", "tiny-dense", "--out", ""}, {}, 2, {"error[output-not-writable]: --out :"}},

    // ---- sweep ----------------------------------------------------------------------------------
    {"SweepVaryWithoutEquals",
     sweep({"--vary", "chip.hbm.bandwidth"}),
     {},
     2,
     {"error[bad-override]: --vary chip.hbm.bandwidth:", "expected KEY=VALUE1,VALUE2"}},
    {"SweepVaryWithoutKey", sweep({"--vary", "=1,2"}), {}, 2, {"error[bad-override]: --vary =1,2"}},
    {"SweepVaryWithoutValues",
     sweep({"--vary", "chip.hbm.bandwidth="}),
     {},
     2,
     {"error[bad-override]:", "no values given"}},
    {"SweepVaryEmptyValue",
     sweep({"--vary", "chip.hbm.bandwidth=1 TB/s,,2 TB/s"}),
     {},
     2,
     {"error[bad-override]:", "an empty value in the list"}},
    {"SweepVaryDuplicateValue",
     sweep({"--vary", "chip.hbm.bandwidth=1 TB/s,1 TB/s"}),
     {},
     2,
     {"error[bad-override]:", "value '1 TB/s' is listed twice"}},
    {"SweepVaryUnknownRoot",
     sweep({"--vary", "foo.bar=1,2"}),
     {},
     2,
     {"error[bad-override]: --vary foo.bar=1,2", "not a key"}},
    {"SweepVaryUnknownChipKey",
     sweep({"-c", "1", "--vary", "chip.hbm.bandwdth=1 TB/s,2 TB/s"}),
     {},
     2,
     {"error[unknown-key]:", "'bandwdth'", "did you mean 'bandwidth'"}},
    {"SweepVarySameKeyTwice",
     sweep({"--vary", "chip.hbm.bandwidth=1 TB/s", "--vary", "chip.hbm.bandwidth=2 TB/s"}),
     {},
     2,
     {"error[conflicting-override]: --vary chip.hbm.bandwidth", "varied twice"}},
    {"SweepVaryOutOfRangeValue",
     sweep({"-c", "1", "--vary", "model.layers=0,4"}),
     {},
     2,
     {"error[out-of-range]: --set model.layers=0", "(sweep point"}},
    {"SweepSetConflictsWithAnAxis",
     sweep({"-c", "1", "--vary", "scenario.output_tokens=8,16"}),
     {},
     2,
     {"error[conflicting-override]:", "'scenario.output_tokens'"}},
    {"SweepDuplicateConcurrency", sweep({"-c", "1,1"}), {}, 2, {"error[bad-override]:", "value '1' is listed twice"}},
    {"SweepEmptyConcurrencyList", sweep({"-c", ""}), {}, 2, {"error[bad-override]:", "no values given"}},
    {"SweepNegativeConcurrency",
     sweep({"-c", "-1"}),
     {},
     2,
     {"error[out-of-range]:", "'scenario.load.concurrency' = -1", "(sweep point"}},
    {"SweepZeroConcurrency", sweep({"-c", "0"}), {}, 2, {"error[out-of-range]:", "concurrency=0"}},
    {"SweepConcurrencyNoneInAList", sweep({"-c", "none,1"}), {}, 2, {"error[wrong-type]:", "got 'none'"}},
    {"SweepJobsNotANumber", sweep({"-j", "abc"}), {}, 2, {"error[usage]:", "--jobs", "'abc'"}},
    {"SweepJobsNegative", sweep({"-c", "1", "-j", "-1"}), {}, 2, {"error[usage]:", "--jobs", "'-1'"}},
    {"SweepPointNotANumber", sweep({"--point", "abc"}), {}, 2, {"error[usage]:", "--point", "'abc'"}},
    {"SweepPointWithoutASweep",
     sweep({"--point", "0"}),
     {},
     2,
     {"error[file-not-found]: --out {dir}/sw", "sweep.json"}},
    {"SweepIsoInteractivityNegative",
     sweep({"--iso-interactivity", "-5"}),
     {},
     2,
     {"error[usage]: --iso-interactivity must be positive"}},
    {"SweepUnknownPlatform", sweep({"-p", "nosuch"}), {}, 2, {"error[unknown-name]: --platform nosuch"}},
    {"SweepOutIsARegularFile",
     sweepTo("{dir}/a-file", {"-c", "1"}),
     {{"a-file", "x\n"}},
     2,
     {"error[output-not-writable]: --out {dir}/a-file"}},

    // ---- merge and report -----------------------------------------------------------------------
    {"MergeOfNothing", {"merge"}, {}, 2, {"error[usage]: give at least one"}},
    {"MergeOfAMissingFolder", {"merge", "{dir}/nowhere"}, {}, 2, {"error[file-not-found]: {dir}/nowhere"}},
    {"MergeOfAnEmptyFolder",
     {"merge", "{dir}/empty"},
     {},
     2,
     {"error[file-not-found]: {dir}/empty", "no finished runs"},
     {"empty"}},
    {"MergeOfAFileThatIsNotJson",
     {"merge", "{dir}/r.json"},
     {{"r.json", "hello\n"}},
     2,
     {"error[invalid-config]: {dir}/r.json", "not JSON"}},
    {"MergeOfAnEmptyFile",
     {"merge", "{dir}/r.json"},
     {{"r.json", ""}},
     2,
     {"error[invalid-config]: {dir}/r.json", "not JSON"}},
    {"MergeOfTruncatedJson",
     {"merge", "{dir}/r.json"},
     {{"r.json", "{\"schema_version\": 3"}},
     2,
     {"error[invalid-config]: {dir}/r.json", "not JSON"}},
    {"MergeOfAJsonObjectThatIsNoReport",
     {"merge", "{dir}/r.json"},
     {{"r.json", "{}"}},
     2,
     {"error[invalid-config]: {dir}/r.json", "not a complete scoville report"}},
    {"MergeOfAJsonArray",
     {"merge", "{dir}/r.json"},
     {{"r.json", "[]"}},
     2,
     {"error[invalid-config]: {dir}/r.json", "not a complete scoville report"}},
    {"MergeOfARunFolderWithAForeignReport",
     {"merge", "{dir}/runs"},
     {{"runs/a/report.json", "{\"schema_version\": 99}"}},
     2,
     {"error[invalid-config]: {dir}/runs/a/report.json", "not a complete scoville report"}},
    {"ReportOfNothing", {"report"}, {}, 2, {"error[usage]: give at least one"}},
    {"ReportOfAMissingFolder",
     {"report", "{dir}/nowhere", "--out", "{dir}/r"},
     {},
     2,
     {"error[file-not-found]: {dir}/nowhere"}},
    {"ReportOfAnEmptyFolder",
     {"report", "{dir}/empty", "--out", "{dir}/r"},
     {},
     2,
     {"error[file-not-found]: {dir}/empty", "no finished runs"},
     {"empty"}},

    // ---- validate, kernels, calibrate-power ------------------------------------------------------
    {"ValidateMetricUnitUnknown",
     {"validate", "{dir}/v.yaml", "--out", "{dir}/v"},
     {{"v.yaml", kValidation, {{"unit: us", "unit: furlongs"}}}},
     2,
     {"error[bad-unit]: {dir}/v.yaml:16:35", "'validation.points[0].metrics[0].unit' = 'furlongs'"}},
    {"ValidateMetricNameMisspelt",
     {"validate", "{dir}/v.yaml", "--out", "{dir}/v"},
     {{"v.yaml", kValidation, {{"name: tpot", "name: tpott"}}}},
     2,
     {"error[out-of-range]: {dir}/v.yaml:16:12", "did you mean 'tpot'"}},
    {"ValidateDuplicatePointId",
     {"validate", "{dir}/v.yaml", "--out", "{dir}/v"},
     {{"v.yaml", kValidation + kValidation.substr(kValidation.find("- id: a"))}},
     2,
     {"error[invalid-config]: {dir}/v.yaml:17:7", "point id 'a' is used twice"}},
    {"ValidateNoPoints",
     {"validate", "{dir}/v.yaml", "--out", "{dir}/v"},
     {{"v.yaml", "name: t\ndescription: test\npoints: []\n"}},
     2,
     {"error[wrong-type]: {dir}/v.yaml:3:9", "non-empty list"}},
    {"ValidateNegativeConcurrency",
     {"validate", "{dir}/v.yaml", "--out", "{dir}/v"},
     {{"v.yaml", kValidation, {{"concurrency: 1", "concurrency: -4"}}}},
     2,
     {"error[out-of-range]: {dir}/v.yaml:12:16", "'validation.points[0].concurrency' = -4"}},
    {"ValidateEmptyFile",
     {"validate", "{dir}/v.yaml"},
     {{"v.yaml", ""}},
     2,
     {"error[empty-file]: {dir}/v.yaml", "expected a validation map"}},
    {"ValidateTwoDatasets",
     {"validate", "{dir}/v.yaml", "{dir}/w.yaml"},
     {{"v.yaml", kValidation}},
     2,
     {"error[usage]: unexpected argument '{dir}/w.yaml'"}},
    {"ValidateZeroJobs",
     {"validate", "{dir}/v.yaml", "-j", "0", "--out", "{dir}/v"},
     {{"v.yaml", kValidation}},
     2,
     {"error[out-of-range]: --jobs:", "at least 1"}},
    {"ValidateUnknownShippedDataset",
     {"validate", "nosuch-dataset"},
     {},
     2,
     {"error[unknown-name]:", "'nosuch-dataset'"}},
    {"ValidateGivenAKernelDataset",
     {"validate", "h200-kernels", "--out", "{dir}/v"},
     {},
     2,
     {"error[unknown-key]: {src}/workloads/validation/h200-kernels.yaml:", "in 'validation'"}},
    {"ValidateOutIsARegularFile",
     {"validate", "{dir}/v.yaml", "--out", "{dir}/a-file"},
     {{"v.yaml", kValidation}, {"a-file", "x\n"}},
     2,
     {"error[output-not-writable]: --out {dir}/a-file"}},
    {"KernelsEmptyDataset",
     {"kernels", "{dir}/k.yaml", "--out", "{dir}/k"},
     {{"k.yaml", ""}},
     2,
     {"error[empty-file]: {dir}/k.yaml", "expected a kernels map"}},
    {"KernelsTimingXyz",
     {"kernels", "h200-kernels", "--timing", "xyz", "--out", "{dir}/k"},
     {},
     2,
     {"error[usage]: --timing must be lt or at, not 'xyz'"}},
    {"KernelsUnknownSoftwareStack",
     {"kernels", "h200-kernels", "--software-stack", "nosuch", "--out", "{dir}/k"},
     {},
     2,
     {"error[unknown-name]:", "'nosuch'"}},
    {"KernelsOverrideKeyMisspelt",
     {"kernels", "h200-kernels", "--set", kHbm + "bandwdth=1 TB/s", "--out", "{dir}/k"},
     {},
     2,
     {"error[unknown-key]: --set " + kHbm + "bandwdth=1 TB/s", "did you mean 'bandwidth'"}},
    {"CalibratePowerMissingDataset",
     {"calibrate-power", "{dir}/nope.yaml", "--out", "{dir}/c", "--no-plot"},
     {},
     2,
     {"error[file-not-found]: {dir}/nope.yaml"}},
    {"CalibratePowerUnknownPlatform",
     {"calibrate-power", "h200-kernels", "-p", "nosuch", "--out", "{dir}/c", "--no-plot"},
     {},
     2,
     {"error[unknown-name]: --platform nosuch"}},

    // ---- memory ---------------------------------------------------------------------------------
    {"MemoryWithoutAPart", {"memory"}, {}, 2, {"error[usage]: give a memory PART"}},
    {"MemoryPartMisspelt", {"memory", "hbm2-8c"}, {}, 2, {"error[unknown-name]:", "did you mean 'hbm2-8ch'"}},
    {"MemoryTwoParts", memory({"h100-hbm3"}), {}, 2, {"error[usage]: unexpected argument 'h100-hbm3'"}},
    {"MemoryEmptyPartFile", {"memory", "{dir}/e.yaml"}, {{"e.yaml", ""}}, 2, {"error[empty-file]: {dir}/e.yaml"}},
    {"MemoryRequestSizeZero",
     memory({"--request-size", "0"}),
     {},
     2,
     {"error[usage]: --request-size must be between 1"}},
    {"MemoryRequestSizeNegative",
     memory({"--request-size", "-64"}),
     {},
     2,
     {"error[usage]:", "--request-size", "'-64'"}},
    {"MemoryRequestsNegative",
     {"memory", "hbm2-8ch", "--requests", "-5"},
     {},
     2,
     {"error[usage]:", "--requests", "'-5'"}},
    {"MemoryStrideNegative",
     memory({"--pattern", "strided", "--stride", "-1"}),
     {},
     2,
     {"error[usage]:", "--stride", "'-1'"}},
    {"MemoryRequestSizeNotANumber",
     memory({"--request-size", "abc"}),
     {},
     2,
     {"error[usage]:", "--request-size", "'abc'"}},
    {"MemoryStrideZero",
     memory({"--pattern", "strided", "--stride", "0"}),
     {},
     2,
     {"error[usage]: --stride must be at least"}},
    {"MemoryRequestsZero",
     {"memory", "hbm2-8ch", "--requests", "0"},
     {},
     2,
     {"error[usage]: --requests must be at least 1"}},
    {"MemoryReadRatioNegative",
     memory({"--read-ratio", "-0.1"}),
     {},
     2,
     {"error[usage]: --read-ratio must be within [0, 1]"}},
    {"MemoryReadRatioNan",
     memory({"--read-ratio", "nan"}),
     {},
     2,
     {"error[usage]: --read-ratio must be within [0, 1]"}},
    {"MemoryOutstandingTooMany",
     memory({"--outstanding", "65537"}),
     {},
     2,
     {"error[usage]: --outstanding must be between"}},
    {"MemoryOutstandingNegative",
     memory({"--outstanding", "-1"}),
     {},
     2,
     {"error[usage]: --outstanding must be between"}},
    {"MemoryTimingXyz", memory({"--timing", "xyz"}), {}, 2, {"error[usage]: --timing must be lt or at, not 'xyz'"}},
    {"MemorySeedNotANumber", memory({"--seed", "abc"}), {}, 2, {"error[usage]:", "--seed", "'abc'"}},
    {"MemorySetUnderAnotherRoot",
     memory({"--set", "platform.hbm.channels=4"}),
     {},
     2,
     {"error[bad-override]: --set platform.hbm.channels=4", "must start with one of: memory"}},
    {"MemorySetZeroChannels",
     memory({"--set", "memory.hbm.channels=0"}),
     {},
     2,
     {"error[out-of-range]: --set memory.hbm.channels=0"}},
    {"MemoryTraceWithoutTracePattern",
     memory({"--trace", "{dir}/t.csv"}),
     {},
     2,
     {"error[usage]: --trace FILE goes with --pattern trace"}},
    {"MemoryTraceHeaderOnly",
     {"memory", "hbm2-8ch", "--pattern", "trace", "--trace", "{dir}/t.csv"},
     {{"t.csv", "time_ns,address,bytes,op\n"}},
     2,
     {"error[empty-file]: {dir}/t.csv"}},
    {"MemoryTraceShortLine",
     {"memory", "hbm2-8ch", "--pattern", "trace", "--trace", "{dir}/t.csv"},
     {{"t.csv", "0,0,64,R\n5,64\n"}},
     2,
     {"error[out-of-range]: {dir}/t.csv:2", "expected 4 columns"}},
    {"MemoryTraceNegativeTime",
     {"memory", "hbm2-8ch", "--pattern", "trace", "--trace", "{dir}/t.csv"},
     {{"t.csv", "0,0,64,R\n-5,64,64,R\n"}},
     2,
     {"error[out-of-range]: {dir}/t.csv:2", "'time_ns'"}},
    {"MemoryTraceTimeGoesBack",
     {"memory", "hbm2-8ch", "--pattern", "trace", "--trace", "{dir}/t.csv"},
     {{"t.csv", "10,0,64,R\n5,64,64,R\n"}},
     2,
     {"error[out-of-range]: {dir}/t.csv:2", "before the previous line"}},
    {"MemoryTraceZeroBytes",
     {"memory", "hbm2-8ch", "--pattern", "trace", "--trace", "{dir}/t.csv"},
     {{"t.csv", "0,0,0,R\n"}},
     2,
     {"error[out-of-range]: {dir}/t.csv:1", "'bytes' must be at least 1"}},
    {"MemoryTraceAddressNotANumber",
     {"memory", "hbm2-8ch", "--pattern", "trace", "--trace", "{dir}/t.csv"},
     {{"t.csv", "0,abc,64,R\n"}},
     2,
     {"error[out-of-range]: {dir}/t.csv:1", "'address'"}},
    {"MemoryOutIsARegularFile",
     memory({"--out", "{dir}/a-file"}),
     {{"a-file", "x\n"}},
     2,
     {"error[output-not-writable]: --out {dir}/a-file"}},

    // ---- platform show, config-docs -------------------------------------------------------------
    {"PlatformShowUnknownName", {"platform", "show", "nosuch"}, {}, 2, {"error[unknown-name]: --platform nosuch"}},
    {"PlatformShowTwoPlatforms",
     {"platform", "show", "jalapeno", "jalapeno-8"},
     {},
     2,
     {"error[usage]: too many positional options"}},
    {"PlatformShowNameAndOption",
     {"platform", "show", "jalapeno", "-p", "jalapeno-8"},
     {},
     2,
     {"error[usage]:", "'--platform' cannot be specified more than once"}},
    {"PlatformUnknownSubcommand",
     {"platform", "list"},
     {},
     2,
     {"error[usage]: 'scoville platform' needs a subcommand: show"}},
    {"PlatformShowModelOverride",
     {"platform", "show", "--set", "model.layers=3"},
     {},
     2,
     {"error[bad-override]: --set model.layers=3", "must start with one of: platform"}},
    {"PlatformShowFileWithATypo",
     {"platform", "show", "{dir}/p.yaml"},
     {platform("chips_per_host", "chips_per_hots")},
     2,
     {"error[unknown-key]: {dir}/p.yaml:11:3", "did you mean 'chips_per_host'"}},
    {"PlatformShowMissingFile",
     {"platform", "show", "{dir}/nope.yaml"},
     {},
     2,
     {"error[file-not-found]: {dir}/nope.yaml"}},
    {"ConfigDocsUnknownOption", {"config-docs", "--json"}, {}, 2, {"error[usage]: unrecognised option '--json'"}},
};

// Wrong behaviour found while writing the table: each row states the behaviour that is right.
const std::vector<Case> kFixedBugs = {
    // Was exit 0: the stray word is ignored and the run goes ahead (validate and memory refuse theirs).
    {"RunStrayPositional", run({"-m", "tiny-dense", "extra"}), {}, 2, {"error[usage]:", "extra"}},
    // Was exit 0: the stray word is ignored.
    {"ConfigDocsStrayPositional", {"config-docs", "extra"}, {}, 2, {"error[usage]:", "extra"}},
    // Was exit 0: -1 runs (-j 0 is refused, and sweep refuses -j -1).
    {"ValidateNegativeJobs",
     {"validate", "{dir}/v.yaml", "-j", "-1", "--out", "{dir}/v"},
     {{"v.yaml", kValidation}},
     2,
     {"--jobs"}},
    // Was exit 0: two identical points with the same label.
    {"SweepSamePlatformTwice",
     sweep({"-c", "1", "-p", "jalapeno", "-p", "jalapeno", "--dry-run"}),
     {},
     2,
     {"jalapeno"}},
    // Was exit 0: '1 TB/s' and '1000 GB/s' are the same value, two identical points.
    {"SweepVaryEqualQuantities",
     sweep({"-c", "1", "--vary", "chip.hbm.bandwidth=1 TB/s,1000 GB/s", "--dry-run"}),
     {},
     2,
     {"error[bad-override]:", "listed twice"}},
    // Was: the message named neither the key nor the --set: "error[invalid-config]: tensor parallelism
    // tp = 8 does not split model 'tiny-dense': ...".
    {"TensorParallelismNotDividingHeads",
     run({"-p", "jalapeno-8", "-m", "tiny-dense", "--set", "model.q_heads=6", "--set", "platform.placement.tp=8"}),
     {},
     2,
     {"error[invalid-config]:", "platform.placement.tp"}},
    // Was the same: "error[invalid-config]: pipeline parallelism pp = 8 leaves stages without layers".
    {"PipelineStagesWithoutLayers",
     run({"-p", "jalapeno-8", "-m", "tiny-dense", "--set", "platform.placement.tp=1", "--set",
          "platform.placement.pp=8"}),
     {},
     2,
     {"error[invalid-config]:", "platform.placement.pp"}},
    // Was: the message blamed --out: "error[output-not-writable]: --out /proc/version: cannot create
    // output directory: Not a directory".
    {"TraceUnderAFileNamesTrace",
     tiny({"--trace", "/proc/version/x.json"}),
     {},
     2,
     {"error[output-not-writable]: --trace"}},
    // Was exit 2 with an empty stderr: the usage goes to stdout with no error line.
    {"ValidateWithoutADataset", {"validate"}, {}, 2, {"error[usage]:"}},
    {"KernelsWithoutADataset", {"kernels"}, {}, 2, {"error[usage]:"}},
    {"CalibratePowerWithoutADataset", {"calibrate-power"}, {}, 2, {"error[usage]:"}},
    // Was: an empty --only selected every point (kernels: exit 0 after running all; validate: runs the
    // whole dataset).
    {"KernelsEmptyOnly", {"kernels", "h200-kernels", "--only", "", "--out", "{dir}/k"}, {}, 2, {"--only"}},
};

std::string substitute(std::string text, const std::string& dir) {
  const std::pair<std::string, std::string> placeholders[] = {{"{dir}", dir}, {"{src}", SCOVILLE_SOURCE_DIR}};
  for (const auto& [from, to] : placeholders) {
    for (std::size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
      text.replace(at, from.size(), to);
    }
  }
  return text;
}

std::set<std::string> regularFiles(const std::string& root) {
  std::set<std::string> files;
  for (const auto& entry : fs::recursive_directory_iterator(root)) {
    if (entry.is_regular_file()) files.insert(entry.path().string());
  }
  return files;
}

class AdversarialCliTest : public ::testing::TestWithParam<Case> {};

TEST_P(AdversarialCliTest, IsRefusedWithItsClassAndPlace) {
  const Case& c = GetParam();
  TempDir dir;
  for (const std::string& d : c.dirs) fs::create_directories(dir.file(d));
  for (const File& f : c.files) {
    std::string text = f.content;
    if (text.rfind("{file:", 0) == 0 && text.back() == '}') {
      text = readFile(std::string(SCOVILLE_SOURCE_DIR) + "/" + text.substr(6, text.size() - 7));
      ASSERT_FALSE(text.empty()) << f.content;
    }
    text = substitute(text, dir.path());
    for (const auto& [from, to] : f.edits) {
      const std::string needle = substitute(from, dir.path());
      const std::size_t at = text.find(needle);
      ASSERT_NE(at, std::string::npos) << "fixture text '" << needle << "' not in " << f.name;
      text.replace(at, needle.size(), substitute(to, dir.path()));
    }
    const fs::path path = dir.file(f.name);
    fs::create_directories(path.parent_path());
    writeFile(path.string(), text);
  }
  const std::set<std::string> before = regularFiles(dir.path());

  Args args;
  for (const std::string& a : c.args) args.push_back(substitute(a, dir.path()));
  std::string commandLine = "scoville";
  for (const std::string& a : args) commandLine += " '" + a + "'";
  SCOPED_TRACE(commandLine);
  const ProcessResult r = runScoville(args);

  EXPECT_EQ(r.exitCode, c.exitCode) << "stderr: " << r.err << "\nstdout: " << r.out;
  EXPECT_EQ(r.err.rfind("error[", 0), 0u) << "stderr must start with error[CLASS]: " << r.err;
  for (const std::string& expected : c.stderrHas) {
    const std::string text = substitute(expected, dir.path());
    EXPECT_NE(r.err.find(text), std::string::npos) << "'" << text << "' not in stderr: " << r.err;
  }
  EXPECT_TRUE(r.out.empty()) << "a refused command prints nothing on stdout: " << r.out;
  EXPECT_EQ(regularFiles(dir.path()), before) << "a refused command writes no file";
}

std::string caseName(const ::testing::TestParamInfo<Case>& info) {
  return info.param.name;
}

INSTANTIATE_TEST_SUITE_P(Adversarial, AdversarialCliTest, ::testing::ValuesIn(kCases), caseName);
INSTANTIATE_TEST_SUITE_P(FixedBugs, AdversarialCliTest, ::testing::ValuesIn(kFixedBugs), caseName);

}  // namespace
}  // namespace scoville::test
