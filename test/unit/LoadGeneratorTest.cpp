// The load generator: closed loop, multi-turn, Poisson, trace replay. Pure logic, no SystemC.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <ostream>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "config/ConfigError.h"
#include "test/support/ConfigErrors.h"
#include "workloads/LoadGenerator.h"
#include "workloads/ScenarioConfig.h"

namespace scoville::workload {
namespace {

// ---------------------------------------------------------------------------------------------
// LoadGenerator

ScenarioConfig serving(LoadKind load, int inputTokens, int outputTokens, double ratio) {
  ScenarioConfig s;
  s.name = "test";
  s.description = "test";
  s.kind = ScenarioKind::kServing;
  s.load.impl = load;
  if (load == LoadKind::kClosedLoop) s.load.concurrency = 4;
  if (load == LoadKind::kPoisson) s.load.ratePerS = 50.0;
  s.inputTokens = inputTokens;
  s.outputTokens = outputTokens;
  s.randomRangeRatio = ratio;
  s.requests = 10;
  return s;
}

bool sameArrival(const Arrival& a, const Arrival& b) {
  return a.time == b.time && a.id == b.id && a.user == b.user && a.inputTokens == b.inputTokens &&
         a.outputTokens == b.outputTokens;
}

TEST(LoadGenerator, ClosedLoopLengthsLieInTheRatioRangeAndIdsFollowSendingOrder) {
  const ScenarioConfig sc = serving(LoadKind::kClosedLoop, 1000, 100, 0.8);
  LoadGenerator g(sc, 7);
  EXPECT_TRUE(g.closedLoop());
  EXPECT_EQ(g.users(), 4);
  EXPECT_EQ(g.sent(), 0u);
  const auto low = [](double ratio, int length) { return static_cast<uint64_t>(std::ceil(ratio * length)); };
  uint64_t minIn = ~0ull, maxIn = 0, minOut = ~0ull, maxOut = 0;
  for (uint64_t i = 1; i <= 4000; ++i) {
    const int user = static_cast<int>((i * 3) % 4);
    const double now = 0.5 * static_cast<double>(i);
    const Arrival a = g.next(user, now);
    ASSERT_EQ(a.id, i);
    EXPECT_EQ(a.user, user);
    EXPECT_EQ(a.time, now);
    EXPECT_GE(a.inputTokens, low(0.8, 1000));
    EXPECT_LE(a.inputTokens, 1000u);
    EXPECT_GE(a.outputTokens, low(0.8, 100));
    EXPECT_LE(a.outputTokens, 100u);
    minIn = std::min(minIn, a.inputTokens);
    maxIn = std::max(maxIn, a.inputTokens);
    minOut = std::min(minOut, a.outputTokens);
    maxOut = std::max(maxOut, a.outputTokens);
  }
  EXPECT_EQ(g.sent(), 4000u);
  // Both ends of each range are drawn.
  EXPECT_EQ(minIn, 800u);
  EXPECT_EQ(maxIn, 1000u);
  EXPECT_EQ(minOut, 80u);
  EXPECT_EQ(maxOut, 100u);
  EXPECT_EQ(g.maxInputTokens(), 1000u);
  EXPECT_EQ(g.maxOutputTokens(), 100u);
}

TEST(LoadGenerator, LengthsAreUniformOverTheRange) {
  // [ceil(0.5 x 7), 7] = [4, 7]: 8000 draws, 2000 expected per value (sd about 39).
  LoadGenerator g(serving(LoadKind::kClosedLoop, 7, 7, 0.5), 3);
  std::map<uint64_t, int> counts;
  for (int i = 0; i < 8000; ++i) ++counts[g.next(i % 4, 0.0).inputTokens];
  ASSERT_EQ(counts.size(), 4u);
  for (uint64_t v = 4; v <= 7; ++v) {
    EXPECT_NEAR(counts[v], 2000, 250) << v;
  }
}

TEST(LoadGenerator, RatioOneGivesExactlyTheLengthsAndRatioZeroNeverAnEmptyRequest) {
  LoadGenerator fixed(serving(LoadKind::kClosedLoop, 8192, 1024, 1.0), 11);
  for (int i = 0; i < 200; ++i) {
    const Arrival a = fixed.next(i % 4, 0.0);
    EXPECT_EQ(a.inputTokens, 8192u);
    EXPECT_EQ(a.outputTokens, 1024u);
  }
  LoadGenerator wide(serving(LoadKind::kClosedLoop, 5, 5, 0.0), 11);
  std::set<uint64_t> seen;
  for (int i = 0; i < 2000; ++i) {
    const Arrival a = wide.next(i % 4, 0.0);
    EXPECT_GE(a.inputTokens, 1u);
    EXPECT_LE(a.inputTokens, 5u);
    EXPECT_GE(a.outputTokens, 1u);
    seen.insert(a.inputTokens);
  }
  EXPECT_EQ(seen, (std::set<uint64_t>{1, 2, 3, 4, 5}));
}

TEST(LoadGenerator, SameSeedRepeatsTheSequenceAndAnotherSeedChangesIt) {
  for (LoadKind kind : {LoadKind::kClosedLoop, LoadKind::kPoisson}) {
    SCOPED_TRACE(static_cast<int>(kind));
    const ScenarioConfig sc = serving(kind, 1000, 100, 0.8);
    LoadGenerator a(sc, 5), b(sc, 5), c(sc, 6);
    int differences = 0;
    for (int i = 0; i < 50; ++i) {
      const bool closed = kind == LoadKind::kClosedLoop;
      const Arrival x = closed ? a.next(i % 4, i) : *a.nextOpen();
      const Arrival y = closed ? b.next(i % 4, i) : *b.nextOpen();
      const Arrival z = closed ? c.next(i % 4, i) : *c.nextOpen();
      EXPECT_TRUE(sameArrival(x, y)) << i;
      if (!sameArrival(x, z)) ++differences;
    }
    EXPECT_GT(differences, 40) << "a different seed draws different lengths";
  }
}

TEST(LoadGenerator, MultiTurnPromptsCarryTheConversationAndTheFourthRequestStartsANewOne) {
  ScenarioConfig sc = serving(LoadKind::kClosedLoop, 100, 10, 1.0);
  sc.load.concurrency = 1;
  sc.multiTurn.turns = 3;
  LoadGenerator fixed(sc, 1);
  EXPECT_EQ(fixed.maxInputTokens(), 3u * 100 + 2u * 10);
  EXPECT_EQ(fixed.maxOutputTokens(), 10u);
  std::vector<uint64_t> inputs;
  for (int i = 0; i < 7; ++i) inputs.push_back(fixed.next(0, i).inputTokens);
  EXPECT_EQ(inputs, (std::vector<uint64_t>{100, 210, 320, 100, 210, 320, 100}));

  // Ranged lengths, two users interleaved: each continues its own conversation.
  sc = serving(LoadKind::kClosedLoop, 1000, 200, 0.8);
  sc.load.concurrency = 2;
  sc.multiTurn.turns = 3;
  LoadGenerator g(sc, 9);
  std::map<int, std::vector<Arrival>> byUser;
  for (int i = 0; i < 16; ++i) {
    const int user = i % 2;
    const Arrival a = g.next(user, i);
    EXPECT_LE(a.inputTokens, g.maxInputTokens());
    byUser[user].push_back(a);
  }
  for (auto& [user, sent] : byUser) {
    SCOPED_TRACE(user);
    for (std::size_t k = 0; k < sent.size(); ++k) {
      const uint64_t fresh =
          k % 3 == 0 ? sent[k].inputTokens : sent[k].inputTokens - sent[k - 1].inputTokens - sent[k - 1].outputTokens;
      if (k % 3 != 0) {
        ASSERT_GT(sent[k].inputTokens, sent[k - 1].inputTokens + sent[k - 1].outputTokens) << k;
      }
      EXPECT_GE(fresh, 800u) << "turn " << k;
      EXPECT_LE(fresh, 1000u) << "turn " << k;
      EXPECT_GE(sent[k].outputTokens, 160u);
      EXPECT_LE(sent[k].outputTokens, 200u);
    }
  }
}

TEST(LoadGenerator, PoissonArrivalsIncreaseWithExponentialGapsAtTheRate) {
  const ScenarioConfig sc = serving(LoadKind::kPoisson, 1000, 100, 0.8);
  LoadGenerator g(sc, 2024);
  EXPECT_FALSE(g.closedLoop());
  EXPECT_EQ(g.users(), 0);
  constexpr int kDraws = 10000;
  double last = 0.0, sum = 0.0, sumSquares = 0.0;
  for (int i = 1; i <= kDraws; ++i) {
    const std::optional<Arrival> a = g.nextOpen();
    ASSERT_TRUE(a.has_value());
    EXPECT_EQ(a->id, static_cast<uint64_t>(i));
    EXPECT_EQ(a->user, -1);
    ASSERT_GT(a->time, last) << "arrivals strictly increase";
    const double gap = a->time - last;
    sum += gap;
    sumSquares += gap * gap;
    last = a->time;
    EXPECT_GE(a->inputTokens, 800u);
    EXPECT_LE(a->inputTokens, 1000u);
    EXPECT_GE(a->outputTokens, 80u);
    EXPECT_LE(a->outputTokens, 100u);
  }
  // Mean 1/rate with standard error 1% of it over 10k gaps: 5% is five standard errors. An
  // exponential's variance is its mean squared (sd of the estimate about 4.5%).
  const double mean = sum / kDraws;
  EXPECT_NEAR(mean, 1.0 / 50.0, 0.05 / 50.0);
  const double variance = sumSquares / kDraws - mean * mean;
  EXPECT_NEAR(variance / (mean * mean), 1.0, 0.25);
  EXPECT_EQ(g.sent(), static_cast<uint64_t>(kDraws));
}

/// A file under the test's temporary directory holding `text`.
std::string writeTrace(const std::string& name, const std::string& text) {
  const std::filesystem::path dir = std::filesystem::path(testing::TempDir()) / "scoville-serving-test";
  std::filesystem::create_directories(dir);
  const std::filesystem::path file = dir / name;
  std::ofstream(file) << text;
  return file.string();
}

TEST(LoadGenerator, TraceReplaysExactlyThenRunsDry) {
  const std::string file = writeTrace("good.csv",
                                      "# recorded load\n"
                                      "arrival_s,input_tokens,output_tokens\n"
                                      "0,100,10\n"
                                      "\n"
                                      "0.5,2000,20\n"
                                      "# same instant\n"
                                      "0.5,50,5\n"
                                      "1.25,7,1\n");
  const std::vector<TraceRequest> rows = readLoadTrace(file);
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(rows[1].arrival, 0.5);
  EXPECT_EQ(rows[1].inputTokens, 2000u);
  EXPECT_EQ(rows[1].outputTokens, 20u);

  ScenarioConfig sc = serving(LoadKind::kTrace, 0, 0, 1.0);
  sc.load.file = "good.csv";
  LoadGenerator g(sc, 1, file);
  EXPECT_FALSE(g.closedLoop());
  EXPECT_EQ(g.maxInputTokens(), 2000u);
  EXPECT_EQ(g.maxOutputTokens(), 20u);
  const std::vector<Arrival> expected = {
      {0.0, 1, -1, 100, 10}, {0.5, 2, -1, 2000, 20}, {0.5, 3, -1, 50, 5}, {1.25, 4, -1, 7, 1}};
  for (const Arrival& e : expected) {
    const std::optional<Arrival> a = g.nextOpen();
    ASSERT_TRUE(a.has_value());
    EXPECT_TRUE(sameArrival(*a, e)) << "request " << e.id << ": got t=" << a->time << " id " << a->id << " in "
                                    << a->inputTokens << " out " << a->outputTokens;
  }
  EXPECT_FALSE(g.nextOpen().has_value());
  EXPECT_FALSE(g.nextOpen().has_value()) << "stays dry";
  EXPECT_EQ(g.sent(), 4u);
}

/// The ConfigError reading `text` as a trace raises.
std::optional<config::ConfigError> traceError(const std::string& name, const std::string& text) {
  const std::string file = writeTrace(name, text);
  return test::configErrorOf([&] { readLoadTrace(file); }, text);
}

TEST(LoadGenerator, BadTraceFilesNameTheFileAndLine) {
  const std::string header = "arrival_s,input_tokens,output_tokens\n";
  struct Bad {
    const char* name;
    std::string text;
    int line;
  };
  const Bad cases[] = {
      {"header.csv", "time,input,output\n0,1,1\n", 1},
      {"header-after-comment.csv", "# c\n\narrival_s,input_tokens\n0,1,1\n", 3},
      {"letters.csv", header + "0,1,1\n0.5,abc,3\n", 3},
      {"two-fields.csv", header + "0,1\n", 2},
      {"four-fields.csv", header + "0,1,1,1\n", 2},
      {"semicolons.csv", header + "0;1;1\n", 2},
      {"fraction.csv", header + "0,1.5,1\n", 2},
      {"decreasing.csv", header + "0,1,1\n2,1,1\n1.5,1,1\n", 4},
      {"zero-input.csv", header + "0,1,1\n1,0,5\n", 3},
      {"zero-output.csv", header + "0,1,1\n1,5,0\n", 3},
      {"negative-time.csv", header + "-1,5,5\n", 2},
      {"past-the-limit.csv", header + "0,5,5\n1e12,5,5\n", 3},  // issue 38: replayed at 9.2e6 s
  };
  for (const Bad& b : cases) {
    SCOPED_TRACE(b.name);
    const std::optional<config::ConfigError> e = traceError(b.name, b.text);
    if (!e) continue;
    const std::string file = writeTrace(b.name, b.text);
    EXPECT_EQ(e->location(), file + ":" + std::to_string(b.line)) << e->what();
    EXPECT_NE(std::string(e->what()).find(file + ":" + std::to_string(b.line)), std::string::npos) << e->what();
  }
}

TEST(LoadGenerator, TraceWithNegativeLengthIsRejected) {
  // A length of -5 must not wrap around to 2^64 - 5 tokens.
  const std::string header = "arrival_s,input_tokens,output_tokens\n";
  for (const char* row : {"0,-5,5\n", "0,5,-5\n"}) {
    SCOPED_TRACE(row);
    const std::optional<config::ConfigError> e = traceError("negative-length.csv", header + row);
    if (e) {
      EXPECT_NE(e->location().find("negative-length.csv:2"), std::string::npos) << e->what();
    }
  }
}

TEST(LoadGenerator, MissingOrEmptyTraceFilesNameTheFile) {
  const std::string missing = writeTrace("exists.csv", "") + ".missing";
  const std::optional<config::ConfigError> e = test::configErrorOf([&] { readLoadTrace(missing); }, missing);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->kind(), config::ErrorKind::kFileNotFound);
  EXPECT_TRUE(test::mentions(e, {missing}));
  ScenarioConfig sc = serving(LoadKind::kTrace, 0, 0, 1.0);
  sc.load.file = "x.csv";
  EXPECT_THROW(LoadGenerator(sc, 1, missing), config::ConfigError) << "the generator reads its trace up front";
  for (const auto& [name, text] : {std::pair<std::string, std::string>{"empty.csv", ""},
                                   {"header-only.csv", "arrival_s,input_tokens,output_tokens\n# nothing\n"}}) {
    SCOPED_TRACE(name);
    const std::optional<config::ConfigError> e = traceError(name, text);
    if (e) {
      EXPECT_NE(e->location().find(name), std::string::npos) << e->what();
    }
  }
}

}  // namespace
}  // namespace scoville::workload
