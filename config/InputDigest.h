#pragma once
// What a run read: a digest of the contents of every input file (configuration files and their
// includes, load and routing traces) and the --set options, so that a stored result can be
// recognised as stale when any of them changes (docs/sweeps.md#reuse).

#include <cstdint>
#include <string>
#include <string_view>

namespace scoville::config {

/// 64-bit FNV-1a of `bytes`, continuing from `hash` (the same on every machine and run).
uint64_t fnv1a(std::string_view bytes, uint64_t hash = 14695981039346656037ull);

/// Collects the contents of the files read on this thread while it lives: the loader's
/// readFile (every configuration file and include) reports to the innermost live recorder.
/// Recorders nest; each sees only what was read while it was the innermost one.
class InputRecorder {
 public:
  InputRecorder();
  ~InputRecorder();
  InputRecorder(const InputRecorder&) = delete;
  InputRecorder& operator=(const InputRecorder&) = delete;

  /// Adds one input: its role (e.g. "file", "set") and its bytes. Order matters.
  void add(std::string_view role, std::string_view bytes);
  /// Reads `file` whole and adds it (role "file"); returns false, adding a marker, when it cannot
  /// be read (the run itself reports that error).
  bool addFile(const std::string& file);
  /// 16 hex digits over everything added, in order.
  std::string digest() const;
  /// How many inputs were added.
  std::size_t count() const { return m_count; }

  /// Adds to the innermost live recorder on this thread, if any.
  static void note(std::string_view role, std::string_view bytes);

 private:
  uint64_t m_hash = fnv1a("scoville inputs");
  std::size_t m_count = 0;
  InputRecorder* m_outer = nullptr;
};

}  // namespace scoville::config
