// Replays the fuzzer's inputs (test/fuzz/FuzzTargets.h: the first byte picks the target): the
// regressions in test/fuzz/regressions/, inputs that once crashed a reader or broke a property, or
// that probe corners (aliases, complex keys, tags, overflow, include cycles); and the seed corpus
// in test/fuzz/corpus/. Each must be accepted, with every property holding, or refused the
// documented way. An `open-` regression is a bug not fixed yet: it must still fail (with the
// fuzzer's step-arounds off) until it is fixed, and then be renamed. Each input is replayed in a
// child process with a time limit, so that a crash or a hang fails its test instead of ending or
// stalling the suite.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "test/fuzz/FuzzTargets.h"
#include "test/support/Subprocess.h"

namespace scoville::test {
namespace {

namespace fs = std::filesystem;

std::vector<fs::path> inputsBelow(const std::string& folder) {
  std::vector<fs::path> files;
  for (const auto& entry : fs::recursive_directory_iterator(std::string(SCOVILLE_SOURCE_DIR) + "/" + folder)) {
    if (entry.is_regular_file() && entry.path().filename() != "README.md") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

bool isOpen(const fs::path& file) {
  return file.filename().string().rfind("open-", 0) == 0;
}

/// The failure `file` makes the fuzz target report ("" when none).
std::string replay(const fs::path& file, fuzz::Outcome* outcome = nullptr) {
  const std::string input = readFile(file.string());
  if (input.empty()) return "empty input file";
  try {
    const fuzz::Outcome o = fuzz::runFuzzInput(static_cast<uint8_t>(input[0]), std::string_view(input).substr(1));
    if (outcome != nullptr) *outcome = o;
    if (o == fuzz::Outcome::kNotAnInput) return "not an input of any target (first byte " +
                                                 std::to_string(static_cast<uint8_t>(input[0])) + ")";
  } catch (const fuzz::FuzzFailure& f) {
    return f.message;
  } catch (const std::exception& e) {
    return "exception escaped the target: " + fuzz::typeName(e) + ": " + e.what();
  }
  return "";
}

/// Replays `file` in a forked child that may run `limitS` seconds: what replay() says, or how the
/// child ended.
std::string replayInChild(const fs::path& file, bool skipOpenBugs, unsigned limitS,
                          fuzz::Outcome* outcome = nullptr) {
  (void)fuzz::scratchDirectory();  // made here, so that the children share it and this process removes it
  int pipeFds[2];
  if (pipe(pipeFds) != 0) return std::string("pipe: ") + std::strerror(errno);
  const pid_t pid = fork();
  if (pid < 0) return std::string("fork: ") + std::strerror(errno);
  if (pid == 0) {
    close(pipeFds[0]);
    alarm(limitS);  // a hang ends with SIGALRM
    fuzz::skipOpenBugs() = skipOpenBugs;
    fuzz::Outcome o = fuzz::Outcome::kNotAnInput;
    const std::string message = replay(file, &o);
    const char code = static_cast<char>(o);
    ssize_t written = write(pipeFds[1], &code, 1);
    if (written == 1) written = write(pipeFds[1], message.data(), message.size());
    _exit(written < 0 ? 3 : 0);
  }
  close(pipeFds[1]);
  std::string received;
  char buffer[4096];
  for (ssize_t n; (n = read(pipeFds[0], buffer, sizeof buffer)) > 0;) received.append(buffer, static_cast<std::size_t>(n));
  close(pipeFds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (WIFSIGNALED(status)) {
    return WTERMSIG(status) == SIGALRM ? "hangs (still running after " + std::to_string(limitS) + " s)"
                                       : std::string("crashes: ") + strsignal(WTERMSIG(status));
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || received.empty()) return "the replaying child failed";
  if (outcome != nullptr) *outcome = static_cast<fuzz::Outcome>(received[0]);
  return received.substr(1);
}

TEST(FuzzRegressions, EveryStoredInputIsRefusedTheDocumentedWayOrAcceptedWithItsProperties) {
  int replayed = 0;
  for (const fs::path& file : inputsBelow("test/fuzz/regressions")) {
    if (isOpen(file)) continue;
    EXPECT_EQ(replayInChild(file, true, 10), "") << file;
    ++replayed;
  }
  EXPECT_GE(replayed, 5);
}

TEST(FuzzRegressions, OpenBugsStillFailUntilFixed) {
  for (const fs::path& file : inputsBelow("test/fuzz/regressions")) {
    if (!isOpen(file)) continue;
    // A hang shows within 2 s (the unit suite's processes have 30 s).
    EXPECT_NE(replayInChild(file, false, 2), "") << file << " passes now: the bug is fixed, rename it without 'open-'";
  }
}

TEST(FuzzRegressions, TheSeedCorpusHoldsEveryTargetAndPassesIt) {
  std::vector<int> accepted(sizeof(fuzz::kTargets) / sizeof(fuzz::kTargets[0]), 0);
  for (const fs::path& file : inputsBelow("test/fuzz/corpus")) {
    fuzz::Outcome outcome = fuzz::Outcome::kNotAnInput;
    EXPECT_EQ(replayInChild(file, true, 10, &outcome), "") << file;
    const std::string input = readFile(file.string());
    const fuzz::TargetInfo* target = input.empty() ? nullptr : fuzz::targetOf(static_cast<uint8_t>(input[0]));
    if (target != nullptr && outcome == fuzz::Outcome::kAccepted) {
      ++accepted[static_cast<std::size_t>(target - fuzz::kTargets)];
    }
  }
  for (std::size_t i = 0; i < accepted.size(); ++i) {
    EXPECT_GE(accepted[i], 1) << "no seed of target " << fuzz::kTargets[i].name << " is accepted";
  }
}

}  // namespace
}  // namespace scoville::test
