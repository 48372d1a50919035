// Transaction rates of the raw SystemC kernel and of each hardware model, in both timing modes.
//
// SystemC elaborates once per process, so every module and every initiator used by any benchmark
// is built before the first one runs; a benchmark iteration wakes its initiator, which issues a
// batch of transactions, and runs sc_start() until the kernel is idle again. Items per second is
// then simulated transactions (or activations) per wall-clock second. Run: scripts/bench.
#include <benchmark/benchmark.h>

#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>
#include <tlm_utils/tlm_quantumkeeper.h>
#include <memory>
#include <systemc>
#include <tlm>
#include <vector>

#include "hw/dram/MemoryController.h"
#include "hw/Sram.h"
#include "hw/TensorCore.h"
#include "hw/VectorUnit.h"
#include "platforms/PlatformConfig.h"
#include "tlm/InitiatorPort.h"
#include "tlm/PayloadPool.h"
#include "config/Loader.h"

namespace scoville::bench {
namespace {

constexpr int kBatch = 10000;

/// Issues `kBatch` copies of one transaction (address advancing by `stride`) each time it is woken.
class BatchInitiator : public sc_core::sc_module {
 public:
  tlm::InitiatorPort port;

  BatchInitiator(const sc_core::sc_module_name& name, tlm::TimingMode mode, tlm::OpExtension op, uint64_t stride,
                 uint64_t wrap)
      : sc_core::sc_module(name),
        port("port", mode, sc_core::sc_time(1, sc_core::SC_US)),
        m_op(op),
        m_stride(stride),
        m_wrap(wrap) {
    SC_HAS_PROCESS(BatchInitiator);
    SC_THREAD(run);
  }
  void wake() { m_go.notify(sc_core::SC_ZERO_TIME); }

 private:
  void run() {
    for (;;) {
      wait(m_go);
      for (int i = 0; i < kBatch; ++i) {
        tlm::PayloadRef payload(m_pool);
        payload.op() = m_op;
        payload->set_address((m_next += m_stride) % m_wrap);
        port.transport(*payload);
      }
      port.sync();
    }
  }
  sc_core::sc_event m_go;
  tlm::OpExtension m_op;
  uint64_t m_stride;
  uint64_t m_wrap;
  uint64_t m_next = 0;
  tlm::PayloadPool m_pool;
};

/// A target that answers at once with a fixed delay (the raw kernel benchmarks).
class NullTarget : public sc_core::sc_module {
 public:
  tlm_utils::simple_target_socket<NullTarget> socket{"socket"};
  explicit NullTarget(const sc_core::sc_module_name& name) : sc_core::sc_module(name) {
    socket.register_b_transport(this, &NullTarget::bTransport);
  }

 private:
  void bTransport(::tlm::tlm_generic_payload& payload, sc_core::sc_time& delay) {
    delay += sc_core::sc_time(10, sc_core::SC_NS);
    payload.set_response_status(::tlm::TLM_OK_RESPONSE);
  }
};

/// Raw kernel: b_transport and wait() on every call, or with a 1 us quantum keeper.
class RawInitiator : public sc_core::sc_module {
 public:
  tlm_utils::simple_initiator_socket<RawInitiator> socket{"socket"};
  RawInitiator(const sc_core::sc_module_name& name, bool quantum) : sc_core::sc_module(name), m_quantum(quantum) {
    SC_HAS_PROCESS(RawInitiator);
    SC_THREAD(run);
  }
  void wake() { m_go.notify(sc_core::SC_ZERO_TIME); }

 private:
  void run() {
    ::tlm::tlm_generic_payload payload;
    tlm_utils::tlm_quantumkeeper keeper;
    for (;;) {
      wait(m_go);
      for (int i = 0; i < kBatch; ++i) {
        sc_core::sc_time delay = m_quantum ? keeper.get_local_time() : sc_core::SC_ZERO_TIME;
        socket->b_transport(payload, delay);
        if (m_quantum) {
          keeper.set(delay);
          if (keeper.need_sync()) keeper.sync();
        } else {
          wait(delay);
        }
      }
      if (m_quantum) keeper.sync();
    }
  }
  bool m_quantum;
  sc_core::sc_event m_go;
};

/// Raw kernel: an SC_METHOD re-triggering itself after 1 ns, kBatch times per wake.
class TimedMethod : public sc_core::sc_module {
 public:
  explicit TimedMethod(const sc_core::sc_module_name& name) : sc_core::sc_module(name) {
    SC_HAS_PROCESS(TimedMethod);
    SC_METHOD(tick);
    sensitive << m_go;
    dont_initialize();
  }
  void wake() {
    m_left = kBatch;
    m_go.notify(sc_core::SC_ZERO_TIME);
  }

 private:
  void tick() {
    if (--m_left > 0) next_trigger(1, sc_core::SC_NS);
  }
  sc_core::sc_event m_go;
  int m_left = 0;
};

struct World {
  std::vector<std::unique_ptr<sc_core::sc_module>> modules;
  std::map<std::string, BatchInitiator*> initiators;
  RawInitiator* rawWait = nullptr;
  RawInitiator* rawQuantum = nullptr;
  TimedMethod* method = nullptr;

  template <class T, class... Args>
  T* make(Args&&... args) {
    auto module = std::make_unique<T>(std::forward<Args>(args)...);
    T* raw = module.get();
    modules.push_back(std::move(module));
    return raw;
  }
};

World& world() {
  static World w;
  return w;
}

void elaborate() {
  World& w = world();
  const platform::PlatformConfig platform = platform::PlatformConfig::schema().parse(
      config::loadConfigFile("platform", config::resolveConfigFile("platform", "platforms", "jalapeno")));
  const hw::ChipConfig& chip = platform.chipConfig(0);

  auto* nullTarget = w.make<NullTarget>("null_wait");
  w.rawWait = w.make<RawInitiator>("raw_wait", false);
  w.rawWait->socket.bind(nullTarget->socket);
  auto* nullTarget2 = w.make<NullTarget>("null_quantum");
  w.rawQuantum = w.make<RawInitiator>("raw_quantum", true);
  w.rawQuantum->socket.bind(nullTarget2->socket);
  w.method = w.make<TimedMethod>("method");

  tlm::OpExtension gemm;
  gemm.kind = tlm::OpKind::kGemm;
  gemm.shape = tlm::GemmShape{8, 4096, 4096, 1};
  tlm::OpExtension read64;
  read64.kind = tlm::OpKind::kRead;
  read64.bytes = 64;
  tlm::OpExtension read1m;
  read1m.kind = tlm::OpKind::kRead;
  read1m.bytes = 1 << 20;
  tlm::OpExtension vector;
  vector.kind = tlm::OpKind::kVector;
  vector.elementOps = 65536;

  for (const auto& [modeName, mode] : tlm::timingModeNames()) {
    const std::string m = modeName;
    auto bindTo = [&](const std::string& name, auto& targetSocket, tlm::OpExtension op, uint64_t stride,
                      uint64_t wrap) {
      auto* initiator = w.make<BatchInitiator>((name + "_" + m).c_str(), mode, op, stride, wrap);
      initiator->port.socket.bind(targetSocket);
      w.initiators[name + "/" + m] = initiator;
    };
    auto* tc = w.make<hw::TensorCore>(("tensor_core_" + m).c_str(), chip.tensorCore);
    bindTo("tensor_core_gemm", tc->socket, gemm, 0, 1);
    auto* vu = w.make<hw::VectorUnit>(("vector_unit_" + m).c_str(), chip.vectorUnit);
    bindTo("vector_unit_op", vu->socket, vector, 0, 1);
    auto* sram = w.make<hw::Sram>(("sram_" + m).c_str(), chip.sram);
    bindTo("sram_read_64B", sram->socket, read64, 64, 1 << 26);
    auto* hbmRandom = w.make<hw::MemoryController>(("hbm_random_" + m).c_str(), chip.hbm);
    bindTo("hbm_read_64B_scattered", hbmRandom->socket, read64, 2654435761ull * 64, 1ull << 36);
    auto* hbmStream = w.make<hw::MemoryController>(("hbm_stream_" + m).c_str(), chip.hbm);
    bindTo("hbm_read_1MiB_stream", hbmStream->socket, read1m, 1 << 20, 1ull << 36);
  }
}

void runBatches(benchmark::State& state, const std::function<void()>& wake) {
  for (auto _ : state) {
    wake();
    sc_core::sc_start();
  }
  state.SetItemsProcessed(state.iterations() * kBatch);
}

void BM_Kernel_BTransportWaitEachCall(benchmark::State& state) {
  runBatches(state, [] { world().rawWait->wake(); });
}
void BM_Kernel_BTransportQuantumKeeper(benchmark::State& state) {
  runBatches(state, [] { world().rawQuantum->wake(); });
}
void BM_Kernel_MethodTimedActivations(benchmark::State& state) {
  runBatches(state, [] { world().method->wake(); });
}
void BM_Module(benchmark::State& state, const std::string& key) {
  runBatches(state, [key] { world().initiators.at(key)->wake(); });
}

}  // namespace
}  // namespace scoville::bench

int sc_main(int argc, char* argv[]) {
  using namespace scoville::bench;
  elaborate();
  benchmark::RegisterBenchmark("kernel/b_transport+wait", BM_Kernel_BTransportWaitEachCall)
      ->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("kernel/b_transport+quantum_keeper", BM_Kernel_BTransportQuantumKeeper)
      ->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("kernel/sc_method_timed", BM_Kernel_MethodTimedActivations)
      ->Unit(benchmark::kMillisecond);
  for (const auto& entry : world().initiators) {
    benchmark::RegisterBenchmark(("module/" + entry.first).c_str(), BM_Module, entry.first)
        ->Unit(benchmark::kMillisecond);
  }
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
