#include "workloads/SoftwareStack.h"

namespace scoville::workload {

using config::optional;
using config::required;
using config::Schema;

double SoftwareStackConfig::computeEfficiency(const std::string& opName) const {
  if (opName == "attention" || opName == "attention_combine") return attentionEfficiency;
  if (opName == "experts") return moeEfficiency;
  return gemmEfficiency;
}

nlohmann::ordered_json SoftwareStackConfig::toJson(const std::string& givenAs) const {
  nlohmann::ordered_json out = {{"name", name},
                                {"given_as", givenAs},
                                {"framework", framework},
                                {"hardware", hardware},
                                {"gemm_efficiency", gemmEfficiency},
                                {"attention_efficiency", attentionEfficiency},
                                {"moe_efficiency", moeEfficiency},
                                {"memory_efficiency", memoryEfficiency},
                                {"mixed_input_efficiency", mixedInputEfficiency},
                                {"collective_latency_s", collectiveLatencyS},
                                {"step_overhead_s", stepOverheadS},
                                {"kernel_launch_s", kernelLaunchS},
                                {"request_overhead_s", requestOverheadS},
                                {"request_overhead_per_token_s", requestOverheadPerTokenS}};
  if (attentionKernel) out["attention_kernel"] = attentionKernel->name;
  if (!moeKernels.empty()) {
    nlohmann::ordered_json kernels = nlohmann::ordered_json::array();
    for (const MoeKernelConfig& k : moeKernels) kernels.push_back(k.name);
    out["moe_kernels"] = kernels;
  }
  return out;
}

bool SoftwareStackConfig::ideal() const {
  return gemmEfficiency == 1.0 && attentionEfficiency == 1.0 && moeEfficiency == 1.0 && memoryEfficiency == 1.0 &&
         mixedInputEfficiency == 1.0 && collectiveLatencyS == 0.0 && stepOverheadS == 0.0 && kernelLaunchS == 0.0 &&
         requestOverheadS == 0.0 && requestOverheadPerTokenS == 0.0 && !attentionKernel && moeKernels.empty();
}

const MoeKernelConfig* SoftwareStackConfig::moeKernelFor(tlm::Precision p) const {
  for (const MoeKernelConfig& k : moeKernels) {
    if (k.serves(p)) return &k;
  }
  return nullptr;
}

const Schema<SoftwareStackConfig>& SoftwareStackConfig::schema() {
  const config::Range efficiency{0.0, true, 1.0};
  static const Schema<SoftwareStackConfig> s =
      Schema<SoftwareStackConfig>("software_stack",
                                  "Root of a software-stack profile (workloads/stacks/*.yaml): what a serving "
                                  "framework achieves on a platform relative to the modelled hardware "
                                  "(workloads/SoftwareStack.h).")
          .text("name", &SoftwareStackConfig::name, required(), "profile name, used in reports")
          .text("description", &SoftwareStackConfig::description, required(), "what it stands for")
          .text("framework", &SoftwareStackConfig::framework, required(), "the serving framework, as published")
          .text("hardware", &SoftwareStackConfig::hardware, required(), "the hardware it was calibrated on")
          .number("gemm_efficiency", &SoftwareStackConfig::gemmEfficiency, optional("1"), efficiency,
                  "achieved fraction of the modelled compute time of dense ops (projections, FFN, shared experts, "
                  "LM head, norms): their own service on the compute units takes time / efficiency (a wait behind "
                  "another stream's work, such as the next tile's weight conversions, is not stretched)")
          .number("attention_efficiency", &SoftwareStackConfig::attentionEfficiency, optional("1"), efficiency,
                  "the same for the attention kernel (scores and values over the KV cache)")
          .number("moe_efficiency", &SoftwareStackConfig::moeEfficiency, optional("1"), efficiency,
                  "the same for the routed experts' grouped GEMMs")
          .number("memory_efficiency", &SoftwareStackConfig::memoryEfficiency, optional("1"), efficiency,
                  "achieved fraction of the modelled load time of a tile (weights and KV from HBM)")
          .number("mixed_input_efficiency", &SoftwareStackConfig::mixedInputEfficiency, optional("1"), efficiency,
                  "multiplies the compute efficiency of a weight GEMM whose weights are stored narrower than the "
                  "model's compute precision (W4A8, W4A16: the kernel converts them in its main loop)")
          .quantity("collective_latency", &SoftwareStackConfig::collectiveLatencyS, config::dim::kTime, optional("0 s"),
                    config::nonNegative(),
                    "software latency before each collective (library launch and synchronisation)")
          .quantity("step_overhead", &SoftwareStackConfig::stepOverheadS, config::dim::kTime, optional("0 s"),
                    config::nonNegative(),
                    "host time before each engine step (scheduling, launch), on top of scheduler.step_overhead")
          .quantity("request_overhead", &SoftwareStackConfig::requestOverheadS, config::dim::kTime, optional("0 s"),
                    config::nonNegative(),
                    "the serving front end's time per request outside the engine steps (the API server, the "
                    "hand-over to the engine and the first token's way back): a request reaches the scheduler "
                    "this long after it was sent, plus request_overhead_per_token per prompt token")
          .quantity("request_overhead_per_token", &SoftwareStackConfig::requestOverheadPerTokenS, config::dim::kTime,
                    optional("0 s"), config::nonNegative(),
                    "the front end's time per prompt token (tokenisation, the prompt's copy to the engine)")
          .quantity("kernel_launch", &SoftwareStackConfig::kernelLaunchS, config::dim::kTime, optional("0 s"),
                    config::nonNegative(),
                    "launch latency of each kernel (the tiles of one op class of one layer): above 0, kernels run "
                    "one after another, each starting this long after the previous one and its collective end, "
                    "and its loads wait for that start (a GPU stream); 0: tiles stream across ops")
          .textList("calibrated_on", &SoftwareStackConfig::calibratedOn, optional("[]"),
                    "the validation points (dataset ids) its values were fitted to")
          .optionalChild("attention_kernel", &SoftwareStackConfig::attentionKernel, AttentionKernelConfig::schema(),
                         "the stack's attention kernel: the step planners lay GQA attention out as it does (tiles, "
                         "MMA, flash-decoding) and the chip's modules time it; absent: exact GEMMs")
          .childList("moe_kernels", &SoftwareStackConfig::moeKernels, MoeKernelConfig::schema(), optional("[]"),
                     "the routed experts' grouped-GEMM kernels: the first that serves a model's expert precision "
                     "runs its experts, each expert's tokens padded to its tiles' rows; none: exact GEMMs");
  return s;
}

}  // namespace scoville::workload
