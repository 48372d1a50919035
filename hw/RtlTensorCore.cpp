#include "hw/RtlTensorCore.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <stdexcept>

#include "tlm/OpExtension.h"
#include "tlm/PayloadPool.h"
#include "tlm/Time.h"
#include "tlm/TransactionCount.h"

namespace scoville::hw {

// The Verilated block's geometry, pins and waveforms (hw/rtl/MacArrayModel.h).
using rtl::kActivationBits;
using rtl::kMacArrayCols;
using rtl::kMacArrayLanes;
using rtl::kMacArrayRows;
using rtl::kResultBits;
using rtl::kWeightBits;
using rtl::MacArrayPins;
using rtl::makeMacArray;
using rtl::sampleWaveforms;
using rtl::waveformsEnabled;

namespace {

/// Writes `bytes` into a bit vector, byte i at bits [8i, 8i + 8).
template <int W>
void packBytes(sc_dt::sc_bv<W>& bits, const std::array<uint8_t, (W + 7) / 8>& bytes) {
  constexpr int kWords = (W + 31) / 32;
  for (int word = 0; word < kWords; ++word) {
    uint32_t value = 0;
    for (int b = 0; b < 4 && word * 4 + b < (W + 7) / 8; ++b)
      value |= static_cast<uint32_t>(bytes[word * 4 + b]) << (8 * b);
    if (word == kWords - 1 && W % 32 != 0) value &= (1U << (W % 32)) - 1U;
    bits.set_word(word, value);
  }
}

std::string describe(const tlm::OpExtension& op, uint64_t number) {
  return fmt::format("GEMM #{} ({} x {}x{}x{} {}, layer {}, {})", number, op.shape.count, op.shape.m, op.shape.k,
                     op.shape.n, tlm::precisionName(op.precision), op.layer, tlm::opBlockName(op.block));
}

}  // namespace

/// One weight tile: rows [k0, k0 + array_rows) x columns [n0, n0 + array_cols * rate) of product p.
struct Tile {
  uint64_t product = 0;
  uint64_t k0 = 0;
  uint64_t n0 = 0;
};

/// One GEMM in flight: its shape, operands and the sums the arrays have returned.
struct RtlTensorCore::Gemm {
  tlm::GemmShape shape;
  int rate = 1;  ///< MAC lanes per cell used
  const GemmOperands* operands = nullptr;
  std::vector<uint32_t> sums;  ///< count x M x N, wrapping like the accumulators
  std::string error;           ///< what the block did wrong, if anything
  uint64_t tlmCycles = 0;      ///< what the TLM model's formula gives the same GEMM
};

/// One array: its pins, its RTL block and where its share of the current GEMM's tiles stands.
struct RtlTensorCore::Array {
  explicit Array(const std::string& name) : pins(name) {}

  /// At the clock's falling edge: takes the result row the block offers, drives the next weight
  /// and activation rows. Returns true once every tile's results are back.
  bool step(Gemm& gemm);

  MacArrayPins pins;
  std::unique_ptr<sc_core::sc_module> block;
  std::vector<Tile> tiles;
  std::size_t wTile = 0, wRow = 0;  ///< next weight row to hand over
  std::size_t aTile = 0, aRow = 0;  ///< next activation row
  std::size_t cTile = 0, cRow = 0;  ///< next result row expected
  bool wDriven = false;             ///< wData holds row (wTile, wRow)
  bool aDriven = false;             ///< aData holds row (aTile, aRow)

  void start() {
    wTile = wRow = aTile = aRow = cTile = cRow = 0;
    wDriven = aDriven = false;
  }
};

bool RtlTensorCore::Array::step(Gemm& gemm) {
  const tlm::GemmShape& s = gemm.shape;
  const auto rate = static_cast<uint64_t>(gemm.rate);
  // Results first: c_ready is always high, so a valid row leaves at the coming edge.
  if (pins.cValid.read()) {
    if (cTile >= tiles.size()) {
      if (gemm.error.empty()) gemm.error = fmt::format("{} returned a result row nobody asked for", pins.cValid.name());
    } else {
      const Tile& t = tiles[cTile];
      const sc_dt::sc_bv<kResultBits> row = pins.cData.read();
      uint32_t* out = gemm.sums.data() + (t.product * s.m + cRow) * s.n;
      for (uint64_t c = 0; c < static_cast<uint64_t>(kMacArrayCols); ++c) {
        for (uint64_t l = 0; l < rate; ++l) {
          const uint64_t n = t.n0 + c * rate + l;
          if (n < s.n) out[n] += row.get_word(static_cast<int>(c * kMacArrayLanes + l));
        }
      }
      const bool last = cRow + 1 == s.m;
      if (pins.cLast.read() != last && gemm.error.empty()) {
        gemm.error =
            fmt::format("{} was {} on result row {} of a {}-row tile", pins.cLast.name(), pins.cLast.read(), cRow, s.m);
      }
      if (last) {
        ++cTile;
        cRow = 0;
      } else {
        ++cRow;
      }
    }
  }

  // Weights: rows 0..array_rows-1 of each tile in turn; lanes past the rate and columns past N
  // get zeros.
  if (wTile < tiles.size()) {
    if (!wDriven) {
      const Tile& t = tiles[wTile];
      std::array<uint8_t, kWeightBits / 8> bytes{};
      const uint64_t k = t.k0 + wRow;
      if (k < s.k) {
        const int8_t* b = gemm.operands->b.data() + (t.product * s.k + k) * s.n;
        for (uint64_t c = 0; c < static_cast<uint64_t>(kMacArrayCols); ++c) {
          for (uint64_t l = 0; l < rate; ++l) {
            const uint64_t n = t.n0 + c * rate + l;
            if (n < s.n) bytes[c * kMacArrayLanes + l] = static_cast<uint8_t>(b[n]);
          }
        }
      }
      sc_dt::sc_bv<kWeightBits> bits;
      packBytes<kWeightBits>(bits, bytes);
      pins.wData.write(bits);
      pins.wValid.write(true);
      wDriven = true;
    }
    if (pins.wReady.read()) {  // the row is taken at the coming edge
      wDriven = false;
      if (++wRow == static_cast<std::size_t>(kMacArrayRows)) {
        wRow = 0;
        ++wTile;
      }
    }
  } else {
    pins.wValid.write(false);
  }

  // Activations: the M rows of A's K slice for each tile in turn.
  if (aTile < tiles.size()) {
    if (!aDriven) {
      const Tile& t = tiles[aTile];
      std::array<uint8_t, kActivationBits / 8> bytes{};
      const int8_t* a = gemm.operands->a.data() + (t.product * s.m + aRow) * s.k;
      for (uint64_t k = 0; k < static_cast<uint64_t>(kMacArrayRows) && t.k0 + k < s.k; ++k) {
        bytes[k] = static_cast<uint8_t>(a[t.k0 + k]);
      }
      sc_dt::sc_bv<kActivationBits> bits;
      packBytes<kActivationBits>(bits, bytes);
      pins.aData.write(bits);
      pins.aLast.write(aRow + 1 == s.m);
      pins.aValid.write(true);
      aDriven = true;
    }
    if (pins.aReady.read()) {
      aDriven = false;
      if (++aRow == s.m) {
        aRow = 0;
        ++aTile;
      }
    }
  } else {
    pins.aValid.write(false);
  }
  return cTile >= tiles.size();
}

RtlTensorCore::RtlTensorCore(const sc_core::sc_module_name& name, const TensorCoreConfig& config)
    : sc_core::sc_module(name),
      socket("socket"),
      m_config(config),
      m_clk("clk"),
      m_toReference("to_reference"),
      m_at(
          "at",
          [this](::tlm::tlm_generic_payload& p, ::tlm::tlm_phase& phase, sc_core::sc_time& delay) {
            return socket->nb_transport_bw(p, phase, delay);
          },
          [] { return true; },
          [this](::tlm::tlm_generic_payload& p) {
            m_atQueue.emplace_back(&p, sc_core::sc_time_stamp());
            m_atPending.notify(sc_core::SC_ZERO_TIME);
          }),
      m_lockstepGemms(m_stats.group.counter("lockstep_gemms", "", "GEMMs also run on the TLM model and compared")),
      m_mismatchedGemms(m_stats.group.counter("mismatched_gemms", "",
                                              "lock-step GEMMs whose RTL product differed from the TLM model's")),
      m_mismatchedValues(m_stats.group.counter("mismatched_values", "", "product elements that differed")),
      m_tlmCycles(m_stats.group.counter("tlm_cycles", "cycle", "cycles the TLM model gives the lock-step GEMMs")),
      m_cycleErrorSum(
          m_stats.group.counter("cycle_error_sum", "", "sum over lock-step GEMMs of |RTL - TLM| / TLM cycles")),
      m_beyondTolerance(m_stats.group.counter("beyond_tolerance", "",
                                              "lock-step GEMMs whose cycle error exceeded rtl.cycle_tolerance")),
      m_blockErrors(m_stats.group.counter("block_errors", "", "GEMMs the RTL block broke its pin protocol on")) {
  if (config.impl == TensorCoreImpl::kTlm) throw std::invalid_argument(std::string(basename()) + ": impl is tlm");
  if (config.arrayRows != kMacArrayRows || config.arrayCols != kMacArrayCols || config.operandBuffers != 2) {
    throw std::invalid_argument(
        fmt::format("{}: the RTL is a {}x{} array with 2 weight banks", basename(), kMacArrayRows, kMacArrayCols));
  }
  m_stats.group.formula("rtl_tlm_cycle_ratio", "", "busy_cycles / tlm_cycles (lock-step)", [this] {
    return m_tlmCycles.value() > 0 ? m_stats.group.value("busy_cycles") / m_tlmCycles.value() : 0.0;
  });
  m_stats.group.formula("mean_cycle_error", "", "cycle_error_sum / lockstep_gemms", [this] {
    return m_lockstepGemms.value() > 0 ? m_cycleErrorSum.value() / m_lockstepGemms.value() : 0.0;
  });
  m_stats.group.formula("max_cycle_error", "", "largest |RTL - TLM| / TLM cycles of one lock-step GEMM",
                        [this] { return m_maxCycleError; });

  for (int i = 0; i < config.count; ++i) {
    const std::string arrayName = fmt::format("array{}", i);
    auto array = std::make_unique<Array>(arrayName);
    array->block = makeMacArray(config.rtl.model, arrayName.c_str(), m_clk, array->pins);
    m_arrays.push_back(std::move(array));
  }
  if (config.impl == TensorCoreImpl::kLockstep) {
    m_reference = std::make_unique<TensorCore>("reference", config);
    m_toReference.bind(m_reference->socket);
  }
  socket.register_b_transport(this, &RtlTensorCore::bTransport);
  socket.register_nb_transport_fw(this, &RtlTensorCore::nbTransportFw);
  SC_HAS_PROCESS(RtlTensorCore);
  SC_THREAD(resetProcess);
  SC_THREAD(atProcess);
}

RtlTensorCore::~RtlTensorCore() = default;

void RtlTensorCore::waitUntil(const sc_core::sc_time& when) {
  const sc_core::sc_time now = sc_core::sc_time_stamp();
  sc_core::wait(when > now ? when - now : sc_core::SC_ZERO_TIME);
}

void RtlTensorCore::setClock(bool level) {
  m_clk.write(level);
  if (waveformsEnabled()) {
    // Let the edge reach the blocks (one delta) and their outputs settle (another), then record.
    sc_core::wait(sc_core::SC_ZERO_TIME);
    sc_core::wait(sc_core::SC_ZERO_TIME);
    sampleWaveforms();
  }
}

void RtlTensorCore::resetArrays() {
  for (auto& array : m_arrays) {
    array->pins.rstN.write(false);
    array->pins.wValid.write(false);
    array->pins.aValid.write(false);
    array->pins.cReady.write(true);
  }
  const sc_core::sc_time half(0.5 / m_config.clockHz, sc_core::SC_SEC);
  for (int cycle = 0; cycle < 2; ++cycle) {
    sc_core::wait(half);
    setClock(true);
    sc_core::wait(half);
    setClock(false);
  }
  for (auto& array : m_arrays) array->pins.rstN.write(true);
  sc_core::wait(sc_core::SC_ZERO_TIME);
}

void RtlTensorCore::resetProcess() {
  resetArrays();
  m_ready = true;
  m_free.notify(sc_core::SC_ZERO_TIME);
}

void RtlTensorCore::atProcess() {
  while (true) {
    while (m_atQueue.empty()) sc_core::wait(m_atPending);
    const auto [payload, arrival] = m_atQueue.front();
    m_atQueue.pop_front();
    execute(*payload, arrival);
    m_at.respond(*payload, sc_core::sc_time_stamp());
  }
}

void RtlTensorCore::bTransport(::tlm::tlm_generic_payload& payload, sc_core::sc_time& delay) {
  ++tlm::unitTransactions();
  sc_core::wait(delay);  // the RTL runs in simulated time: catch up with the caller's local time
  delay = sc_core::SC_ZERO_TIME;
  execute(payload, sc_core::sc_time_stamp());
}

::tlm::tlm_sync_enum RtlTensorCore::nbTransportFw(::tlm::tlm_generic_payload& payload, ::tlm::tlm_phase& phase,
                                                  sc_core::sc_time& delay) {
  if (phase == ::tlm::BEGIN_REQ) ++tlm::unitTransactions();
  return m_at.forward(payload, phase, delay);
}

void RtlTensorCore::execute(::tlm::tlm_generic_payload& payload, sc_core::sc_time arrival) {
  const tlm::OpExtension& op = tlm::opOf(payload);
  const uint64_t tlmCycles = op.kind == tlm::OpKind::kGemm ? m_config.gemmCycles(op.shape, op.precision) : 0;
  if (tlmCycles == 0) {
    payload.set_response_status(::tlm::TLM_COMMAND_ERROR_RESPONSE);
    return;
  }
  GemmOperands* given = payload.get_extension<GemmOperands>();
  if (given != nullptr && !given->fits(op.shape)) {
    payload.set_response_status(::tlm::TLM_GENERIC_ERROR_RESPONSE);
    return;
  }
  while (!m_ready || m_busy) sc_core::wait(m_free);
  m_busy = true;
  const uint64_t number = m_gemmsStarted++;

  GemmOperands generated;
  if (given == nullptr) generated.fill(op.shape, m_config.rtl.seed ^ (0x9e3779b97f4a7c15ULL * (number + 1)));
  Gemm gemm;
  gemm.shape = op.shape;
  gemm.tlmCycles = tlmCycles;
  gemm.rate = static_cast<int>(m_config.macsPerCell.of(op.precision));
  gemm.operands = given != nullptr ? given : &generated;
  gemm.sums.assign(op.shape.count * op.shape.m * op.shape.n, 0U);

  // Deal the tiles round-robin, in the order the TLM model counts them.
  const auto rows = static_cast<uint64_t>(kMacArrayRows);
  const uint64_t colsPerTile = static_cast<uint64_t>(kMacArrayCols) * static_cast<uint64_t>(gemm.rate);
  for (auto& array : m_arrays) {
    array->tiles.clear();
    array->start();
  }
  std::size_t next = 0;
  for (uint64_t p = 0; p < op.shape.count; ++p) {
    for (uint64_t n0 = 0; n0 < op.shape.n; n0 += colsPerTile) {
      for (uint64_t k0 = 0; k0 < op.shape.k; k0 += rows) {
        m_arrays[next]->tiles.push_back(Tile{p, k0, n0});
        next = (next + 1) % m_arrays.size();
      }
    }
  }

  const sc_core::sc_time start = sc_core::sc_time_stamp();
  const uint64_t cycles = run(gemm);
  const sc_core::sc_time end = sc_core::sc_time_stamp();
  const double queuedS = tlm::seconds(start - arrival);
  tlm::opOf(payload).queuedS = queuedS;
  m_stats.record(m_config, op, static_cast<double>(cycles), queuedS,
                 m_clock->stretch(static_cast<double>(cycles), m_config.clockHz));
  m_activity.emit(tlm::Activity::kMacs, op.shape.flops() / 2.0, op, start, end);
  m_activity.emit(tlm::Activity::kOperandBytes, TensorCore::operandBytes(op.shape, op.precision), op, start, end);

  if (!gemm.error.empty()) {
    m_blockErrors.add();
    if (m_firstBlockError.empty()) m_firstBlockError = describe(op, number) + ": " + gemm.error;
    payload.set_response_status(::tlm::TLM_GENERIC_ERROR_RESPONSE);
    resetArrays();  // rows may still be in flight: start the next GEMM from a clean block
  } else {
    if (m_reference) {
      // The same transaction, with the same operands, to the TLM model: a copy of its own, since
      // the original may be in the middle of an approximately-timed exchange. Its transaction is
      // the check's, not the platform's work, so it is taken out of the kernel's count again.
      tlm::PayloadRef copy(m_referencePool);
      copy.op() = op;
      copy->set_command(payload.get_command());
      GemmOperands model;
      model.a = gemm.operands->a;
      model.b = gemm.operands->b;
      copy->set_extension(&model);
      sc_core::sc_time ignored = sc_core::SC_ZERO_TIME;
      m_toReference->b_transport(*copy, ignored);
      --tlm::unitTransactions();
      copy->clear_extension(&model);
      if (copy->get_response_status() != ::tlm::TLM_OK_RESPONSE) {
        throw std::logic_error(std::string(name()) + ": the TLM reference refused a GEMM the RTL ran");
      }
      compare(gemm, cycles, op, model);
    }
    if (given != nullptr) {
      given->c.resize(gemm.sums.size());
      for (std::size_t i = 0; i < gemm.sums.size(); ++i) given->c[i] = static_cast<int32_t>(gemm.sums[i]);
    }
    payload.set_response_status(::tlm::TLM_OK_RESPONSE);
  }
  m_busy = false;
  m_free.notify(sc_core::SC_ZERO_TIME);
}

uint64_t RtlTensorCore::run(Gemm& gemm) {
  // A block that stops answering must not hang the run: give up well past any sane schedule
  // (every tile's load, stream and drain back to back on one array).
  const auto rows = static_cast<uint64_t>(kMacArrayRows);
  const auto cols = static_cast<uint64_t>(kMacArrayCols);
  uint64_t tiles = 0;
  for (const auto& array : m_arrays) tiles = std::max<uint64_t>(tiles, array->tiles.size());
  const uint64_t limit = 4 * tiles * (gemm.shape.m + 2 * rows + cols) + 1000;

  const double half = 0.5 / (m_config.clockHz * m_clock->scale());
  const sc_core::sc_time t0 = sc_core::sc_time_stamp();
  uint64_t edges = 0;
  bool done = false;
  while (!done) {
    done = true;
    for (auto& array : m_arrays) done = array->step(gemm) && done;
    waitUntil(t0 + sc_core::sc_time(static_cast<double>(2 * edges + 1) * half, sc_core::SC_SEC));
    setClock(true);
    waitUntil(t0 + sc_core::sc_time(static_cast<double>(2 * edges + 2) * half, sc_core::SC_SEC));
    setClock(false);
    ++edges;
    if (!gemm.error.empty()) return edges;
    if (edges > limit) {
      gemm.error =
          fmt::format("the block stopped answering: results of {} tiles still missing after {} cycles", tiles, edges);
      return edges;
    }
  }
  return edges;
}

void RtlTensorCore::compare(const Gemm& gemm, uint64_t rtlCycles, const tlm::OpExtension& op,
                            const GemmOperands& model) {
  const uint64_t number = m_gemmsStarted - 1;
  m_lockstepGemms.add();
  uint64_t differing = 0;
  std::size_t first = 0;
  for (std::size_t i = 0; i < gemm.sums.size(); ++i) {
    if (static_cast<int32_t>(gemm.sums[i]) != model.c[i]) {
      if (differing++ == 0) first = i;
    }
  }
  if (differing > 0) {
    m_mismatchedGemms.add();
    m_mismatchedValues.add(static_cast<double>(differing));
    if (m_firstMismatch.empty()) {
      const uint64_t mn = gemm.shape.m * gemm.shape.n;
      m_firstMismatch =
          fmt::format("{}: {} of {} values differ; first at product {} row {} column {}: RTL {}, TLM model {}",
                      describe(op, number), differing, gemm.sums.size(), first / mn, first % mn / gemm.shape.n,
                      first % gemm.shape.n, static_cast<int32_t>(gemm.sums[first]), model.c[first]);
    }
  }
  const uint64_t tlmCycles = gemm.tlmCycles;
  m_tlmCycles.add(static_cast<double>(tlmCycles));
  const double error =
      std::fabs(static_cast<double>(rtlCycles) - static_cast<double>(tlmCycles)) / static_cast<double>(tlmCycles);
  m_cycleErrorSum.add(error);
  m_maxCycleError = std::max(m_maxCycleError, error);
  if (error > m_config.rtl.cycleTolerance) {
    m_beyondTolerance.add();
    if (m_firstBeyondTolerance.empty()) {
      m_firstBeyondTolerance = fmt::format(
          "{}: RTL {} cycles, TLM model {} ({:+.1f}%), beyond rtl.cycle_tolerance {}", describe(op, number), rtlCycles,
          tlmCycles, 100.0 * (static_cast<double>(rtlCycles) / static_cast<double>(tlmCycles) - 1.0),
          m_config.rtl.cycleTolerance);
    }
  }
}

std::string RtlTensorCore::failure() const {
  std::vector<std::string> parts;
  if (m_blockErrors.value() > 0) {
    parts.push_back(
        fmt::format("{} GEMMs broke the pin protocol; first: {}", m_blockErrors.value(), m_firstBlockError));
  }
  if (m_mismatchedGemms.value() > 0) {
    parts.push_back(fmt::format("{} of {} lock-step GEMMs gave a different product ({} values); first: {}",
                                m_mismatchedGemms.value(), m_lockstepGemms.value(), m_mismatchedValues.value(),
                                m_firstMismatch));
  }
  if (m_beyondTolerance.value() > 0) {
    parts.push_back(fmt::format(
        "{} of {} lock-step GEMMs beyond the cycle tolerance (mean error {:.1f}%, max {:.1f}%); "
        "first: {}",
        m_beyondTolerance.value(), m_lockstepGemms.value(), 100.0 * m_cycleErrorSum.value() / m_lockstepGemms.value(),
        100.0 * m_maxCycleError, m_firstBeyondTolerance));
  }
  if (parts.empty()) return "";
  std::string text = std::string(name()) + ": ";
  for (std::size_t i = 0; i < parts.size(); ++i) text += (i > 0 ? "; " : "") + parts[i];
  return text;
}

}  // namespace scoville::hw
