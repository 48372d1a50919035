#include "power/EnergyLevels.h"

#include "tlm/ActivityBus.h"

namespace scoville::power {

const char* levelName(Level level) {
  switch (level) {
    case Level::kDatapath: return "datapath";
    case Level::kRegisterFile: return "register_file";
    case Level::kVectorUnit: return "vector_unit";
    case Level::kSram: return "sram";
    case Level::kLlc: return "llc";
    case Level::kNoc: return "noc";
    case Level::kMemoryInterface: return "memory_interface";
    case Level::kHbm: return "hbm";
    case Level::kFabricPorts: return "fabric_ports";
    case Level::kFloor: return "floor";
    case Level::kWake: return "wake";
  }
  return "?";
}

const char* counterName(Counter counter) {
  switch (counter) {
    case Counter::kFlopsFp32: return "flops_fp32";
    case Counter::kFlopsBf16: return "flops_bf16";
    case Counter::kFlopsFp8: return "flops_fp8";
    case Counter::kFlopsFp4: return "flops_fp4";
    case Counter::kOperandBytes: return "operand_bytes";
    case Counter::kVectorOps: return "vector_ops";
    case Counter::kSramReadBytes: return "sram_read_bytes";
    case Counter::kSramWriteBytes: return "sram_write_bytes";
    case Counter::kLlcReadBytes: return "llc_read_bytes";
    case Counter::kLlcWriteBytes: return "llc_write_bytes";
    case Counter::kNocByteMetres: return "noc_byte_metres";
    case Counter::kInterfaceReadBytes: return "memory_interface_read_bytes";
    case Counter::kInterfaceWriteBytes: return "memory_interface_write_bytes";
    case Counter::kHbmReadBytes: return "hbm_read_bytes";
    case Counter::kHbmWriteBytes: return "hbm_write_bytes";
    case Counter::kActivates: return "activates";
    case Counter::kPrecharges: return "precharges";
    case Counter::kRefreshes: return "refreshes";
    case Counter::kLinkBytes: return "link_bytes";
    case Counter::kClockActiveSeconds: return "clock_active_s";
    case Counter::kWakeArrays: return "wake_arrays";
    case Counter::kConvertOps: return "convert_ops";
  }
  return "?";
}

Level levelOf(Counter counter) {
  switch (counter) {
    case Counter::kFlopsFp32:
    case Counter::kFlopsBf16:
    case Counter::kFlopsFp8:
    case Counter::kFlopsFp4: return Level::kDatapath;
    case Counter::kOperandBytes: return Level::kRegisterFile;
    case Counter::kVectorOps:
    case Counter::kConvertOps: return Level::kVectorUnit;
    case Counter::kSramReadBytes:
    case Counter::kSramWriteBytes: return Level::kSram;
    case Counter::kLlcReadBytes:
    case Counter::kLlcWriteBytes: return Level::kLlc;
    case Counter::kNocByteMetres: return Level::kNoc;
    case Counter::kInterfaceReadBytes:
    case Counter::kInterfaceWriteBytes: return Level::kMemoryInterface;
    case Counter::kHbmReadBytes:
    case Counter::kHbmWriteBytes:
    case Counter::kActivates:
    case Counter::kPrecharges:
    case Counter::kRefreshes: return Level::kHbm;
    case Counter::kLinkBytes: return Level::kFabricPorts;
    case Counter::kClockActiveSeconds: return Level::kFloor;
    case Counter::kWakeArrays: return Level::kWake;
  }
  return Level::kDatapath;
}

bool onCoreRail(Counter counter) {
  switch (levelOf(counter)) {
    case Level::kDatapath:
    case Level::kRegisterFile:
    case Level::kVectorUnit:
    case Level::kSram:
    case Level::kLlc:
    case Level::kNoc:
    case Level::kFloor: return true;
    default: return false;
  }
}

double priceOf(const ChipEnergyConfig& e, Counter counter) {
  switch (counter) {
    case Counter::kFlopsFp32: return e.tensorCore.perFlop.fp32;
    case Counter::kFlopsBf16: return e.tensorCore.perFlop.bf16;
    case Counter::kFlopsFp8: return e.tensorCore.perFlop.fp8;
    case Counter::kFlopsFp4: return e.tensorCore.perFlop.fp4;
    case Counter::kOperandBytes: return e.tensorCore.operandJPerByte;
    case Counter::kVectorOps: return e.vectorUnit.perOpJ;
    case Counter::kConvertOps: return e.vectorUnit.convertOpJ();
    case Counter::kSramReadBytes: return e.sram.readJPerByte;
    case Counter::kSramWriteBytes: return e.sram.writeJPerByte;
    case Counter::kLlcReadBytes: return e.llc ? e.llc->readJPerByte : 0.0;
    case Counter::kLlcWriteBytes: return e.llc ? e.llc->writeJPerByte : 0.0;
    case Counter::kNocByteMetres: return e.interconnect.jPerByteMetre;
    case Counter::kInterfaceReadBytes: return e.memoryInterface.readJPerByte;
    case Counter::kInterfaceWriteBytes: return e.memoryInterface.writeJPerByte;
    case Counter::kHbmReadBytes: return e.hbm.readJPerByte;
    case Counter::kHbmWriteBytes: return e.hbm.writeJPerByte;
    case Counter::kActivates: return e.hbm.activateJ;
    case Counter::kPrecharges: return e.hbm.prechargeJ;
    case Counter::kRefreshes: return e.hbm.refreshJ;
    case Counter::kLinkBytes: return e.fabricPorts.jPerByte;
    case Counter::kClockActiveSeconds: return e.floorW;
    case Counter::kWakeArrays: return e.transitions.wakeJPerArray;
  }
  return 0.0;
}

namespace {

Counter flopCounter(tlm::Precision p) {
  switch (p) {
    case tlm::Precision::kFp32: return Counter::kFlopsFp32;
    case tlm::Precision::kBf16: return Counter::kFlopsBf16;
    case tlm::Precision::kFp8: return Counter::kFlopsFp8;
    case tlm::Precision::kFp4:
    case tlm::Precision::kInt4: return Counter::kFlopsFp4;  // the 4-bit datapath, as the tensor core's MAC rates
  }
  return Counter::kFlopsBf16;
}

/// Whether a level's rate follows the core clock (a governor scales it by V^2 f to predict a point).
bool followsCoreClock(Level level) {
  return level == Level::kDatapath || level == Level::kRegisterFile || level == Level::kVectorUnit ||
         level == Level::kFloor;
}

}  // namespace

CountedEvent countEvent(const ChipEnergyConfig& e, const tlm::ActivityEvent& event, double burstBytes,
                        double voltageScale, double frequencyScale) {
  CountedEvent out;
  const double v2 = voltageScale * voltageScale;
  // Adds a part (nothing when its count is zero), made effective at the operating point: a core-rail
  // count carries V^2 (onCoreRail, the rule the calibration prices by), the floor's also f.
  const auto add = [&](Counter counter, double count) {
    if (count == 0.0) return;
    if (onCoreRail(counter)) count = count * v2 * (counter == Counter::kClockActiveSeconds ? frequencyScale : 1.0);
    const double joules = count * priceOf(e, counter);
    const Level level = levelOf(counter);
    out.parts[out.size++] = CountedEvent::Part{counter, level, count, joules};
    out.joules += joules;
    if (followsCoreClock(level)) out.coreJ += joules;
  };
  // Wires: a share of their energy per byte follows the data's switching activity.
  const double wire = e.dataIndependentShare + (1.0 - e.dataIndependentShare) * event.toggle;
  const double a = event.amount;
  switch (event.activity) {
    case tlm::Activity::kMacs: add(flopCounter(event.precision), 2.0 * a); break;
    case tlm::Activity::kOperandBytes: add(Counter::kOperandBytes, a); break;
    case tlm::Activity::kVectorOps: add(Counter::kVectorOps, a); break;
    case tlm::Activity::kConvertOps: add(Counter::kConvertOps, a); break;
    case tlm::Activity::kSramReadBytes: add(Counter::kSramReadBytes, a); break;
    case tlm::Activity::kSramWriteBytes: add(Counter::kSramWriteBytes, a); break;
    case tlm::Activity::kDramActivates: add(Counter::kActivates, a); break;
    case tlm::Activity::kDramPrecharges: add(Counter::kPrecharges, a); break;
    case tlm::Activity::kDramRefreshes: add(Counter::kRefreshes, a); break;
    case tlm::Activity::kDramReadBursts:
      add(Counter::kHbmReadBytes, a * burstBytes);
      add(Counter::kInterfaceReadBytes, a * burstBytes * wire);
      break;
    case tlm::Activity::kDramWriteBursts:
      add(Counter::kHbmWriteBytes, a * burstBytes);
      add(Counter::kInterfaceWriteBytes, a * burstBytes * wire);
      break;
    case tlm::Activity::kNocMemoryBytes: {
      // A byte between HBM and a unit crosses the network, the memory-side cache (if any), and is
      // staged in the SRAM: written on arrival, read once by its consumer.
      add(Counter::kNocByteMetres, a * e.interconnect.memoryDistanceM * wire);
      if (e.llc) add(tlm::isMemoryWrite(event.kind) ? Counter::kLlcWriteBytes : Counter::kLlcReadBytes, a);
      add(Counter::kSramWriteBytes, a);
      add(Counter::kSramReadBytes, a);
      break;
    }
    case tlm::Activity::kNocSramBytes: add(Counter::kNocByteMetres, a * e.interconnect.sramDistanceM * wire); break;
    case tlm::Activity::kLinkBytes: add(Counter::kLinkBytes, a); break;
    case tlm::Activity::kClockActive: add(Counter::kClockActiveSeconds, a); break;
    case tlm::Activity::kWakeArrays: add(Counter::kWakeArrays, a); break;
    case tlm::Activity::kSwitchBytes:
    case tlm::Activity::kSwitchPackets: break;  // a switch's, not a chip's
  }
  return out;
}

double priced(const ChipEnergyConfig& energy, const Counts& counts) {
  double joules = 0.0;
  for (std::size_t c = 0; c < kCounters; ++c) joules += counts[c] * priceOf(energy, static_cast<Counter>(c));
  return joules;
}

}  // namespace scoville::power
