// libFuzzer target over the configuration loaders and the unit parser (scripts/fuzz runs it).
//
// Input: the first byte picks what to parse, the rest is the text. Every loader must either
// succeed or throw config::ConfigError (the unit parser: config::UnitError); any other exception,
// a crash, a leak or undefined behaviour is a bug, and the input becomes a regression test.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <string>

#include "test/fuzz/FuzzTargets.h"
#include "config/ConfigError.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
  try {
    scoville::test::parseFuzzInput(data[0], text);
  } catch (const scoville::config::ConfigError&) {
    // The expected answer to bad input.
  } catch (const std::exception& e) {
    std::cerr << "unclassified exception escaped a loader: " << e.what() << "\n";
    std::abort();
  }
  return 0;
}

// libsystemc.so defines main() and needs sc_main() to link; libFuzzer's own main() (linked into
// the executable) takes precedence, so this is never called.
extern "C" int sc_main(int, char*[]) {
  std::cerr << "scoville_config_fuzz: started through SystemC's main instead of libFuzzer's\n";
  return 1;
}
