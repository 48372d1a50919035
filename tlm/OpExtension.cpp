#include "tlm/OpExtension.h"

#include <stdexcept>

namespace scoville::tlm {

OpExtension& opOf(::tlm::tlm_generic_payload& payload) {
  OpExtension* ext = payload.get_extension<OpExtension>();
  if (ext == nullptr) throw std::logic_error("payload without scoville::tlm::OpExtension");
  return *ext;
}

}  // namespace scoville::tlm
