// llama.cpp's llama-server and llama-perplexity for the tests labelled llamacpp: where
// scripts/llama-cpp put them (and the demo model's GGUF), and llama-servers started on free
// 127.0.0.1 ports, killed and restarted at will. Missing binaries are a test FAILURE that names
// scripts/setup, never a skip: CI must not pass without the engine.
#pragma once
#include <sys/types.h>

#include <string>
#include <vector>

namespace kvtest {

struct LlamaCpp {
  std::string bin_dir;  // llama-server, llama-perplexity
  std::string gguf;     // models/demo as GGUF (F32 weights)
};

// From `scripts/llama-cpp --locate`; REQUIREs that both are there, naming scripts/setup if not.
LlamaCpp locate_llama_cpp();

// A child process with stdout and stderr in `log_path`.
pid_t spawn_process(const std::vector<std::string>& argv, const std::string& log_path);
// Waits for the child; its exit code, or 128 + the signal that ended it.
int wait_process(pid_t pid);

// A port on 127.0.0.1 nobody listens on now (bound, read, closed).
int free_port();

struct LlamaServerOptions {
  std::string kv_type = "f16";  // --cache-type-k and --cache-type-v
  int ctx = 8192;               // -c, shared by the slots: each has ctx / slots
  int slots = 2;                // -np
  int threads = 1;              // -t: CI machines have 2 cores for several servers
  std::string alias = "demo";   // the model name the server answers to
};

// One llama-server (flash attention on: llama.cpp needs it for a quantized V cache).
class LlamaServer {
 public:
  LlamaServer(const LlamaCpp& llama, LlamaServerOptions options, std::string log_path);
  ~LlamaServer();
  LlamaServer(const LlamaServer&) = delete;
  LlamaServer& operator=(const LlamaServer&) = delete;

  void start();  // on the same port each time; returns when /health answers 200
  void kill();   // SIGKILL, as a crashed engine
  std::string base() const { return "http://127.0.0.1:" + std::to_string(port_); }
  const std::string& log_path() const { return log_path_; }

 private:
  LlamaCpp llama_;
  LlamaServerOptions options_;
  std::string log_path_;
  int port_;
  pid_t pid_ = -1;
};

}  // namespace kvtest
