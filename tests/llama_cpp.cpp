#include "tests/llama_cpp.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <httplib.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "tests/catch_compat.hpp"
#include "tests/test_util.h"

extern char** environ;

namespace kvtest {

LlamaCpp locate_llama_cpp() {
  TempDir dir;
  const pid_t pid = spawn_process({"scripts/llama-cpp", "--locate"}, dir.file("locate.txt"));
  const int rc = wait_process(pid);
  const std::string out = read_text(dir.file("locate.txt"));
  INFO(out);
  INFO("llama.cpp's llama-server is not built: run scripts/setup (it runs scripts/llama-cpp)");
  REQUIRE(rc == 0);
  LlamaCpp l;
  std::istringstream lines(out);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("bin=", 0) == 0) l.bin_dir = line.substr(4);
    if (line.rfind("gguf=", 0) == 0) l.gguf = line.substr(5);
  }
  REQUIRE(!l.bin_dir.empty());
  REQUIRE(!l.gguf.empty());
  return l;
}

pid_t spawn_process(const std::vector<std::string>& argv, const std::string& log_path) {
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  posix_spawn_file_actions_addclose(&actions, STDIN_FILENO);
  pid_t pid = -1;
  const int rc = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) throw std::runtime_error("cannot start " + argv[0]);
  return pid;
}

int wait_process(pid_t pid) {
  int status = 0;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) return -1;
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : -1;
}

int free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = 0;
  socklen_t len = sizeof a;
  if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0)
    throw std::runtime_error("no free port on 127.0.0.1");
  ::close(fd);
  return ntohs(a.sin_port);
}

LlamaServer::LlamaServer(const LlamaCpp& llama, LlamaServerOptions options, std::string log_path)
    : llama_(llama), options_(std::move(options)), log_path_(std::move(log_path)), port_(free_port()) {
  start();
}

LlamaServer::~LlamaServer() {
  if (pid_ > 0) {
    ::kill(pid_, SIGTERM);
    wait_process(pid_);
  }
}

void LlamaServer::start() {
  const std::vector<std::string> argv = {llama_.bin_dir + "/llama-server", "-m", llama_.gguf, "--host", "127.0.0.1", "--port",
                                         std::to_string(port_), "-c", std::to_string(options_.ctx), "-np",
                                         std::to_string(options_.slots), "-t", std::to_string(options_.threads), "-tb",
                                         std::to_string(options_.threads), "-fa", "on", "--cache-type-k", options_.kv_type,
                                         "--cache-type-v", options_.kv_type, "--alias", options_.alias, "--no-webui"};
  pid_ = spawn_process(argv, log_path_);
  httplib::Client client("127.0.0.1", port_);
  client.set_connection_timeout(1);
  for (int i = 0; i < 1200; ++i) {  // up to 2 minutes on a loaded machine
    if (auto r = client.Get("/health"); r && r->status == 200) return;
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      FAIL("llama-server exited at start (log: " << read_text(log_path_) << ")");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  FAIL("llama-server did not answer /health in 2 minutes (log " << log_path_ << ")");
}

void LlamaServer::kill() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGKILL);
  wait_process(pid_);
  pid_ = -1;
}

}  // namespace kvtest
