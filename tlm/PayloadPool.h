#pragma once
// A pool of generic payloads, each carrying one OpExtension, recycled through TLM-2.0's memory
// manager interface: acquire() on a pooled payload, release() returns it here at ref count 0.

#include <memory>
#include <tlm>
#include <vector>

#include "tlm/OpExtension.h"

namespace scoville::tlm {

class PayloadPool : public ::tlm::tlm_mm_interface {
 public:
  PayloadPool() = default;
  PayloadPool(const PayloadPool&) = delete;
  PayloadPool& operator=(const PayloadPool&) = delete;
  ~PayloadPool() override;

  /// A payload with ref count 1 and a default-initialised OpExtension. Release it when done.
  ::tlm::tlm_generic_payload& allocate();
  void free(::tlm::tlm_generic_payload* payload) override;

  std::size_t created() const { return m_all.size(); }

 private:
  std::vector<std::unique_ptr<::tlm::tlm_generic_payload>> m_all;
  std::vector<::tlm::tlm_generic_payload*> m_free;
};

/// Holds one reference to a pooled payload for a scope.
class PayloadRef {
 public:
  explicit PayloadRef(PayloadPool& pool) : m_payload(&pool.allocate()) {}
  /// Takes over the reference of a payload allocated with ref count 1 (PayloadBuilder::build).
  explicit PayloadRef(::tlm::tlm_generic_payload& allocated) : m_payload(&allocated) {}
  ~PayloadRef() { m_payload->release(); }
  PayloadRef(const PayloadRef&) = delete;
  PayloadRef& operator=(const PayloadRef&) = delete;

  ::tlm::tlm_generic_payload& operator*() const { return *m_payload; }
  ::tlm::tlm_generic_payload* operator->() const { return m_payload; }
  OpExtension& op() const { return opOf(*m_payload); }

 private:
  ::tlm::tlm_generic_payload* m_payload;
};

}  // namespace scoville::tlm
