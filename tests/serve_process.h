// `kvgate serve` as a child process for end-to-end tests: started with --port 0, the port read from
// the line it prints, stopped with SIGTERM (a graceful stop must exit 0).
#pragma once
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <stdexcept>
#include <string>
#include <vector>

extern char** environ;

namespace kvtest {

class ServeProcess {
 public:
  // Starts `kvgate serve ARGS --port 0` and waits (up to `timeout_s`) for its "on http://..." line.
  explicit ServeProcess(std::vector<std::string> args, double timeout_s = 120.0) {
    int fds[2];
    if (::pipe(fds) != 0) throw std::runtime_error("pipe failed");
    std::vector<std::string> argv_s = {KVGATE_BIN, "serve", "--port", "0"};
    argv_s.insert(argv_s.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& a : argv_s) argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
    posix_spawn_file_actions_addclose(&fa, fds[0]);
    const int rc = posix_spawn(&pid_, argv[0], &fa, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&fa);
    ::close(fds[1]);
    if (rc != 0) {
      ::close(fds[0]);
      throw std::runtime_error("cannot start kvgate serve");
    }
    out_ = fds[0];
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
    while (line_.find('\n') == std::string::npos) {
      const int left = static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count());
      pollfd p{out_, POLLIN, 0};
      if (left <= 0 || ::poll(&p, 1, left) <= 0) throw std::runtime_error("kvgate serve did not start in time");
      char buf[512];
      const ssize_t n = ::read(out_, buf, sizeof buf);
      if (n <= 0) throw std::runtime_error("kvgate serve exited before listening: " + line_);
      line_.append(buf, static_cast<std::size_t>(n));
    }
    const std::size_t at = line_.find("http://127.0.0.1:");
    if (at == std::string::npos) throw std::runtime_error("unexpected first line from kvgate serve: " + line_);
    port_ = std::stoi(line_.substr(at + 17));
  }
  ~ServeProcess() {
    if (pid_ > 0) stop();
    if (out_ >= 0) ::close(out_);
  }
  int port() const { return port_; }
  const std::string& first_line() const { return line_; }
  std::string base_url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/v1"; }
  // SIGTERM, then the exit code (or 128 + signal).
  int stop() {
    ::kill(pid_, SIGTERM);
    int status = 0;
    ::waitpid(pid_, &status, 0);
    pid_ = -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }

 private:
  pid_t pid_ = -1;
  int out_ = -1, port_ = 0;
  std::string line_;
};

}  // namespace kvtest
