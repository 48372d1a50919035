#include "cli/BuildId.h"

#include <elf.h>
#include <link.h>

#include <cstring>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "config/InputDigest.h"

namespace scoville::cli {

namespace {

/// The NT_GNU_BUILD_ID note of the main program's PT_NOTE segments, in hex ("" if none).
int findBuildId(struct dl_phdr_info* info, std::size_t /*size*/, void* data) {
  auto* out = static_cast<std::string*>(data);
  // The first object dl_iterate_phdr reports is the main program.
  for (ElfW(Half) i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& segment = info->dlpi_phdr[i];
    if (segment.p_type != PT_NOTE) continue;
    const auto* at = reinterpret_cast<const unsigned char*>(info->dlpi_addr + segment.p_vaddr);
    const unsigned char* end = at + segment.p_memsz;
    while (at + sizeof(ElfW(Nhdr)) <= end) {
      ElfW(Nhdr) note;
      std::memcpy(&note, at, sizeof note);
      const unsigned char* name = at + sizeof note;
      const unsigned char* desc = name + ((note.n_namesz + 3u) & ~3u);
      const unsigned char* next = desc + ((note.n_descsz + 3u) & ~3u);
      if (next > end) break;
      if (note.n_type == NT_GNU_BUILD_ID && note.n_namesz == 4 && std::memcmp(name, "GNU", 4) == 0) {
        for (ElfW(Word) b = 0; b < note.n_descsz; ++b) *out += fmt::format("{:02x}", desc[b]);
        return 1;
      }
      at = next;
    }
  }
  return 1;  // only the main program
}

std::string computeBuildId() {
  std::string id;
  dl_iterate_phdr(findBuildId, &id);
  if (!id.empty()) return id;
  std::ifstream in("/proc/self/exe", std::ios::binary);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return fmt::format("fnv-{:016x}", config::fnv1a(bytes.str()));
}

}  // namespace

const std::string& buildId() {
  static const std::string id = computeBuildId();
  return id;
}

}  // namespace scoville::cli
