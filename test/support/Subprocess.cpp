#include "test/support/Subprocess.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

extern char** environ;

namespace scoville::test {

TempDir::TempDir() {
  std::string pattern = (std::filesystem::temp_directory_path() / "scoville-test-XXXXXX").string();
  if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
  m_path = pattern;
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(m_path, ec);
}

std::string readFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

void writeFile(const std::string& path, const std::string& content) {
  std::ofstream out(path, std::ios::binary);
  out << content;
  if (!out) throw std::runtime_error("cannot write " + path);
}

namespace {

pid_t spawnScoville(const std::vector<std::string>& args, const std::string& outPath, const std::string& errPath) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, outPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, errPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);

  std::vector<std::string> argv{SCOVILLE_BINARY};
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<char*> rawArgv;
  for (std::string& a : argv) rawArgv.push_back(a.data());
  rawArgv.push_back(nullptr);

  ::setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 1);
  pid_t pid = 0;
  const int rc = ::posix_spawn(&pid, SCOVILLE_BINARY, &actions, nullptr, rawArgv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) throw std::runtime_error("cannot start " SCOVILLE_BINARY);
  return pid;
}

}  // namespace

int startScoville(const std::vector<std::string>& args) {
  return spawnScoville(args, "/dev/null", "/dev/null");
}

ProcessResult runScoville(const std::vector<std::string>& args) {
  TempDir capture;
  const std::string outPath = capture.file("stdout");
  const std::string errPath = capture.file("stderr");
  const pid_t pid = spawnScoville(args, outPath, errPath);
  int status = 0;
  ::waitpid(pid, &status, 0);

  ProcessResult result;
  result.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  result.out = readFile(outPath);
  result.err = readFile(errPath);
  return result;
}

}  // namespace scoville::test
