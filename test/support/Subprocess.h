#pragma once
// Runs the scoville executable as a child process and captures its exit code and output.

#include <string>
#include <vector>

namespace scoville::test {

struct ProcessResult {
  int exitCode = -1;
  std::string out;
  std::string err;
};

/// Runs SCOVILLE_BINARY with `args` (each passed as one argument, no shell interpretation).
ProcessResult runScoville(const std::vector<std::string>& args);

/// Starts SCOVILLE_BINARY with `args` in the background (output discarded); returns its pid.
int startScoville(const std::vector<std::string>& args);

/// A fresh empty directory under the system temp directory, removed by the destructor.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return m_path; }
  std::string file(const std::string& name) const { return m_path + "/" + name; }

 private:
  std::string m_path;
};

std::string readFile(const std::string& path);
void writeFile(const std::string& path, const std::string& content);

}  // namespace scoville::test
