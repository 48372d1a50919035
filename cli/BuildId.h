#pragma once
// The identity of the running executable, so that results computed by another build are not
// taken for this one's (a sweep's reuse check, docs/sweeps.md#reuse).

#include <string>

namespace scoville::cli {

/// The executable's GNU build ID in hex (the linker's hash of its contents), or, for a binary
/// linked without one, "fnv-" and a digest of /proc/self/exe. Computed once.
const std::string& buildId();

}  // namespace scoville::cli
