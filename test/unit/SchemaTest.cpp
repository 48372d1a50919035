#include <gtest/gtest.h>
#include <sstream>

#include "config/Loader.h"
#include "config/Schema.h"
#include "test/support/ConfigErrors.h"

namespace scoville::config {
namespace {

enum class Policy { kFcfs, kFrFcfs };

struct Inner {
  double latency = 0.0;
  int depth = 0;
  static const Schema<Inner>& schema() {
    static const Schema<Inner> s = Schema<Inner>("inner", "an inner block")
                                       .quantity("latency", &Inner::latency, dim::kTime, required(), positive(), "lat")
                                       .integer("depth", &Inner::depth, optional("4"), between(1, 64), "depth");
    return s;
  }
};

struct Outer {
  std::string name;
  double bandwidth = 0.0;
  double ratio = 0.0;
  bool enabled = false;
  Policy policy = Policy::kFcfs;
  Inner inner;
  std::vector<Inner> many;
  static const Schema<Outer>& schema() {
    static const Schema<Outer> s =
        Schema<Outer>("outer", "the root")
            .text("name", &Outer::name, required(), "name")
            .quantity("bandwidth", &Outer::bandwidth, dim::kBandwidth, required(), positive(), "bw")
            .number("ratio", &Outer::ratio, optional("0.5"), between(0, 1), "ratio")
            .flag("enabled", &Outer::enabled, optional("false"), "switch")
            .choice("policy", &Outer::policy, {{"fcfs", Policy::kFcfs}, {"frfcfs", Policy::kFrFcfs}},
                    optional("frfcfs"), "policy")
            .child("inner", &Outer::inner, Inner::schema(), optional("{latency: 5 ns}"), "inner block")
            .childList("many", &Outer::many, Inner::schema(), optional("[{latency: 1 ns}]"), "list")
            .rule("ratio", "ratio must be below 0.9 when enabled",
                  [](const Outer& o) { return !o.enabled || o.ratio < 0.9; });
    return s;
  }
};

Outer parse(const std::string& yaml) {
  return Outer::schema().parse(loadConfigText("outer", yaml, "test.yaml"));
}

ConfigError parseError(const std::string& yaml) {
  const std::optional<ConfigError> e = test::configErrorOf([&] { parse(yaml); }, yaml);
  return e ? *e : ConfigError(ErrorKind::kInvalidConfig, "", "none");
}

TEST(Schema, ParsesAllFieldKindsAndAppliesDefaults) {
  const Outer o = parse("name: x\nbandwidth: 2 TB/s\n");
  EXPECT_EQ(o.name, "x");
  EXPECT_DOUBLE_EQ(o.bandwidth, 2e12);
  EXPECT_DOUBLE_EQ(o.ratio, 0.5);
  EXPECT_FALSE(o.enabled);
  EXPECT_EQ(o.policy, Policy::kFrFcfs);
  EXPECT_DOUBLE_EQ(o.inner.latency, 5e-9);
  EXPECT_EQ(o.inner.depth, 4);
  ASSERT_EQ(o.many.size(), 1u);

  const Outer p = parse(
      "name: y\nbandwidth: 1 GB/s\nratio: 0.25\nenabled: true\npolicy: fcfs\n"
      "inner: {latency: 1 us, depth: 8}\nmany: [{latency: 1 ns}, {latency: 2 ns, depth: 2}]\n");
  EXPECT_TRUE(p.enabled);
  EXPECT_EQ(p.policy, Policy::kFcfs);
  EXPECT_EQ(p.inner.depth, 8);
  ASSERT_EQ(p.many.size(), 2u);
  EXPECT_EQ(p.many[1].depth, 2);
}

TEST(Schema, UnknownKeySuggestsTheNearestAndGivesLineAndColumn) {
  const ConfigError e = parseError("name: x\nbandwidth: 1 GB/s\ninner:\n  latency: 1 ns\n  dpeth: 3\n");
  EXPECT_EQ(e.kind(), ErrorKind::kUnknownKey);
  EXPECT_EQ(e.location(), "test.yaml:5:3");
  EXPECT_NE(e.message().find("'dpeth'"), std::string::npos);
  EXPECT_NE(e.message().find("outer.inner"), std::string::npos);
  EXPECT_NE(e.message().find("did you mean 'depth'"), std::string::npos);
}

TEST(Schema, UnknownKeyFarFromAnyGetsNoSuggestion) {
  const ConfigError e = parseError("name: x\nbandwidth: 1 GB/s\nzzzzzzzz: 1\n");
  EXPECT_EQ(e.kind(), ErrorKind::kUnknownKey);
  EXPECT_EQ(e.message().find("did you mean"), std::string::npos);
}

TEST(Schema, ReportsEachErrorClass) {
  EXPECT_EQ(parseError("bandwidth: 1 GB/s\n").kind(), ErrorKind::kMissingKey);
  EXPECT_EQ(parseError("name: x\nbandwidth: {a: 1}\n").kind(), ErrorKind::kWrongType);
  EXPECT_EQ(parseError("name: x\nbandwidth: 1 GB\n").kind(), ErrorKind::kBadUnit);
  EXPECT_EQ(parseError("name: x\nbandwidth: 1\n").kind(), ErrorKind::kBadUnit);
  EXPECT_EQ(parseError("name: x\nbandwidth: -1 GB/s\n").kind(), ErrorKind::kOutOfRange);
  EXPECT_EQ(parseError("name: x\nbandwidth: 0 GB/s\n").kind(), ErrorKind::kOutOfRange);
  EXPECT_EQ(parseError("name: x\nbandwidth: 1 GB/s\nratio: 2\n").kind(), ErrorKind::kOutOfRange);
  EXPECT_EQ(parseError("name: x\nbandwidth: 1 GB/s\nratio: lots\n").kind(), ErrorKind::kWrongType);
  EXPECT_EQ(parseError("name: x\nbandwidth: 1 GB/s\nenabled: yes\n").kind(), ErrorKind::kWrongType);
  EXPECT_EQ(parseError("name: x\nbandwidth: 1 GB/s\npolicy: frfcf\n").kind(), ErrorKind::kOutOfRange);
  EXPECT_EQ(parseError("name: x\nbandwidth: 1 GB/s\ninner: {latency: 1 ns, depth: 2.5}\n").kind(),
            ErrorKind::kWrongType);
  EXPECT_EQ(parseError("name: x\nbandwidth: 1 GB/s\ninner: {latency: 1 ns, depth: 99999999999999999999}\n").kind(),
            ErrorKind::kOutOfRange);
  EXPECT_EQ(parseError("name: x\nbandwidth: 1 GB/s\nmany: []\n").kind(), ErrorKind::kWrongType);
  EXPECT_EQ(parseError("name: x\nname: y\nbandwidth: 1 GB/s\n").kind(), ErrorKind::kDuplicateKey);
  EXPECT_EQ(parseError("name: x\nbandwidth: 1 GB/s\nenabled: true\nratio: 0.95\n").kind(), ErrorKind::kInvalidConfig);
  EXPECT_EQ(parseError("name:\nbandwidth: 1 GB/s\n").kind(), ErrorKind::kWrongType) << "a null is not text";
}

TEST(Schema, ErrorsInListsNameTheIndex) {
  const ConfigError e = parseError("name: x\nbandwidth: 1 GB/s\nmany:\n  - {latency: 1 ns}\n  - {latency: 1 W}\n");
  EXPECT_EQ(e.kind(), ErrorKind::kBadUnit);
  EXPECT_NE(e.message().find("outer.many[1].latency"), std::string::npos) << e.message();
  EXPECT_EQ(e.location(), "test.yaml:5:15");
}

TEST(Schema, MissingKeyMessageSaysWhatIsExpected) {
  const ConfigError e = parseError("name: x\n");
  EXPECT_NE(e.message().find("outer.bandwidth"), std::string::npos);
  EXPECT_NE(e.message().find("4.8 TB/s"), std::string::npos) << e.message();
  EXPECT_EQ(e.location(), "test.yaml:1:1");
}

TEST(Schema, MarkdownListsEveryKeyWithDefaultsAndRules) {
  std::ostringstream out;
  writeMarkdown(out, {&Outer::schema()});
  const std::string md = out.str();
  for (const char* expected : {"## outer", "## inner", "`bandwidth`", "`depth`", "`4`", "one of: fcfs, frfcfs",
                               "ratio must be below 0.9 when enabled", ">= 1 .. 64"}) {
    EXPECT_NE(md.find(expected), std::string::npos) << expected << "\n" << md;
  }
}

TEST(Loader, SyntaxErrorsCarryLineAndColumn) {
  const std::optional<config::ConfigError> e =
      test::configErrorOf([&] { loadConfigText("outer", "name: x\nbandwidth: [1 GB/s\n", "broken.yaml"); });
  ASSERT_TRUE(e);
  EXPECT_EQ(e->kind(), ErrorKind::kYamlSyntax);
  EXPECT_EQ(e->location().rfind("broken.yaml:", 0), 0u) << e->location();
}

TEST(Loader, EmptyAndNonMapDocumentsAreRejected) {
  for (const char* text : {"", "# only a comment\n", "~\n"}) {
    const std::optional<config::ConfigError> e =
        test::configErrorOf([&] { loadConfigText("outer", text, "empty.yaml"); });
    ASSERT_TRUE(e);
    EXPECT_EQ(e->kind(), ErrorKind::kEmptyFile);
  }
  const std::optional<config::ConfigError> list =
      test::configErrorOf([&] { loadConfigText("outer", "- a\n- b\n", "list.yaml"); });
  ASSERT_TRUE(list);
  EXPECT_EQ(list->kind(), ErrorKind::kWrongType);
}

TEST(Loader, OverridesReplaceValuesAndAreReportedAsTheirOption) {
  Overrides overrides({"outer"});
  overrides.add("outer.inner.depth=16");
  overrides.add("outer.bandwidth=3 GB/s");
  overrides.add("outer.bandwidth=3 GB/s");  // the same value twice is fine
  const Outer o = Outer::schema().parse(loadConfigText("outer", "name: x\nbandwidth: 1 GB/s\ninner: {latency: 1 ns}\n",
                                                       "t.yaml", overrides.forRoot("outer")));
  EXPECT_DOUBLE_EQ(o.bandwidth, 3e9);
  EXPECT_EQ(o.inner.depth, 16);
  EXPECT_DOUBLE_EQ(o.inner.latency, 1e-9);

  // An override that creates a map the file lacks does not merge with the default map: the new
  // map must be complete, and the error points at the option.
  const std::optional<config::ConfigError> incomplete = test::configErrorOf([&] {
    Outer::schema().parse(
        loadConfigText("outer", "name: x\nbandwidth: 1 GB/s\n", "t.yaml", overrides.forRoot("outer")));
  });
  ASSERT_TRUE(incomplete);
  EXPECT_EQ(incomplete->kind(), ErrorKind::kMissingKey);
  EXPECT_EQ(incomplete->location(), "--set outer.inner.depth=16");

  Overrides bad({"outer"});
  bad.add("outer.inner.dpeth=16");
  const std::optional<config::ConfigError> misspelt = test::configErrorOf([&] {
    Outer::schema().parse(loadConfigText("outer", "name: x\nbandwidth: 1 GB/s\n", "t.yaml", bad.forRoot("outer")));
  });
  ASSERT_TRUE(misspelt);
  EXPECT_EQ(misspelt->kind(), ErrorKind::kUnknownKey);
  EXPECT_EQ(misspelt->location(), "--set outer.inner.dpeth=16");
}

TEST(Loader, ConflictingAndMalformedOverridesAreRejected) {
  Overrides overrides({"platform", "model"});
  overrides.add("platform.chip.clock=1 GHz");
  const std::optional<config::ConfigError> conflict =
      test::configErrorOf([&] { overrides.add("platform.chip.clock=2 GHz"); });
  ASSERT_TRUE(conflict);
  EXPECT_EQ(conflict->kind(), ErrorKind::kConflictingOverride);
  for (const char* option : {"platform", "=1", "chip.clock=1", "platform=1", "platform..x=1", "platform.x.=1"}) {
    const std::optional<config::ConfigError> e = test::configErrorOf([&] { overrides.add(option); });
    ASSERT_TRUE(e);
    EXPECT_EQ(e->kind(), ErrorKind::kBadOverride) << option;
  }
}

TEST(ConfigError, NearestMatchOnlySuggestsPlausibleTypos) {
  const std::vector<std::string> keys{"bandwidth", "capacity", "channels", "access_latency"};
  EXPECT_EQ(nearestMatch("bandwdth", keys), "bandwidth");
  EXPECT_EQ(nearestMatch("chanels", keys), "channels");
  EXPECT_EQ(nearestMatch("acess_latency", keys), "access_latency");
  EXPECT_EQ(nearestMatch("power", keys), "");
  // A swapped pair is one typo; candidates equally close are all offered.
  EXPECT_EQ(nearestMatch("t_rdc", {"t_rcd", "t_rfc", "t_rp"}), "t_rcd' or 't_rfc");
  EXPECT_EQ(nearestMatch("chnanels", keys), "channels");
}

}  // namespace
}  // namespace scoville::config
