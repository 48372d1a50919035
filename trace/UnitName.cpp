#include "trace/UnitName.h"

#include <cctype>

namespace scoville::trace {

UnitName unitNameOf(const std::string& source) {
  const std::string name = source.rfind("platform.", 0) == 0 ? source.substr(9) : source;
  const auto dot = name.find('.');
  if (name.rfind("chip", 0) == 0 && dot != std::string::npos && dot > 4) {
    bool digits = true;
    for (std::size_t i = 4; i < dot; ++i) digits = digits && std::isdigit(static_cast<unsigned char>(name[i]));
    if (digits) return UnitName{std::stoi(name.substr(4, dot - 4)), name.substr(dot + 1)};
  }
  return UnitName{-1, name};
}

}  // namespace scoville::trace
