// Sweeps end to end, through the scoville executable: a grid run in parallel processes, results
// and CSVs, resuming after lost or broken reports, kill -9, Slurm array tasks, merging, and bad
// sweep input. A tiny dense model on one chip keeps each point well under a second.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <thread>

#include "test/support/Subprocess.h"

namespace scoville::test {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

class SweepCliTest : public ::testing::Test {
 protected:
  TempDir dir;

  /// A sweep of tiny-dense on one jalapeno chip, with short requests, into `out`.
  std::vector<std::string> sweep(const std::string& out, std::vector<std::string> extra, int outputTokens = 16) const {
    std::vector<std::string> args{"sweep",
                                  "-p",
                                  "jalapeno",
                                  "-m",
                                  "tiny-dense",
                                  "-s",
                                  "inferencex-1k1k",
                                  "--set",
                                  "scenario.requests=4",
                                  "--set",
                                  "scenario.input_tokens=256",
                                  "--set",
                                  "scenario.output_tokens=" + std::to_string(outputTokens),
                                  "--set",
                                  "scenario.random_range_ratio=1",
                                  "--out",
                                  dir.file(out)};
    args.insert(args.end(), extra.begin(), extra.end());
    return args;
  }

  Json json(const std::string& path) const { return Json::parse(readFile(dir.file(path))); }

  static std::size_t lines(const std::string& text) {
    return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
  }
};

TEST_F(SweepCliTest, RunsTheGridInParallelWritesResultsAndResumesOnlyWhatIsMissing) {
  const auto args = sweep("s", {"-c", "1,4", "--vary", "chip.hbm.bandwidth=2 TB/s,8 TB/s", "-j", "2"});
  const ProcessResult first = runScoville(args);
  ASSERT_EQ(first.exitCode, 0) << first.out << first.err;
  EXPECT_NE(first.out.find("[4/4]"), std::string::npos) << "one plain line per point when not a terminal";

  const Json manifest = json("s/sweep.json");
  ASSERT_EQ(manifest["points"].size(), 4u);
  const Json results = json("s/results.json");
  ASSERT_EQ(results["points"].size(), 4u);
  EXPECT_TRUE(results["missing"].empty());
  ASSERT_EQ(results["series"].size(), 2u) << "one curve per bandwidth";
  for (const auto& point : manifest["points"]) {
    const std::string pointDir = "s/" + point["dir"].get<std::string>();
    const Json report = json(pointDir + "/report.json");
    EXPECT_EQ(report["results"]["load"]["concurrency"].get<int>(),
              std::stoi(point["coordinates"]["concurrency"].get<std::string>()));
    // requests.csv: a header and one line per request sent; power.csv: a header and the timeline.
    EXPECT_EQ(lines(readFile(dir.file(pointDir + "/requests.csv"))),
              report["results"]["load"]["sent_requests"].get<std::size_t>() + 1);
    EXPECT_EQ(lines(readFile(dir.file(pointDir + "/power.csv"))), report["power"]["timeline"]["platform_w"].size() + 1);
  }
  EXPECT_EQ(lines(readFile(dir.file("s/points.csv"))), 5u);
  // Decode is memory-bound: four times the HBM bandwidth serves more tokens per kW, and no point
  // of a curve is off its frontier here (more users, more throughput, less interactivity).
  const Json& ratios = results["comparison"]["ratios"];
  EXPECT_EQ(results["comparison"]["baseline"], "jalapeno (chip.hbm.bandwidth=2 TB/s)");
  EXPECT_GT(ratios[1]["peak_throughput_per_kw_rated_ratio"].get<double>(), 1.2);
  EXPECT_EQ(results["series"][0]["frontier_per_kw"].size(), 2u);

  // Lose one report, break another: the restart reruns exactly those two, leaves the rest alone,
  // and ends with the same bytes.
  const std::string resultsBytes = readFile(dir.file("s/results.json"));
  const auto pointDir = [&](int i) { return dir.file("s/" + manifest["points"][i]["dir"].get<std::string>()); };
  const std::string kept = readFile(pointDir(3) + "/report.json");
  const auto keptTime = fs::last_write_time(pointDir(3) + "/report.json");
  fs::remove(pointDir(0) + "/report.json");
  writeFile(pointDir(1) + "/report.json", kept.substr(0, kept.size() / 2));
  const ProcessResult resumed = runScoville(args);
  ASSERT_EQ(resumed.exitCode, 0) << resumed.out << resumed.err;
  EXPECT_NE(resumed.out.find("2 of 4 points already done"), std::string::npos) << resumed.out;
  EXPECT_NE(resumed.out.find("(2 run, 2 reused, 0 failed)"), std::string::npos) << resumed.out;
  EXPECT_EQ(fs::last_write_time(pointDir(3) + "/report.json"), keptTime);
  EXPECT_EQ(readFile(dir.file("s/results.json")), resultsBytes);

  // One worker instead of two: byte-identical results.
  const ProcessResult serial =
      runScoville(sweep("serial", {"-c", "1,4", "--vary", "chip.hbm.bandwidth=2 TB/s,8 TB/s", "-j", "1"}));
  ASSERT_EQ(serial.exitCode, 0) << serial.err;
  EXPECT_EQ(readFile(dir.file("serial/results.json")), resultsBytes);
  EXPECT_EQ(readFile(dir.file("serial/points.csv")), readFile(dir.file("s/points.csv")));

  // The design-review report of the sweep: one self-contained page and non-empty plots.
  const ProcessResult report = runScoville({"report", dir.file("s"), "--out", dir.file("review")});
  ASSERT_EQ(report.exitCode, 0) << report.out << report.err;
  const std::string html = readFile(dir.file("review/index.html"));
  EXPECT_NE(html.find("data:image/png;base64,"), std::string::npos);
  EXPECT_NE(html.find("jalapeno (chip.hbm.bandwidth=8 TB/s)"), std::string::npos);
  std::size_t plots = 0;
  for (const auto& entry : fs::directory_iterator(dir.file("review/figures"))) {
    EXPECT_GT(fs::file_size(entry.path()), 5000u) << entry.path();
    ++plots;
  }
  EXPECT_GE(plots, 4u);
  EXPECT_EQ(json("review/results.json")["points"].size(), 4u) << "the report's results are the sweep's";
}

TEST_F(SweepCliTest, KillNineLeavesWholeReportsOrNoneAndTheRestartFinishes) {
  // Points long enough (about half a second each) for the kill to land while one runs.
  const auto args = sweep("k", {"-c", "1,2,3", "-j", "1"}, 384);
  const int pid = startScoville(args);
  // Kill the sweep as soon as its first point is done, while the second runs.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  bool firstDone = false;
  int status = 0;
  while (!firstDone && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    ASSERT_EQ(::waitpid(pid, &status, WNOHANG), 0) << "the sweep ended before it was killed";
    if (fs::exists(dir.file("k/points"))) {
      for (const auto& entry : fs::directory_iterator(dir.file("k/points"))) {
        firstDone = firstDone || fs::exists(entry.path() / "report.json");
      }
    }
  }
  ::kill(pid, SIGKILL);
  ::waitpid(pid, &status, 0);
  ASSERT_TRUE(firstDone) << "the first point never finished";
  const auto reports = [&] {
    std::vector<std::string> found;
    for (const auto& entry : fs::directory_iterator(dir.file("k/points"))) {
      if (fs::exists(entry.path() / "report.json")) found.push_back(entry.path().filename().string());
    }
    std::sort(found.begin(), found.end());
    return found;
  };
  const std::vector<std::string> atKill = reports();
  // Longer than a point takes: a run that outlived its sweep would have written its report now.
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  EXPECT_EQ(reports(), atKill) << "a run outlived its killed sweep";

  const std::size_t whole = atKill.size();
  for (const std::string& point : atKill) {
    EXPECT_NO_THROW(Json::parse(readFile(dir.file("k/points/" + point + "/report.json")))) << point;
  }
  EXPECT_GE(whole, 1u);
  EXPECT_LT(whole, 3u) << "the kill came after the sweep: nothing was interrupted";
  EXPECT_FALSE(fs::exists(dir.file("k/results.json")));

  const ProcessResult restarted = runScoville(args);
  ASSERT_EQ(restarted.exitCode, 0) << restarted.out << restarted.err;
  EXPECT_NE(restarted.out.find(std::to_string(whole) + " of 3 points already done"), std::string::npos)
      << restarted.out;
  EXPECT_EQ(json("k/results.json")["points"].size(), 3u);
  // The same sweep, never interrupted (and with two workers): the same results, byte for byte.
  auto uninterrupted = sweep("u", {"-c", "1,2,3", "-j", "2"}, 384);
  const ProcessResult straight = runScoville(uninterrupted);
  ASSERT_EQ(straight.exitCode, 0) << straight.err;
  EXPECT_EQ(readFile(dir.file("u/results.json")), readFile(dir.file("k/results.json")));
  EXPECT_EQ(readFile(dir.file("u/points.csv")), readFile(dir.file("k/points.csv")));
}

TEST_F(SweepCliTest, SlurmArrayTasksRunThePointsAndMergeCombinesThem) {
  const ProcessResult emitted = runScoville(sweep("slurm", {"-c", "1,2", "--emit-slurm"}));
  ASSERT_EQ(emitted.exitCode, 0) << emitted.err;
  const std::string script = dir.file("slurm/slurm/sweep.sbatch");
  const std::string text = readFile(script);
  EXPECT_NE(text.find("#SBATCH --array=0-1\n"), std::string::npos) << text;
  EXPECT_FALSE(fs::exists(dir.file("slurm/results.json"))) << "emitting runs nothing";

  // What Slurm does for each array task: run the script with the task's index in the environment.
  for (int task = 0; task < 2; ++task) {
    const std::string command = "SLURM_ARRAY_TASK_ID=" + std::to_string(task) + " bash '" + script + "' > /dev/null";
    ASSERT_EQ(std::system(command.c_str()), 0) << command;
  }
  const ProcessResult again = runScoville(sweep("slurm", {"-c", "1,2", "--emit-slurm"}));
  EXPECT_NE(again.out.find("every point is done"), std::string::npos) << again.out;

  const ProcessResult merged = runScoville({"merge", dir.file("slurm"), "-q"});
  ASSERT_EQ(merged.exitCode, 0) << merged.err;
  EXPECT_EQ(json("slurm/results.json")["points"].size(), 2u);

  // Merging loose runs: the overrides that differ between them become the curve's coordinates.
  const ProcessResult loose = runScoville({"merge", dir.file("slurm/points"), "--out", dir.file("loose"), "-q"});
  ASSERT_EQ(loose.exitCode, 0) << loose.err;
  const Json looseResults = json("loose/results.json");
  ASSERT_EQ(looseResults["series"].size(), 1u);
  EXPECT_TRUE(looseResults["points"][0]["coordinates"].contains("concurrency"));
  EXPECT_EQ(looseResults["points"][0]["source"].get<std::string>().rfind("../slurm/points/", 0), 0u);
}

TEST_F(SweepCliTest, ADecodeStepSweepIsACurveOverTheBatch) {
  const ProcessResult r =
      runScoville({"sweep", "-m", "tiny-dense", "-s", "decode-step", "-c", "1,8", "-q", "--out", dir.file("d")});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  const Json results = json("d/results.json");
  ASSERT_EQ(results["series"].size(), 1u);
  ASSERT_EQ(results["points"].size(), 2u);
  EXPECT_EQ(results["points"][1]["concurrency"], 8);
  // A bigger batch streams the same weights for more users: more throughput, a little less speed each.
  EXPECT_GT(results["points"][1]["throughput_per_chip_tok_per_s"]["output"].get<double>(),
            2 * results["points"][0]["throughput_per_chip_tok_per_s"]["output"].get<double>());
  EXPECT_LE(results["points"][1]["interactivity_tok_per_s_per_user"].get<double>(),
            results["points"][0]["interactivity_tok_per_s_per_user"].get<double>());
}

// Two sweeps that differ only in a sweep-wide --set (a lower HBM bandwidth here; a serving policy in
// scripts/experiment-phase-policies), merged together, are two series: the override becomes a
// coordinate of each sweep's points.
TEST_F(SweepCliTest, SweepsDifferingInASweepWideSetAreSeparateSeriesWhenMerged) {
  const ProcessResult plain =
      runScoville({"sweep", "-m", "tiny-dense", "-s", "decode-step", "-c", "1,8", "-q", "--out", dir.file("plain")});
  ASSERT_EQ(plain.exitCode, 0) << plain.err;
  const ProcessResult lowered =
      runScoville({"sweep", "-m", "tiny-dense", "-s", "decode-step", "-c", "1,8", "-q", "--set",
                   "platform.chip_types[0].hbm.bandwidth=3 TB/s", "--out", dir.file("lowered")});
  ASSERT_EQ(lowered.exitCode, 0) << lowered.err;
  const ProcessResult merged =
      runScoville({"merge", dir.file("plain"), dir.file("lowered"), "--out", dir.file("merged")});
  ASSERT_EQ(merged.exitCode, 0) << merged.err;
  const Json results = json("merged/results.json");
  ASSERT_EQ(results["series"].size(), 2u);
  const std::string key = "platform.chip_types[0].hbm.bandwidth";
  EXPECT_EQ(results["points"][0]["coordinates"][key], "(as in the file)");
  EXPECT_EQ(results["points"][2]["coordinates"][key], "3 TB/s");
  EXPECT_NE(results["series"][1]["label"].get<std::string>().find("3 TB/s"), std::string::npos);
}

// Issue 38: a stored point is reused only when every file its run would read is unchanged, the
// includes of includes too, and only when this build computed it.
TEST_F(SweepCliTest, AnEditedInputFileOrIncludeMakesItsPointsRunAgain) {
  const std::string src = std::string(SCOVILLE_SOURCE_DIR) + "/platforms/";
  fs::create_directories(dir.file("p/chips"));
  fs::create_directories(dir.file("p/dram"));
  fs::copy_file(src + "jalapeno.yaml", dir.file("p/p.yaml"));
  fs::copy_file(src + "chips/jalapeno.yaml", dir.file("p/chips/jalapeno.yaml"));
  fs::copy_file(src + "dram/hbm3.yaml", dir.file("p/dram/hbm3.yaml"));
  std::vector<std::string> args = sweep("s", {"-c", "2"});
  args[2] = dir.file("p/p.yaml");
  const auto itl = [this] {
    const Json results = json("s/results.json");
    return results["points"][0]["itl_s"]["median"].get<double>();
  };
  const auto edit = [this](const std::string& file, const std::string& from, const std::string& to) {
    std::string text = readFile(dir.file(file));
    const auto at = text.find(from);
    ASSERT_NE(at, std::string::npos) << from;
    text.replace(at, from.size(), to);
    writeFile(dir.file(file), text);
  };

  ProcessResult r = runScoville(args);
  ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
  const double fast = itl();
  r = runScoville(args);
  ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("1 of 1 points already done"), std::string::npos) << r.out;

  edit("p/chips/jalapeno.yaml", "bandwidth: 7.2 TB/s", "bandwidth: 1.2 TB/s");  // an include
  r = runScoville(args);
  ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
  EXPECT_EQ(r.out.find("already done"), std::string::npos) << r.out;
  const double slow = itl();
  EXPECT_GT(slow, 3.0 * fast) << "decode is memory-bound: a sixth of the bandwidth is several times slower";

  edit("p/dram/hbm3.yaml", "t_rp: ", "t_rp: 1");  // an include's include: 14 ns becomes 114 ns
  args.push_back("--dry-run");
  r = runScoville(args);
  ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("to run: its input files changed"), std::string::npos) << r.out;
}

TEST_F(SweepCliTest, BadSweepInputIsRejectedBeforeAnyRunNamingTheOption) {
  struct Case {
    std::vector<std::string> extra;
    std::string expected;
  };
  const std::vector<Case> cases{
      {{"--vary", "platform.chip_types[0].hbm.bandwdth=1 TB/s,2 TB/s"}, "bandwdth"},
      {{"--vary", "chip.hbm.bandwidth=1 TB/s,2 furlongs"}, "furlongs"},
      {{"--vary", "hbm.bandwidth=1 TB/s"}, "not a key"},
      {{"-c", "1,2", "--vary", "concurrency=4,8"}, "give it once"},
      {{"-c", "1,x"}, "x"},
      {{"-j", "0"}, "--jobs"},
      {{"--timing", "fast"}, "--timing"},
  };
  for (const Case& c : cases) {
    const ProcessResult r = runScoville(sweep("bad", c.extra));
    EXPECT_EQ(r.exitCode, 2) << c.expected << ": " << r.err;
    EXPECT_NE(r.err.find(c.expected), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(dir.file("bad/sweep.json"))) << "nothing is written before every point checks";
  }
  writeFile(dir.file("poisson.yaml"),
            "name: p\ndescription: p\nkind: serving\nload: {impl: poisson, rate_per_s: 100}\n"
            "input_tokens: 64\noutput_tokens: 8\nrequests: 4\n");
  const ProcessResult poisson =
      runScoville({"sweep", "-m", "tiny-dense", "-s", dir.file("poisson.yaml"), "-c", "1,2", "--out", dir.file("p")});
  EXPECT_EQ(poisson.exitCode, 2);
  EXPECT_NE(poisson.err.find("not a closed-loop serving load"), std::string::npos) << poisson.err;
  const ProcessResult missing = runScoville({"merge", dir.file("nowhere")});
  EXPECT_EQ(missing.exitCode, 2);
  EXPECT_NE(missing.err.find("nowhere"), std::string::npos) << missing.err;
  const ProcessResult outOfRange = runScoville({"sweep", "--out", dir.file("nowhere"), "--point", "3"});
  EXPECT_EQ(outOfRange.exitCode, 2);
  EXPECT_NE(outOfRange.err.find("sweep.json"), std::string::npos) << outOfRange.err;
  fs::create_directories(dir.file("broken"));
  writeFile(dir.file("broken/sweep.json"), "{\"points\": [");
  const ProcessResult broken = runScoville({"sweep", "--out", dir.file("broken"), "--point", "0"});
  EXPECT_EQ(broken.exitCode, 2);
  EXPECT_NE(broken.err.find("broken/sweep.json"), std::string::npos) << broken.err;
}

}  // namespace
}  // namespace scoville::test
