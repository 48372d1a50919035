#include "config/InputDigest.h"

#include <fstream>
#include <sstream>

#include <fmt/format.h>

namespace scoville::config {

namespace {
thread_local InputRecorder* tInnermost = nullptr;
}  // namespace

uint64_t fnv1a(std::string_view bytes, uint64_t hash) {
  for (const unsigned char c : bytes) {
    hash ^= c;
    hash *= 1099511628211ull;
  }
  return hash;
}

InputRecorder::InputRecorder() : m_outer(tInnermost) {
  tInnermost = this;
}

InputRecorder::~InputRecorder() {
  tInnermost = m_outer;
}

void InputRecorder::add(std::string_view role, std::string_view bytes) {
  // Role and length first, so that no two different sequences of inputs hash the same text.
  m_hash = fnv1a(fmt::format("\n{}:{}:", role, bytes.size()), m_hash);
  m_hash = fnv1a(bytes, m_hash);
  ++m_count;
}

bool InputRecorder::addFile(const std::string& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) {
    add("unreadable", file);
    return false;
  }
  std::ostringstream text;
  text << in.rdbuf();
  add("file", text.str());
  return true;
}

std::string InputRecorder::digest() const {
  return fmt::format("{:016x}", m_hash);
}

void InputRecorder::note(std::string_view role, std::string_view bytes) {
  if (tInnermost != nullptr) tInnermost->add(role, bytes);
}

}  // namespace scoville::config
