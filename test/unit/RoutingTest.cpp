#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <set>
#include <stdexcept>

#include "config/ConfigError.h"
#include "config/Loader.h"
#include "test/support/ConfigErrors.h"
#include "test/support/Subprocess.h"
#include "workloads/Routing.h"

namespace scoville::workload {
namespace {

using config::ConfigError;
using config::ErrorKind;

RoutingConfig parseRouting(const std::string& yaml) {
  return RoutingConfig::schema().parse(config::loadConfigText("routing", yaml, "test.yaml"));
}

ConfigError parseError(const std::string& yaml) {
  const std::optional<ConfigError> e = test::configErrorOf([&] { parseRouting(yaml); }, yaml);
  return e ? *e : ConfigError(ErrorKind::kInvalidConfig, "", "none");
}

RoutingConfig uniform() {
  return RoutingConfig{};
}

RoutingConfig skewed(double exponent, bool perLayerRanks = true) {
  RoutingConfig c;
  c.impl = RoutingImpl::kSkewed;
  c.zipfExponent = exponent;
  c.perLayerRanks = perLayerRanks;
  return c;
}

RoutingConfig trace(const std::string& file) {
  RoutingConfig c;
  c.impl = RoutingImpl::kTrace;
  c.file = file;
  return c;
}

std::vector<uint64_t> route(RoutingModel& model, uint32_t layer, uint64_t tokens) {
  std::vector<uint64_t> counts(static_cast<std::size_t>(model.experts()), 0);
  model.route(layer, tokens, counts);
  return counts;
}

uint64_t sum(const std::vector<uint64_t>& counts) {
  return std::accumulate(counts.begin(), counts.end(), uint64_t{0});
}

double maxOverMean(const std::vector<uint64_t>& counts) {
  const double mean = static_cast<double>(sum(counts)) / static_cast<double>(counts.size());
  return static_cast<double>(*std::max_element(counts.begin(), counts.end())) / mean;
}

std::size_t hottest(const std::vector<uint64_t>& counts) {
  return static_cast<std::size_t>(std::max_element(counts.begin(), counts.end()) - counts.begin());
}

/// FNV-1a over the counts, to pin exact results compactly.
uint64_t fingerprint(const std::vector<uint64_t>& counts) {
  uint64_t hash = 0xcbf29ce484222325ull;
  for (uint64_t c : counts) {
    for (int byte = 0; byte < 8; ++byte) hash = (hash ^ ((c >> (8 * byte)) & 0xff)) * 0x100000001b3ull;
  }
  return hash;
}

/// A trace of 8 experts, topK 2: layer 3 has rows (0 1), (2 3), (1 0); layer 5 has (7 6).
const char* const kTrace =
    "# a routing trace for tests\n"
    "layer,experts\n"
    "3,0 1\n"
    "5,7 6\n"
    "\n"
    "3,2 3\n"
    "3, 1  0 \r\n";

// ---------------------------------------------------------------------------------------------

TEST(RoutingConfig, ParsesEachImplementationWithItsDefaults) {
  const RoutingConfig u = parseRouting("impl: uniform\n");
  EXPECT_EQ(u.impl, RoutingImpl::kUniform);
  EXPECT_TRUE(u.file.empty());

  const RoutingConfig s = parseRouting("impl: skewed\n");
  EXPECT_EQ(s.impl, RoutingImpl::kSkewed);
  EXPECT_DOUBLE_EQ(s.zipfExponent, 1.0);
  EXPECT_TRUE(s.perLayerRanks);
  const RoutingConfig s2 = parseRouting("impl: skewed\nzipf_exponent: 1.2\nper_layer_ranks: false\n");
  EXPECT_DOUBLE_EQ(s2.zipfExponent, 1.2);
  EXPECT_FALSE(s2.perLayerRanks);

  const RoutingConfig t = parseRouting("impl: trace\nfile: traces/r1.csv\n");
  EXPECT_EQ(t.impl, RoutingImpl::kTrace);
  EXPECT_EQ(t.file, "traces/r1.csv");
  EXPECT_EQ(routingImplName(RoutingImpl::kSkewed), "skewed");
}

TEST(RoutingConfig, RejectsAKeyThatAnotherImplementationReads) {
  struct Case {
    const char* yaml;
    const char* key;
    int line;
  };
  for (const Case& c : {Case{"impl: uniform\nfile: r.csv\n", "routing.file", 2},
                        Case{"impl: trace\nfile: r.csv\nzipf_exponent: 1.5\n", "routing.zipf_exponent", 3},
                        Case{"impl: uniform\nper_layer_ranks: false\n", "routing.per_layer_ranks", 2},
                        Case{"impl: skewed\nfile: r.csv\n", "routing.file", 2}}) {
    const ConfigError e = parseError(c.yaml);
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidConfig) << c.yaml;
    EXPECT_NE(e.message().find(c.key), std::string::npos) << e.what();
    EXPECT_EQ(e.location().rfind(fmt::format("test.yaml:{}:", c.line), 0), 0u) << e.what();
  }
}

TEST(RoutingConfig, TraceNeedsAFile) {
  const ConfigError missing = parseError("impl: trace\n");
  EXPECT_EQ(missing.kind(), ErrorKind::kMissingKey);
  EXPECT_NE(missing.message().find("routing.file"), std::string::npos) << missing.what();
  const ConfigError none = parseError("impl: trace\nfile: ~\n");
  EXPECT_EQ(none.kind(), ErrorKind::kInvalidConfig);
  EXPECT_NE(none.message().find("routing.file"), std::string::npos) << none.what();
}

TEST(RoutingConfig, RejectsUnknownImplementationsAndExponentsOutOfRange) {
  EXPECT_EQ(parseError("impl: zipf\n").kind(), ErrorKind::kOutOfRange);
  EXPECT_EQ(parseError("zipf_exponent: 1\n").kind(), ErrorKind::kMissingKey);
  EXPECT_EQ(parseError("impl: skewed\nzipf_exponent: 0\n").kind(), ErrorKind::kOutOfRange);
  EXPECT_EQ(parseError("impl: skewed\nzipf_exponent: 10.5\n").kind(), ErrorKind::kOutOfRange);
  EXPECT_EQ(parseError("impl: uniform\nhot_experts: 4\n").kind(), ErrorKind::kUnknownKey);
}

TEST(RoutingFactory, RejectsImpossibleExpertAndTopKCounts) {
  EXPECT_THROW(makeRoutingModel(uniform(), 0, 1, 1), std::invalid_argument);
  EXPECT_THROW(makeRoutingModel(uniform(), 8, 9, 1), std::invalid_argument);
  EXPECT_THROW(makeRoutingModel(skewed(1.0), 8, 0, 1), std::invalid_argument);
  const auto model = makeRoutingModel(uniform(), 8, 2, 1);
  std::vector<uint64_t> wrongSize(7, 0);
  EXPECT_THROW(model->route(0, 1, wrongSize), std::invalid_argument);
}

// ---------------------------------------------------------------------------------------------

std::vector<std::pair<std::string, RoutingConfig>> randomModels() {
  return {{"uniform", uniform()}, {"skewed", skewed(1.2)}, {"skewed-extreme", skewed(10.0)}};
}

TEST(RoutingModels, CountsGrowByTokensTimesTopK) {
  for (const auto& [name, config] : randomModels()) {
    for (const auto& [experts, topK] : {std::pair{384, 8}, std::pair{8, 8}, std::pair{1, 1}, std::pair{16, 15}}) {
      const auto model = makeRoutingModel(config, experts, topK, 7);
      EXPECT_EQ(model->experts(), experts);
      EXPECT_EQ(model->topK(), topK);
      std::vector<uint64_t> counts(static_cast<std::size_t>(experts), 0);
      model->route(0, 1000, counts);
      model->route(0, 0, counts);
      model->route(1, 234, counts);
      EXPECT_EQ(sum(counts), 1234u * static_cast<uint64_t>(topK)) << name << " " << experts << "/" << topK;
    }
  }
}

TEST(RoutingModels, EachTokenPicksTopKDistinctExperts) {
  for (const auto& [name, config] : randomModels()) {
    for (const auto& [experts, topK] : {std::pair{384, 8}, std::pair{6, 5}, std::pair{4, 4}}) {
      const auto model = makeRoutingModel(config, experts, topK, 11);
      for (int token = 0; token < 2000; ++token) {
        const std::vector<uint64_t> counts = route(*model, static_cast<uint32_t>(token % 3), 1);
        ASSERT_EQ(std::count(counts.begin(), counts.end(), 1u), topK) << name << " token " << token;
        ASSERT_EQ(sum(counts), static_cast<uint64_t>(topK)) << name << " token " << token;
      }
    }
  }
}

TEST(RoutingModels, SameSeedGivesTheSameCountsAndAnotherSeedOthers) {
  for (const auto& [name, config] : randomModels()) {
    const auto a = makeRoutingModel(config, 64, 4, 1234);
    const auto b = makeRoutingModel(config, 64, 4, 1234);
    const auto c = makeRoutingModel(config, 64, 4, 1235);
    for (uint32_t layer = 0; layer < 4; ++layer) {
      const std::vector<uint64_t> fromA = route(*a, layer, 4096);
      EXPECT_EQ(fromA, route(*b, layer, 4096)) << name << " layer " << layer;
      EXPECT_NE(fromA, route(*c, layer, 4096)) << name << " layer " << layer;
    }
  }
}

TEST(RoutingModels, ALayersCountsDoNotDependOnTheOtherLayersCalls) {
  for (const auto& [name, config] : randomModels()) {
    const auto forward = makeRoutingModel(config, 64, 4, 99);
    const auto backward = makeRoutingModel(config, 64, 4, 99);
    std::vector<std::vector<uint64_t>> first(4);
    for (uint32_t layer = 0; layer < 4; ++layer) first[layer] = route(*forward, layer, 777);
    route(*backward, 2, 5);  // routing other layers in between does not matter ...
    for (uint32_t layer = 4; layer-- > 0;) {
      if (layer != 2) {
        EXPECT_EQ(route(*backward, layer, 777), first[layer]) << name << " layer " << layer;
      }
    }
    // ... but a layer's own earlier calls do: its stream continues. (At s = 10 nearly every token
    // picks the same experts, so equal counts would prove nothing there.)
    if (name != "skewed-extreme") {
      EXPECT_NE(route(*backward, 2, 777), first[2]) << name;
    }
  }
}

TEST(RoutingModels, ASeedGivesPinnedCountsOnEveryPlatform) {
  // Pins the exact algorithm (xoshiro256**, Lemire ranges, fixed-point Zipf weights): a change here
  // changes every routed simulation and needs a deliberate update of these fingerprints.
  const auto u = makeRoutingModel(uniform(), 64, 4, 42);
  const auto s = makeRoutingModel(skewed(1.2), 64, 4, 42);
  const std::vector<uint64_t> uniformCounts = route(*u, 3, 1000);
  const std::vector<uint64_t> skewedCounts = route(*s, 3, 1000);
  EXPECT_EQ(fingerprint(uniformCounts), 0xa1961fb2f4c18ad3ull);
  EXPECT_EQ(fingerprint(skewedCounts), 0xa774b7b830478d3bull);
}

// ---------------------------------------------------------------------------------------------

TEST(RoutingUniform, MaxOverMeanIsCloseToOne) {
  // 16384 tokens x 8 over 256 experts: mean 512 per expert, sd about 22, so the expected maximum
  // is about mean + 3 sd (1.13); 1.3 is more than 6.9 sd away (p < 1e-9 over all experts).
  const auto model = makeRoutingModel(uniform(), 256, 8, 5);
  for (uint32_t layer = 0; layer < 4; ++layer) {
    const std::vector<uint64_t> counts = route(*model, layer, 16384);
    EXPECT_LT(maxOverMean(counts), 1.3) << "layer " << layer;
    EXPECT_GT(static_cast<double>(*std::min_element(counts.begin(), counts.end())), 0.7 * 512) << "layer " << layer;
  }
}

TEST(RoutingSkewed, IsClearlyImbalancedAndItsHotExpertsDifferPerLayer) {
  // s = 1.2 over 256 experts: rank 1 has a quarter of the weight, so it is in nearly every token's
  // top 8; max/mean is near 30 (uniform: about 1.1).
  const auto model = makeRoutingModel(skewed(1.2), 256, 8, 5);
  std::set<std::size_t> hottestExperts;
  for (uint32_t layer = 0; layer < 8; ++layer) {
    const std::vector<uint64_t> counts = route(*model, layer, 16384);
    EXPECT_GT(maxOverMean(counts), 10.0) << "layer " << layer;
    hottestExperts.insert(hottest(counts));
  }
  EXPECT_GE(hottestExperts.size(), 4u);
}

TEST(RoutingSkewed, SharedRanksKeepTheSameHotExpertInEveryLayer) {
  const auto model = makeRoutingModel(skewed(1.2, false), 256, 8, 5);
  const std::size_t first = hottest(route(*model, 0, 4096));
  for (uint32_t layer = 1; layer < 8; ++layer) EXPECT_EQ(hottest(route(*model, layer, 4096)), first) << layer;
}

TEST(RoutingSkewed, SingleChoicesFollowTheZipfWeights) {
  // topK 1: expert of rank i is chosen with probability (1/i^s) / sum_j (1/j^s).
  const double s = 0.8;
  const int experts = 8;
  const uint64_t tokens = 400000;
  const auto model = makeRoutingModel(skewed(s), experts, 1, 3);
  std::vector<uint64_t> counts = route(*model, 0, tokens);
  std::sort(counts.rbegin(), counts.rend());
  double norm = 0;
  for (int i = 1; i <= experts; ++i) norm += std::pow(i, -s);
  for (int i = 1; i <= experts; ++i) {
    // sd of a frequency is at most sqrt(0.25 / tokens) = 0.0008; allow 5 sd.
    EXPECT_NEAR(static_cast<double>(counts[i - 1]) / tokens, std::pow(i, -s) / norm, 0.004) << "rank " << i;
  }
}

TEST(RoutingSkewed, DrawsWithoutReplacementInProportionToTheRemainingWeights) {
  // topK 2 of 3 experts with weights 1, 1/2, 1/3: rank r is in a token's pair with probability
  // p_r + sum_{j != r} p_j p_r / (1 - p_j).
  const std::vector<double> p = {6.0 / 11, 3.0 / 11, 2.0 / 11};
  const uint64_t tokens = 300000;
  const auto model = makeRoutingModel(skewed(1.0), 3, 2, 8);
  std::vector<uint64_t> counts = route(*model, 0, tokens);
  std::sort(counts.rbegin(), counts.rend());
  for (std::size_t r = 0; r < 3; ++r) {
    double expected = p[r];
    for (std::size_t j = 0; j < 3; ++j) {
      if (j != r) expected += p[j] * p[r] / (1 - p[j]);
    }
    EXPECT_NEAR(static_cast<double>(counts[r]) / tokens, expected, 0.005) << "rank " << r + 1;
  }
}

// ---------------------------------------------------------------------------------------------

TEST(RoutingTrace, ReplaysTheFileCountsExactlyAndWrapsAround) {
  test::TempDir dir;
  const std::string file = dir.file("trace.csv");
  test::writeFile(file, kTrace);
  const auto model = makeRoutingModel(trace(file), 8, 2, 0);
  EXPECT_EQ(route(*model, 3, 3), (std::vector<uint64_t>{2, 2, 1, 1, 0, 0, 0, 0}));  // one pass
  EXPECT_EQ(route(*model, 3, 7), (std::vector<uint64_t>{5, 5, 2, 2, 0, 0, 0, 0}));  // two passes + row 1
  EXPECT_EQ(route(*model, 3, 1), (std::vector<uint64_t>{0, 0, 1, 1, 0, 0, 0, 0}));  // continues at row 2
  EXPECT_EQ(route(*model, 3, 2), (std::vector<uint64_t>{2, 2, 0, 0, 0, 0, 0, 0}));  // row 3, wraps to row 1
  EXPECT_EQ(route(*model, 5, 3), (std::vector<uint64_t>{0, 0, 0, 0, 0, 0, 3, 3}));
  // The seed plays no part in a replay.
  EXPECT_EQ(route(*makeRoutingModel(trace(file), 8, 2, 123), 3, 3), (std::vector<uint64_t>{2, 2, 1, 1, 0, 0, 0, 0}));
}

TEST(RoutingTrace, ALayerWithoutRowsIsAnErrorNamingTheFileAndLayer) {
  test::TempDir dir;
  const std::string file = dir.file("trace.csv");
  test::writeFile(file, kTrace);
  const auto model = makeRoutingModel(trace(file), 8, 2, 0);
  try {
    route(*model, 4, 1);
    FAIL() << "no error";
  } catch (const std::runtime_error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(file), std::string::npos) << what;
    EXPECT_NE(what.find("layer 4"), std::string::npos) << what;
  }
}

// Issue 38: given the model's MoE layers, a trace that misses one, or has rows for a layer the
// model does not route, is refused when it is read (at the file, or the row's line), not mid-run.
TEST(RoutingTrace, ATraceMustCoverExactlyTheModelsMoeLayers) {
  test::TempDir dir;
  const std::string file = dir.file("trace.csv");
  test::writeFile(file, kTrace);
  EXPECT_NO_THROW(makeRoutingModel(trace(file), 8, 2, 0, {3, 5}));
  {
    const std::optional<config::ConfigError> e = test::configErrorOf(
        [&] {
          makeRoutingModel(trace(file), 8, 2, 0, {3, 4, 5});
        },
        "a missing layer");
    ASSERT_TRUE(e);
    EXPECT_EQ(e->location(), file);
    EXPECT_NE(e->message().find("no row for MoE layer 4"), std::string::npos) << e->what();
  }
  {
    const std::optional<config::ConfigError> e = test::configErrorOf(
        [&] { makeRoutingModel(trace(file), 8, 2, 0, {3}); }, "a row for a layer the model does not route");
    ASSERT_TRUE(e);
    EXPECT_EQ(e->location(), file + ":4") << "the first row of layer 5";
    EXPECT_NE(e->message().find("layer 5 is not a MoE layer"), std::string::npos) << e->what();
  }
}

TEST(RoutingTrace, BadFilesAreErrorsNamingTheFileAndLine) {
  test::TempDir dir;
  struct Case {
    const char* content;
    ErrorKind kind;
    int line;  // 0: the error names the file only
    const char* says;
  };
  const Case cases[] = {
      {"layer,experts\n3,0\n", ErrorKind::kInvalidConfig, 2, "this one has 1"},
      {"layer,experts\n3,0 1 2\n", ErrorKind::kInvalidConfig, 2, "this one has 3"},
      {"layer,experts\n3,0 1\n3,0 8\n", ErrorKind::kInvalidConfig, 3, "out of range [0, 7]"},
      {"layer,experts\n3,0 -1\n", ErrorKind::kInvalidConfig, 2, "out of range"},
      {"layer,experts\n3,4 4\n", ErrorKind::kInvalidConfig, 2, "appears twice"},
      {"layer,experts\n3 0 1\n", ErrorKind::kInvalidConfig, 2, "expected 'LAYER,EXPERT"},
      {"layer,experts\nx,0 1\n", ErrorKind::kInvalidConfig, 2, "layer 'x'"},
      {"layer,experts\n-1,0 1\n", ErrorKind::kInvalidConfig, 2, "layer '-1'"},
      {"layer,experts\n3,0 1a\n", ErrorKind::kInvalidConfig, 2, "expert id '1a'"},
      {"layer,experts\n3,0,1\n", ErrorKind::kInvalidConfig, 2, "expert id '0,1'"},
      {"# header below is wrong\nlayer,expert\n3,0 1\n", ErrorKind::kInvalidConfig, 2, "header"},
      {"3,0 1\n", ErrorKind::kInvalidConfig, 1, "header"},
      {"", ErrorKind::kEmptyFile, 0, "header"},
      {"# nothing\n\n", ErrorKind::kEmptyFile, 0, "header"},
      {"layer,experts\n# no rows\n", ErrorKind::kInvalidConfig, 0, "no rows"},
  };
  int index = 0;
  for (const Case& c : cases) {
    const std::string file = dir.file(fmt::format("bad{}.csv", index++));
    test::writeFile(file, c.content);
    const std::optional<config::ConfigError> e = test::configErrorOf([&] { makeRoutingModel(trace(file), 8, 2, 0); });
    ASSERT_TRUE(e);
    EXPECT_EQ(e->kind(), c.kind) << e->what();
    EXPECT_EQ(e->location(), c.line > 0 ? fmt::format("{}:{}", file, c.line) : file) << e->what();
    EXPECT_NE(std::string(e->what()).find(c.says), std::string::npos) << e->what();
  }

  const std::string missing = dir.file("missing.csv");
  {
    const std::optional<config::ConfigError> e =
        test::configErrorOf([&] { makeRoutingModel(trace(missing), 8, 2, 0); }, "a missing file");
    ASSERT_TRUE(e);
    EXPECT_EQ(e->kind(), ErrorKind::kFileNotFound);
    EXPECT_EQ(e->location(), missing);
  }
  {
    const std::optional<config::ConfigError> e =
        test::configErrorOf([&] { makeRoutingModel(trace(dir.path()), 8, 2, 0); }, "a directory");
    ASSERT_TRUE(e);
    EXPECT_EQ(e->kind(), ErrorKind::kFileNotFound);
  }
}

}  // namespace
}  // namespace scoville::workload
