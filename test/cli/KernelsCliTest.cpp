// `scoville kernels`, end to end: a small dataset on the H200 platform (every kind, an excluded
// kernel, idle and loaded power); the signed errors, no kernel beating its roofline, exclusions
// listed, power as the chip's static power plus the load's energy rate, byte-identical reruns,
// and bad input refused before anything runs. The shipped H200 dataset's fidelity is guarded in
// golden/KernelsGoldenTest.cpp.
#include <gtest/gtest.h>

#include <filesystem>

#include <nlohmann/json.hpp>
#include <string>

#include "test/support/Subprocess.h"

namespace scoville::test {
namespace {

using Json = nlohmann::json;

const char* kDataset = R"(name: t
description: a test
hardware: H200
platform: h200-hgx8
date: '2026-12-04'
source: a test
method: made up
kernels:
- {id: read, kind: hbm_read, bytes: 256 MiB, time: 70 us}
- {id: write, kind: hbm_write, bytes: 256 MiB, time: 80 us}
- {id: copy, kind: hbm_copy, bytes: 512 MiB, time: 1 ms, exclude: a made-up artefact}
- {id: gemv, kind: gemm, m: 8, k: 8192, n: 28672, time: 110 us}
- {id: gemm, kind: gemm, precision: fp8, m: 4096, k: 8192, n: 8192, time: 500 us}
- {id: decode, kind: attention_decode, batch: 8, context: 8192, heads: 64, kv_heads: 8, head_dim: 128, time: 72 us}
- {id: prefill, kind: attention_prefill, context: 2048, heads: 32, head_dim: 128, time: 160 us}
power:
- {id: idle, power: 125 W}
- {id: streaming, kernel: copy, power: 620 W}
- {id: computing, kernel: gemm, power: 690 W, sm_clock: 1455 MHz}
- {id: half, kernel: gemm, duty: 0.5, power: 400 W}
)";

TEST(KernelsCli, ComparesEveryKernelWithinItsRooflineListsExclusionsAndPowerAndIsDeterministic) {
  TempDir dir;
  writeFile(dir.file("k.yaml"), kDataset);
  const ProcessResult r = runScoville({"kernels", dir.file("k.yaml"), "--out", dir.file("a")});
  ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("copy"), std::string::npos);
  const Json k = Json::parse(readFile(dir.file("a/kernels.json")));
  EXPECT_EQ(k["platform"], "h200-hgx8");
  EXPECT_EQ(k["chip_type"], "h200-sxm");
  ASSERT_EQ(k["kernels"].size(), 7u);
  int compared = 0;
  for (const Json& e : k["kernels"]) {
    SCOPED_TRACE(e.dump());
    if (e["id"] == "copy") {
      EXPECT_EQ(e["status"], "excluded");
      EXPECT_EQ(e["reason"], "a made-up artefact");
      EXPECT_FALSE(e.contains("simulated_s"));
      continue;
    }
    ++compared;
    EXPECT_EQ(e["status"], "compared");
    const double measured = e["measured_s"].get<double>(), simulated = e["simulated_s"].get<double>();
    // Physics first: no simulated kernel beats its roofline (bytes / HBM bandwidth, FLOPs / peak).
    EXPECT_GE(simulated, e["roofline_s"].get<double>() * (1 - 1e-12));
    EXPECT_NEAR(e["error_percent"].get<double>(), (simulated - measured) / measured * 100.0, 1e-9);
    EXPECT_NEAR(e["simulated_fraction_of_roofline"].get<double>(), e["roofline_s"].get<double>() / simulated, 1e-12);
  }
  EXPECT_EQ(compared, 6);
  EXPECT_EQ(k["kernels"][3]["class"], "gemm_bf16_memory");
  EXPECT_EQ(k["kernels"][4]["class"], "gemm_fp8_compute");
  EXPECT_EQ(k["summary"]["hbm"]["points"], 2);
  EXPECT_TRUE(k["summary"]["hbm"]["fit_efficiency"].is_number()) << "two points fit a line";
  EXPECT_TRUE(k["summary"]["attention_decode"]["fit_efficiency"].is_null()) << "one point fits none";

  // Power: idle is the chip's static power; a load adds its dynamic energy over its time; an
  // excluded kernel still runs as a load. Streaming and computing draw more than idle.
  ASSERT_EQ(k["power"].size(), 4u);
  const double idle = k["power"][0]["simulated_w"].get<double>();
  EXPECT_DOUBLE_EQ(idle, 115.0) << "chips/h200-sxm.yaml: uncore + statics";
  EXPECT_GT(k["power"][1]["simulated_w"].get<double>(), idle);
  EXPECT_GT(k["power"][2]["simulated_w"].get<double>(), k["power"][1]["simulated_w"].get<double>());
  EXPECT_DOUBLE_EQ(k["power"][2]["sm_clock_hz"].get<double>(), 1.455e9);
  // Run half the time, the load adds half its dynamic power.
  EXPECT_NEAR(k["power"][3]["simulated_w"].get<double>(),
              idle + 0.5 * (k["power"][2]["simulated_w"].get<double>() - idle), 1e-9);
  EXPECT_DOUBLE_EQ(k["power"][3]["duty"].get<double>(), 0.5);
  EXPECT_NEAR(k["power"][0]["error_percent"].get<double>(), (idle - 125.0) / 125.0 * 100.0, 1e-9);

  // Deterministic: the same inputs give the same bytes.
  const ProcessResult again = runScoville({"kernels", dir.file("k.yaml"), "--out", dir.file("b"), "-q"});
  ASSERT_EQ(again.exitCode, 0) << again.err;
  EXPECT_EQ(readFile(dir.file("a/kernels.json")), readFile(dir.file("b/kernels.json")));
}

TEST(KernelsCli, ASoftwareStackStretchesComputeAndMemoryAsInServingRuns) {
  TempDir dir;
  writeFile(dir.file("k.yaml"), kDataset);
  writeFile(dir.file("s.yaml"),
            "name: half\ndescription: d\nframework: f\nhardware: h\ngemm_efficiency: 0.5\nmemory_efficiency: 0.5\n");
  ASSERT_EQ(runScoville({"kernels", dir.file("k.yaml"), "--out", dir.file("a"), "--only", "gemm,read"}).exitCode, 0);
  const ProcessResult r = runScoville({"kernels", dir.file("k.yaml"), "--out", dir.file("b"), "--only", "gemm,read",
                                       "--software-stack", dir.file("s.yaml")});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  const Json a = Json::parse(readFile(dir.file("a/kernels.json")));
  const Json b = Json::parse(readFile(dir.file("b/kernels.json")));
  EXPECT_EQ(b["software_stack"], "half");
  EXPECT_EQ(a["kernels"][1]["status"], "not_selected");
  for (int i : {0, 4}) {  // read, gemm
    SCOPED_TRACE(i);
    EXPECT_NEAR(b["kernels"][i]["simulated_s"].get<double>() / a["kernels"][i]["simulated_s"].get<double>(), 2.0, 0.05);
  }
  EXPECT_TRUE(b["power"].empty()) << "--only compares no power";
}

TEST(KernelsCli, BadInputIsRefusedNamingTheFileOrKeyAndNothingIsWritten) {
  TempDir dir;
  std::string typo = kDataset;
  typo.replace(typo.find("head_dim: 128, time: 72"), 8, "headdim:");
  writeFile(dir.file("typo.yaml"), typo);
  ProcessResult r = runScoville({"kernels", dir.file("typo.yaml"), "--out", dir.file("o")});
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.err.find("headdim"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("typo.yaml"), std::string::npos) << r.err;
  r = runScoville({"kernels", dir.file("missing.yaml"), "--out", dir.file("o")});
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.err.find("missing.yaml"), std::string::npos) << r.err;
  writeFile(dir.file("k.yaml"), kDataset);
  r = runScoville({"kernels", dir.file("k.yaml"), "--out", dir.file("o"), "--only", "gemv,nope"});
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.err.find("no kernel 'nope'"), std::string::npos) << r.err;
  r = runScoville({"kernels", dir.file("k.yaml"), "--out", dir.file("o"), "--platform", "jalapen"});
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.err.find("jalapen"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir.file("o/kernels.json")));
}

}  // namespace
}  // namespace scoville::test
