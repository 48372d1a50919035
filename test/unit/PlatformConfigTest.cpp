// Platform descriptions: chip types included once and instantiated, topologies, placement, and
// the errors an architect gets for a platform that cannot be built.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <string>
#include <vector>

#include "config/Loader.h"
#include "platforms/PlatformConfig.h"
#include "runtime/PlatformDecode.h"
#include "test/support/ConfigErrors.h"
#include "test/support/Shipped.h"
#include "test/support/Subprocess.h"
#include "workloads/StepPlan.h"

namespace scoville::platform {
namespace {

using config::ConfigError;
using config::ErrorKind;

const std::string kChip = std::string(SCOVILLE_SOURCE_DIR) + "/platforms/chips/jalapeno.yaml";

/// A platform file: `chips` jalapeno chips, the given network and placement blocks (YAML text
/// indented by two spaces under their keys), written into `dir`.
std::string platformText(int chips, const std::string& network, const std::string& placement = "") {
  std::string text = fmt::format(
      "name: test\ndescription: test platform\nchip_types:\n- include: {}\nchips:\n- {{type: jalapeno, count: {}}}\n"
      "network:\n{}\nhost: {{memory: 1 TiB, chips_per_host: 8, link_bandwidth: 64 GB/s, link_latency: 1 us}}\n",
      kChip, chips, network);
  if (!placement.empty()) text += "placement:\n" + placement + "\n";
  return text;
}

PlatformConfig parse(const std::string& text, const std::vector<std::pair<std::string, std::string>>& sets = {}) {
  test::TempDir dir;
  const std::string file = dir.file("platform.yaml");
  test::writeFile(file, text);
  return PlatformConfig::schema().parse(config::loadConfigFile("platform", file, sets));
}

/// Parses `text`, expecting a ConfigError of `kind` whose text mentions every one of `mentions`.
void expectError(const std::string& text, ErrorKind kind, const std::vector<std::string>& mentions) {
  const std::optional<config::ConfigError> e = test::configErrorOf([&] { parse(text); });
  ASSERT_TRUE(e);
  EXPECT_EQ(e->kind(), kind) << e->what();
  const std::string all = e->location() + " " + e->message();
  for (const std::string& m : mentions) EXPECT_NE(all.find(m), std::string::npos) << m << " not in: " << all;
}

const std::string kSwitch8 = "  topology: switched\n  switch: {ports: 64, hop_latency: 250 ns, input_buffer: 256 KiB}";

TEST(PlatformConfig, ChipTypesAreIncludedOnceAndInstantiated) {
  const PlatformConfig c = parse(platformText(8, kSwitch8, "  tp: 8"));
  EXPECT_EQ(c.chipCount(), 8);
  EXPECT_EQ(c.chipTypes.size(), 1u);
  EXPECT_EQ(c.chipConfig(7).name, "jalapeno");
  EXPECT_DOUBLE_EQ(c.chipConfig(7).hbm.bandwidthBytesPerS, 7.2e12);
  EXPECT_EQ(c.chipConfig(0).fabricPorts.count, 8);
  EXPECT_THROW(c.chipConfig(8), std::out_of_range);
  EXPECT_EQ(PlatformConfig::chipName(3), "chip3");
}

TEST(PlatformConfig, OverridesReachIntoListsAndIncludedFiles) {
  const PlatformConfig c = parse(platformText(8, kSwitch8, "  tp: 8"), {{"chip_types[0].hbm.bandwidth", "9 TB/s"},
                                                                        {"chips[0].count", "16"},
                                                                        {"network.planes", "2"},
                                                                        {"placement.dp", "2"}});
  EXPECT_DOUBLE_EQ(c.chipConfig(0).hbm.bandwidthBytesPerS, 9e12);
  EXPECT_EQ(c.chipCount(), 16);
  // An error in an overridden included value names the option, not the file.
  const auto refusal = [&](const std::string& key, const std::string& value) {
    return test::configErrorOf([&] { parse(platformText(8, kSwitch8, "  tp: 8"), {{key, value}}); }, key + "=" + value);
  };
  const std::optional<config::ConfigError> unit = refusal("chip_types[0].hbm.bandwidth", "9 TB");
  ASSERT_TRUE(unit) << "a size as a bandwidth";
  EXPECT_EQ(unit->kind(), ErrorKind::kBadUnit);
  EXPECT_EQ(unit->location(), "--set platform.chip_types[0].hbm.bandwidth=9 TB");
  const std::optional<config::ConfigError> index = refusal("chip_types[2].hbm.bandwidth", "9 TB/s");
  ASSERT_TRUE(index) << "an index past the list";
  EXPECT_EQ(index->kind(), ErrorKind::kBadOverride);
  EXPECT_TRUE(test::mentions(index, {"a list of 1 entries"}));
}

// The launch gap of a chip type: absent it is 0 (work streams from op to op), given it needs a
// time; a number without a unit, a negative time or a misspelt key is refused, naming the key.
TEST(PlatformConfig, ACommandProcessorsLaunchGapIsATimeAndAbsentIsNone) {
  const std::string text = platformText(1, "  topology: none");
  EXPECT_FALSE(parse(text).chipConfig(0).commandProcessor.launchesKernels());
  const PlatformConfig c = parse(text, {{"chip_types[0].command_processor.kernel_launch", "2.5 us"}});
  EXPECT_DOUBLE_EQ(c.chipConfig(0).commandProcessor.kernelLaunchS, 2.5e-6);
  EXPECT_TRUE(c.chipConfig(0).commandProcessor.launchesKernels());
  const auto refused = [&](const std::string& key, const std::string& value, ErrorKind kind) {
    const std::optional<config::ConfigError> e = test::configErrorOf([&] {
      parse(text, {{"chip_types[0].command_processor." + key, value}});
    });
    ASSERT_TRUE(e);
    EXPECT_EQ(e->kind(), kind) << e->what();
    EXPECT_NE((e->location() + " " + e->message()).find(key), std::string::npos) << e->what();
  };
  refused("kernel_launch", "2.5", ErrorKind::kBadUnit);
  refused("kernel_launch", "-1 us", ErrorKind::kOutOfRange);
  refused("kernel_lauch", "2 us", ErrorKind::kUnknownKey);
}

TEST(PlatformConfig, IncludeErrorsNameTheFileAndTheIncludingKey) {
  std::string text = platformText(1, "  topology: none");
  text.replace(text.find(kChip), kChip.size(), "no-such-chip.yaml");
  expectError(text, ErrorKind::kFileNotFound, {"no-such-chip.yaml", "platform.chip_types[0]"});
  // A chip file that includes itself.
  test::TempDir dir;
  test::writeFile(dir.file("loop.yaml"), "include: loop.yaml\n");
  std::string loop = platformText(1, "  topology: none");
  loop.replace(loop.find(kChip), kChip.size(), dir.file("loop.yaml"));
  expectError(loop, ErrorKind::kInvalidConfig, {"loop.yaml", "includes"});
}

TEST(PlatformConfig, ChipGroupNamingAnUnknownTypeIsADanglingReference) {
  std::string text = platformText(8, kSwitch8, "  tp: 8");
  text.replace(text.find("type: jalapeno"), 14, "type: jalapino");
  expectError(text, ErrorKind::kInvalidConfig, {"platform.chips[0].type", "jalapino", "did you mean 'jalapeno'"});
}

TEST(PlatformConfig, SwitchPortsOverSubscribed) {
  // 16 chips x 8 ports = 128 links on one 64-port switch.
  expectError(
      platformText(16, kSwitch8, "  tp: 16"), ErrorKind::kInvalidConfig,
      {"platform.network.switch.ports", "over-subscribed", "64 ports", "128 links", "16 x jalapeno (8 ports each)"});
  // Eight planes fix it: one port per chip per plane.
  EXPECT_EQ(parse(platformText(16, kSwitch8 + "\n  planes: 8", "  tp: 16")).network.planes, 8);
  // More planes than a chip has ports.
  expectError(platformText(8, kSwitch8 + "\n  planes: 16", "  tp: 8"), ErrorKind::kInvalidConfig,
              {"platform.network.planes", "8 fabric ports", "16 switch planes"});
}

TEST(PlatformConfig, DirectTopologiesNeedEnoughPorts) {
  expectError(platformText(16, "  topology: all_to_all", "  tp: 16"), ErrorKind::kInvalidConfig,
              {"over-subscribed", "needs a port to each of the other 15 chips", "has 8"});
  EXPECT_EQ(parse(platformText(8, "  topology: all_to_all", "  tp: 8")).network.topology, Topology::kAllToAll);
  EXPECT_EQ(parse(platformText(64, "  topology: torus\n  torus: [4, 4, 4]", "  tp: 64")).network.torus.size(), 3u);
  expectError(platformText(64, "  topology: torus\n  torus: [4, 4]", "  tp: 64"), ErrorKind::kInvalidConfig,
              {"platform.network.torus", "hold 16 chips but the platform has 64"});
  // A 5-D torus of size-3 dimensions needs 10 neighbour ports; the chip has 8.
  expectError(platformText(243, "  topology: torus\n  torus: [3, 3, 3, 3, 3]", "  tp: 243"), ErrorKind::kInvalidConfig,
              {"needs 10 neighbour ports", "has 8"});
}

TEST(PlatformConfig, KeysOfAnotherTopologyAreErrorsNotIgnored) {
  expectError(platformText(8, "  topology: all_to_all\n  planes: 2", "  tp: 8"), ErrorKind::kInvalidConfig,
              {"platform.network.planes", "only read with topology switched"});
  expectError(platformText(8, kSwitch8 + "\n  torus: [2, 4]", "  tp: 8"), ErrorKind::kInvalidConfig,
              {"platform.network.torus", "only read with topology torus"});
  expectError(
      platformText(8, "  topology: ring\n  switch: {ports: 8, hop_latency: 1 ns, input_buffer: 64 KiB}", "  tp: 8"),
      ErrorKind::kInvalidConfig, {"platform.network.switch", "switched or leaf_spine"});
}

TEST(PlatformConfig, TopologyNoneHoldsOneChip) {
  expectError(platformText(2, "  topology: none", "  tp: 2"), ErrorKind::kInvalidConfig,
              {"platform.network.topology", "exactly one chip", "has 2"});
}

TEST(PlatformConfig, LeafSpinePortBudgets) {
  const std::string leafSpine =
      "  topology: leaf_spine\n  switch: {ports: 64, hop_latency: 250 ns, input_buffer: 256 KiB, flow_control: "
      "output_queued}\n"
      "  leaf_spine: {chips_per_leaf: 4, spines: 4, uplinks_per_spine: 8, uplink: {bandwidth: 100 GB/s, "
      "latency: 100 ns, mtu: 4 KiB, header: 48 B}}";
  EXPECT_EQ(parse(platformText(16, leafSpine, "  tp: 16")).network.leafSpine->spines, 4);
  // 8 chips per leaf x 8 ports + 4 spines x 8 uplinks = 96 > 64.
  std::string crowded = leafSpine;
  crowded.replace(crowded.find("chips_per_leaf: 4"), 17, "chips_per_leaf: 8");
  expectError(platformText(16, crowded, "  tp: 16"), ErrorKind::kInvalidConfig,
              {"leaf switch ports over-subscribed", "= 96 > 64"});
  std::string credit = leafSpine;
  credit.replace(credit.find(", flow_control: output_queued"), 29, "");
  expectError(platformText(16, credit, "  tp: 16"), ErrorKind::kInvalidConfig,
              {"platform.network.switch", "output-queued"});
  expectError(platformText(16, "  topology: leaf_spine", "  tp: 16"), ErrorKind::kMissingKey,
              {"platform.network.switch", "platform.network.leaf_spine"});
}

const std::string kCustomHead =
    "  topology: custom\n  switches:\n  - {name: sw0, ports: 8, hop_latency: 100 ns}\n"
    "  - {name: sw1, ports: 8, hop_latency: 100 ns}\n"
    "  switch_link: {bandwidth: 100 GB/s, latency: 100 ns, mtu: 4 KiB, header: 48 B}\n  links:\n";

TEST(PlatformConfig, CustomTopologyIsCheckedLinkByLink) {
  const std::string ok = kCustomHead +
                         "  - {a: chip0, b: sw0, ports: 4}\n  - {a: chip1, b: sw0, ports: 4}\n"
                         "  - {a: chip2, b: sw1, ports: 4}\n  - {a: chip3, b: sw1, ports: 4}\n"
                         "  - {a: sw0, b: sw1}";
  // sw0: 4 + 4 + 1 = 9 ports > 8.
  expectError(platformText(4, ok, "  tp: 4"), ErrorKind::kInvalidConfig,
              {"ports over-subscribed", "9 ports of switch 'sw0', which has 8"});
  std::string fits = ok;
  for (std::size_t at = fits.find("ports: 4"); at != std::string::npos; at = fits.find("ports: 4")) {
    fits.replace(at, 8, "ports: 3");
  }
  const PlatformConfig c = parse(platformText(4, fits, "  tp: 4"));
  EXPECT_EQ(c.network.links.size(), 5u);
  // A link to an endpoint that does not exist.
  std::string dangling = fits;
  dangling.replace(dangling.find("{a: chip3"), 9, "{a: chip9");
  expectError(platformText(4, dangling, "  tp: 4"), ErrorKind::kInvalidConfig,
              {"platform.network.links[3].a", "dangling link", "'chip9'", "chip0..chip3"});
  // A switch nothing attaches to.
  const std::string lonely = kCustomHead + "  - {a: chip0, b: sw0}\n  - {a: chip1, b: sw0}";
  expectError(platformText(2, lonely, "  tp: 2"), ErrorKind::kInvalidConfig,
              {"platform.network.switches[1]", "dangling switch", "'sw1'"});
}

TEST(PlatformConfig, CustomTopologyMustConnectEverySwitch) {
  // Two switches linked to each other and to no chip: attached, but cut off.
  const std::string island = kCustomHead + "  - {a: chip0, b: chip1}\n  - {a: sw0, b: sw1}";
  expectError(platformText(2, island, "  tp: 2"), ErrorKind::kInvalidConfig,
              {"platform.network.switches[0]", "switch 'sw0' is cut off from the chips"});
}

TEST(PlatformConfig, TensorParallelismMustLeaveEveryRankWork) {
  workload::ModelConfig model = test::shippedModel("tiny-dense");
  model.ffnIntermediate = 4;
  const hw::ChipConfig chip = test::shippedPlatform("jalapeno").chipConfig(0);
  const std::optional<config::ConfigError> e = test::configErrorOf(
      [&] {
        runtime::planDecodeStep(model, test::decodeStep(1, 16), chip, {8, 0});
      },
      "ffn_intermediate 4 split 8 ways");
  ASSERT_TRUE(e);
  EXPECT_EQ(e->kind(), ErrorKind::kInvalidConfig);
  EXPECT_NE(e->message().find("ffn_intermediate 4"), std::string::npos) << e->message();
}

TEST(PlatformConfig, CustomTopologyMustConnectEveryChip) {
  const std::string islands = kCustomHead +
                              "  - {a: chip0, b: sw0}\n  - {a: chip1, b: sw0}\n"
                              "  - {a: chip2, b: sw1}\n  - {a: chip3, b: sw1}";
  expectError(platformText(4, islands, "  tp: 4"), ErrorKind::kInvalidConfig,
              {"platform.network.links", "chip2 unreachable from chip0"});
}

TEST(PlatformConfig, ParallelismMustMatchTheChipCount) {
  expectError(platformText(8, kSwitch8, "  tp: 4"), ErrorKind::kInvalidConfig,
              {"inconsistent parallelism", "tp 4 x pp 1 x dp 1 = 4 chips", "has 8 chips"});
  expectError(platformText(8, kSwitch8, "  tp: 4\n  dp: 2\n  ep: 3"), ErrorKind::kInvalidConfig,
              {"platform.placement.ep", "ep 3 must divide the tp x dp = 8"});
  const PlatformConfig c = parse(platformText(8, kSwitch8, "  tp: 2\n  pp: 2\n  dp: 2\n  ep: 4"));
  EXPECT_EQ(c.placement.tp * c.placement.pp * c.placement.dp, 8);
}

TEST(PlatformConfig, ExpertPlacementPolicies) {
  PlacementConfig p;
  p.ep = 4;
  p.experts = "contiguous";
  EXPECT_EQ(p.expertOwners(8), (std::vector<int>{0, 0, 1, 1, 2, 2, 3, 3}));
  EXPECT_EQ(p.expertOwners(6), (std::vector<int>{0, 0, 1, 2, 2, 3}));
  p.experts = "round_robin";
  EXPECT_EQ(p.expertOwners(6), (std::vector<int>{0, 1, 2, 3, 0, 1}));
  p.experts = "explicit";
  p.expertMap = {3, 2, 1, 0};
  EXPECT_EQ(p.expertOwners(4), (std::vector<int>{3, 2, 1, 0}));
  EXPECT_THROW(p.expertOwners(5), std::invalid_argument);

  expectError(platformText(8, kSwitch8, "  tp: 8\n  ep: 4\n  experts: {impl: explicit}\n  expert_map: [0, 1, 4]"),
              ErrorKind::kOutOfRange, {"platform.placement.expert_map[2]", "EP rank 4", "ep = 4"});
  expectError(platformText(8, kSwitch8, "  tp: 8\n  ep: 4\n  experts: {impl: explicit}"), ErrorKind::kMissingKey,
              {"expert_map"});
  expectError(platformText(8, kSwitch8, "  tp: 8\n  expert_map: [0]"), ErrorKind::kInvalidConfig,
              {"only read with experts: {impl: explicit}"});
}

TEST(PlatformConfig, DisaggregationSetsAreDisjointAndInRange) {
  const std::string split = "  tp: 4\n  disaggregation: {prefill_chips: [0, 1, 2, 3], decode_chips: [4, 5, 6, 7]}";
  const PlatformConfig c = parse(platformText(8, kSwitch8, split));
  EXPECT_EQ(c.placement.disaggregation->decodeChips.size(), 4u);
  expectError(
      platformText(8, kSwitch8, "  tp: 4\n  disaggregation: {prefill_chips: [0, 1, 2, 4], decode_chips: [4, 5, 6, 7]}"),
      ErrorKind::kInvalidConfig, {"chip 4 is listed twice"});
  expectError(
      platformText(8, kSwitch8, "  tp: 4\n  disaggregation: {prefill_chips: [0, 1, 2, 3], decode_chips: [4, 5, 6, 9]}"),
      ErrorKind::kOutOfRange, {"decode_chips[3]", "chip 9 does not exist"});
  expectError(
      platformText(6, kSwitch8, "  tp: 4\n  disaggregation: {prefill_chips: [0, 1], decode_chips: [2, 3, 4, 5]}"),
      ErrorKind::kInvalidConfig, {"2 prefill chips are not a whole number of tp x pp = 4"});
  expectError(
      platformText(8, kSwitch8, "  tp: 4\n  disaggregation: {prefill_chips: [0, 1], decode_chips: [4, 5, 6, 7]}"),
      ErrorKind::kInvalidConfig, {"platform.placement.disaggregation", "chip 2 is in neither"});
}

TEST(PlatformConfig, EveryShippedPlatformParses) {
  for (const std::string& name : config::shippedNames("platforms")) {
    SCOPED_TRACE(name);
    const PlatformConfig c = test::shippedPlatform(name);
    EXPECT_EQ(c.name, name);
    EXPECT_GE(c.chipCount(), 1);
  }
}

}  // namespace
}  // namespace scoville::platform
