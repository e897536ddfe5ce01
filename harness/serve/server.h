// `kvgate serve`: the reference decoder behind an OpenAI-compatible HTTP server (cpp-httplib), so
// other harnesses (lm-eval's local-chat-completions, the OpenAI SDKs, kvgate's own driver) can
// evaluate any KV format through it. Routes: GET /v1/models, POST /v1/chat/completions and
// /v1/completions (streaming SSE or not), POST /tokenize and /detokenize (vLLM's shapes), GET
// /health, /version and /server_info (engine, KV format record, device: what kvgate run records).
// Each connection has a worker; concurrent requests reach the engine together, which batches them
// where the device does. Bad requests get 4xx OpenAI error objects; nothing a client sends stops
// the server.
#pragma once
#include <cstddef>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "harness/decoder/engine.h"
#include "harness/decoder/model_text.h"

namespace kvgate::serve {

struct ServeOptions {
  std::string model_name;                      // what /v1/models lists and requests must name
  std::size_t max_body_bytes = std::size_t{16} << 20;  // larger bodies: 413
  int workers = 64;                            // connections served at once
  int default_max_tokens = 0;                  // 0: what the context has left (vLLM)
  nlohmann::json info = nlohmann::json::object();  // more for /server_info (model dir, device, ...)
};

class Server {
 public:
  // The engine and text must outlive the server.
  Server(decoder::Engine& engine, const decoder::ModelText& text, const decoder::ModelConfig& config, ServeOptions options);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Binds host:port (port 0: one the OS picks) and returns the port; Error when it cannot.
  int bind(const std::string& host, int port);
  // Serves until stop(); call after bind().
  void listen();
  void stop();

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace kvgate::serve
