#pragma once
// The pin-level side of RTL co-simulation: the signals of one MAC array block, the registry of
// Verilated blocks that can sit behind them, and the blocks' waveforms. Nothing here includes
// Verilator's headers (only MacArrayModel.cpp and the generated models do), so the transactor and
// the rest of Scoville compile with the project's warnings and without Verilator's include paths.
//
// A block is chosen by name (tensor_core.rtl.model). "mac_array" is hw/rtl/scoville_mac_array.v;
// an RTL team adds its own block by Verilating it in hw/rtl/CMakeLists.txt and registering a
// factory that binds its ports to these signals (docs/cosim.md).

#include <functional>
#include <memory>
#include <string>
#include <systemc>
#include <vector>

#include "hw/rtl/MacArrayGeometry.h"

namespace scoville::hw::rtl {

inline constexpr int kWeightBits = kMacArrayCols * kMacArrayLanes * 8;
inline constexpr int kActivationBits = kMacArrayRows * 8;
inline constexpr int kResultBits = kMacArrayCols * kMacArrayLanes * 32;

/// A signal the transactor drives. With LT b_transport it drives from its callers' threads (one
/// GEMM at a time), so the signal admits several writing processes.
template <class T>
using DrivenSignal = sc_core::sc_signal<T, sc_core::SC_MANY_WRITERS>;

/// The signals of one MAC array block (the protocol is in hw/rtl/scoville_mac_array.v). The
/// transactor drives rstN, wValid/wData, aValid/aData/aLast and cReady; the block drives the rest.
struct MacArrayPins {
  /// Names every signal `prefix`_port, so waveforms and SystemC messages say which array it is.
  explicit MacArrayPins(const std::string& prefix);

  DrivenSignal<bool> rstN;
  DrivenSignal<bool> wValid;
  sc_core::sc_signal<bool> wReady;
  DrivenSignal<sc_dt::sc_bv<kWeightBits>> wData;
  DrivenSignal<bool> aValid;
  sc_core::sc_signal<bool> aReady;
  DrivenSignal<sc_dt::sc_bv<kActivationBits>> aData;
  DrivenSignal<bool> aLast;
  sc_core::sc_signal<bool> cValid;
  DrivenSignal<bool> cReady;
  sc_core::sc_signal<sc_dt::sc_bv<kResultBits>> cData;
  sc_core::sc_signal<bool> cLast;
};

/// Builds one block instance named `name` (a child of the module under construction) with its
/// clock bound to `clock` and its ports to `pins`.
using MacArrayFactory =
    std::function<std::unique_ptr<sc_core::sc_module>(const char* name, DrivenSignal<bool>& clock, MacArrayPins& pins)>;

/// Adds a block under `name`; throws std::invalid_argument if the name is taken.
void registerMacArrayModel(const std::string& name, MacArrayFactory factory);
bool hasMacArrayModel(const std::string& name);
/// Registered names, sorted; "mac_array" is always one.
std::vector<std::string> macArrayModelNames();
/// Builds an instance of block `model`; throws std::invalid_argument for an unknown name.
std::unique_ptr<sc_core::sc_module> makeMacArray(const std::string& model, const char* name, DrivenSignal<bool>& clock,
                                                 MacArrayPins& pins);

/// Test builds only (SCOVILLE_BUILD_TESTS): registers "mac_array_faulty", the same RTL built with
/// FAULT = 1 (cells multiply with the bank streaming now, not the bank of their activation's
/// tile), which lock-step mode must catch. Throws std::logic_error in a build without it.
void registerFaultyMacArrayForTests();

/// Records every RTL block built from now on into a VCD file at `path` (GTKWave): their signals
/// down to the depth they were Verilated with (SCOVILLE_RTL_TRACE_DEPTH), at every clock edge
/// between `startS` and `endS` of simulated time. The file is opened when the simulation starts.
/// Call before the platform is built; at most once per process.
void enableWaveforms(const std::string& path, double startS, double endS);
/// Whether enableWaveforms was called.
bool waveformsEnabled();
/// Called by transactors after each clock edge they drive, once the blocks' outputs settled:
/// records every block's signals at the current time, if it is inside the window.
void sampleWaveforms();
/// Flushes and closes the waveform file (no-op when none is open).
void closeWaveforms();

}  // namespace scoville::hw::rtl
