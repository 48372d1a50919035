#include "hw/rtl/MacArrayModel.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>

#include "Vscoville_mac_array.h"
#include "verilated_vcd_c.h"
#ifdef SCOVILLE_RTL_FAULTY_VARIANT
#include "Vscoville_mac_array_faulty.h"
#endif

namespace scoville::hw::rtl {

namespace {

std::map<std::string, MacArrayFactory>& macArrayModels();

/// Verilated models built so far, for the waveform file; the models belong to their tensor cores.
struct Waveforms {
  std::string path;
  uint64_t start = 0;  ///< window, in SystemC time resolution units
  uint64_t end = 0;
  uint64_t last = 0;  ///< last time written
  bool dumped = false;
  std::vector<std::function<void(VerilatedVcdC&)>> traceModels;
  std::unique_ptr<VerilatedVcdC> file;
};

Waveforms& waveforms() {
  static Waveforms w;
  return w;
}

/// Opens the waveform file once every block is built. The transactors sample it at their clock
/// edges (a plain VerilatedVcdC: Verilator's SystemC writer would sample every time step of the
/// whole platform, and has no window).
class WaveformOpener : public sc_core::sc_module {
 public:
  explicit WaveformOpener(const sc_core::sc_module_name& name) : sc_core::sc_module(name) {}

 private:
  void start_of_simulation() override {
    Waveforms& w = waveforms();
    w.file = std::make_unique<VerilatedVcdC>();
    const std::string resolution = sc_core::sc_get_time_resolution().to_string();
    w.file->spTrace()->set_time_unit(resolution);
    w.file->spTrace()->set_time_resolution(resolution);
    for (const auto& trace : w.traceModels) trace(*w.file);
    w.file->open(w.path.c_str());
  }
};

template <class Model>
std::unique_ptr<sc_core::sc_module> bind(const char* name, DrivenSignal<bool>& clock, MacArrayPins& pins) {
  auto model = std::make_unique<Model>(name);
  model->clk(clock);
  model->rst_n(pins.rstN);
  model->w_valid(pins.wValid);
  model->w_ready(pins.wReady);
  model->w_data(pins.wData);
  model->a_valid(pins.aValid);
  model->a_ready(pins.aReady);
  model->a_data(pins.aData);
  model->a_last(pins.aLast);
  model->c_valid(pins.cValid);
  model->c_ready(pins.cReady);
  model->c_data(pins.cData);
  model->c_last(pins.cLast);
  Waveforms& w = waveforms();
  if (!w.path.empty()) {
    if (w.traceModels.empty()) new WaveformOpener("rtl_waveforms");  // owned by the SystemC kernel
    Model* raw = model.get();
    w.traceModels.push_back([raw](VerilatedVcdC& file) { raw->trace(&file, 99); });  // depth: --trace-depth
  }
  return model;
}

std::map<std::string, MacArrayFactory>& macArrayModels() {
  static std::map<std::string, MacArrayFactory> r{{"mac_array", &bind<Vscoville_mac_array>}};
  return r;
}

}  // namespace

MacArrayPins::MacArrayPins(const std::string& prefix)
    : rstN((prefix + "_rst_n").c_str()),
      wValid((prefix + "_w_valid").c_str()),
      wReady((prefix + "_w_ready").c_str()),
      wData((prefix + "_w_data").c_str()),
      aValid((prefix + "_a_valid").c_str()),
      aReady((prefix + "_a_ready").c_str()),
      aData((prefix + "_a_data").c_str()),
      aLast((prefix + "_a_last").c_str()),
      cValid((prefix + "_c_valid").c_str()),
      cReady((prefix + "_c_ready").c_str()),
      cData((prefix + "_c_data").c_str()),
      cLast((prefix + "_c_last").c_str()) {}

void registerMacArrayModel(const std::string& name, MacArrayFactory factory) {
  if (!macArrayModels().emplace(name, std::move(factory)).second) {
    throw std::invalid_argument("RTL block '" + name + "' is already registered");
  }
}

bool hasMacArrayModel(const std::string& name) {
  return macArrayModels().count(name) > 0;
}

std::vector<std::string> macArrayModelNames() {
  std::vector<std::string> names;
  for (const auto& entry : macArrayModels()) names.push_back(entry.first);
  return names;
}

std::unique_ptr<sc_core::sc_module> makeMacArray(const std::string& model, const char* name, DrivenSignal<bool>& clock,
                                                 MacArrayPins& pins) {
  const auto found = macArrayModels().find(model);
  if (found == macArrayModels().end()) throw std::invalid_argument("no RTL block named '" + model + "'");
  return found->second(name, clock, pins);
}

void registerFaultyMacArrayForTests() {
#ifdef SCOVILLE_RTL_FAULTY_VARIANT
  if (!hasMacArrayModel("mac_array_faulty"))
    registerMacArrayModel("mac_array_faulty", &bind<Vscoville_mac_array_faulty>);
#else
  throw std::logic_error("this build has no faulty MAC array (configure with SCOVILLE_BUILD_TESTS=ON)");
#endif
}

void enableWaveforms(const std::string& path, double startS, double endS) {
  Waveforms& w = waveforms();
  if (!w.path.empty()) throw std::logic_error("RTL waveforms are already enabled");
  Verilated::traceEverOn(true);
  w.path = path;
  const double resolution = sc_core::sc_get_time_resolution().to_seconds();
  w.start = static_cast<uint64_t>(std::llround(startS / resolution));
  w.end = static_cast<uint64_t>(std::llround(endS / resolution));
}

bool waveformsEnabled() {
  return !waveforms().path.empty();
}

void sampleWaveforms() {
  Waveforms& w = waveforms();
  if (!w.file) return;
  const uint64_t now = sc_core::sc_time_stamp().value();
  if (now < w.start || now > w.end) return;
  // VCD time only moves forward: a second transactor's edge at the same instant (several RTL
  // chips in phase) is written one resolution step (1 ps) later.
  const uint64_t at = w.dumped ? std::max(now, w.last + 1) : now;
  w.file->dump(at);
  w.last = at;
  w.dumped = true;
}

void closeWaveforms() {
  Waveforms& w = waveforms();
  if (w.file) w.file->close();
}

}  // namespace scoville::hw::rtl
