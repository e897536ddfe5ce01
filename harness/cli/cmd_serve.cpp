// kvgate serve: the reference decoder as an OpenAI-compatible server. A thin layer over serve/server.h.
#include <atomic>
#include <chrono>
#include <filesystem>
#include <iostream>
#include <memory>
#include <thread>

#include "harness/core/error.h"
#include "harness/core/log.h"
#include "harness/decoder/device.h"
#include "harness/decoder/model_text.h"
#include "harness/cli/reference_flags.h"
#include "harness/runner/stop_signal.h"
#include "harness/serve/server.h"

namespace kvgate::cli {

namespace {
struct ServeCli {
  ReferenceFlags ref;
  std::string host = "127.0.0.1", name;
  int port = 8000, workers = 64, default_max_tokens = 0;
  std::size_t max_body_bytes = std::size_t{16} << 20;
};

bool loopback(const std::string& host) { return host == "127.0.0.1" || host == "localhost" || host == "::1"; }

int serve(const ServeCli& c) {
  const std::string device = decoder::resolve_device(c.ref.device);
  const kernels::KvStoreOptions kv = decoder::kv_store_options(c.ref.kv);
  const nlohmann::json switches = reference_switches(c.ref);
  auto model = decoder::Model::load(c.ref.model_dir);
  const decoder::ModelText text = decoder::ModelText::load(c.ref.model_dir, model->config());
  auto engine = make_reference_engine(model, c.ref, kv, device, switches);
  std::string name = c.name;
  if (name.empty()) {
    name = std::filesystem::path(c.ref.model_dir).lexically_normal().filename().string();
    if (name.empty()) name = std::filesystem::path(c.ref.model_dir).lexically_normal().parent_path().filename().string();
    if (name.empty()) name = "model";
  }
  serve::Server server(*engine, text, model->config(),
                       {.model_name = name,
                        .max_body_bytes = c.max_body_bytes,
                        .workers = c.workers,
                        .default_max_tokens = c.default_max_tokens,
                        .info = {{"model_dir", c.ref.model_dir}, {"device", decoder::device_record(c.ref.device, device)}}});
  if (!loopback(c.host))
    log_warn("--host " + c.host + ": the server has no authentication; anyone who can reach this address can use it");
  const int port = server.bind(c.host, c.port);
  runner::StopSignals signals("\nkvgate serve: stopping (again to quit now)\n");
  std::atomic<bool> done{false};
  std::thread watcher([&] {  // Ctrl-C / SIGTERM: stop accepting, finish, return
    while (!signals.flag().load() && !done.load()) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    // A signal can come before listen() has started (stop() is then a no-op): ask until it returns.
    while (!done.load()) {
      server.stop();
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  });
  struct JoinAtExit {
    std::atomic<bool>& done;
    std::thread& t;
    ~JoinAtExit() {
      done = true;
      t.join();
    }
  } join_at_exit{done, watcher};
  const std::string url_host = c.host.find(':') != std::string::npos ? "[" + c.host + "]" : c.host;
  std::cout << "kvgate serve: " << name << " (kv " << kv.format << ", " << device << ") on http://" << url_host << ":" << port
            << "/v1" << std::endl;
  server.listen();
  if (!signals.flag().load()) throw Error("serve: the server stopped unexpectedly (the listening socket failed)");
  log_info("serve: stopped");
  return 0;
}
}  // namespace

void register_serve(CLI::App& app, Commands& commands) {
  auto c = std::make_shared<ServeCli>();
  c->ref.kv.format = "bf16";
  CLI::App* sub = app.add_subcommand("serve", "Serve the reference decoder with a chosen KV format as an OpenAI-compatible endpoint");
  add_reference_flags(sub, c->ref, /*kv=*/true, /*kv_required=*/false, /*default_threads=*/1);
  sub->add_option("--host", c->host, "Address to bind (loopback unless you say otherwise)")->capture_default_str();
  sub->add_option("--port", c->port, "Port (0: one the OS picks; the line on stdout says which)")
      ->check(CLI::Range(0, 65535))->capture_default_str();
  sub->add_option("--served-model-name", c->name, "Model name requests use (default: the checkpoint directory's name)");
  sub->add_option("--max-body-bytes", c->max_body_bytes, "Largest request body; larger ones get 413")
      ->check(CLI::Range(std::size_t{1024}, std::size_t{1} << 34))->capture_default_str();
  sub->add_option("--workers", c->workers, "Connections served at once")->check(CLI::Range(1, 4096))->capture_default_str();
  sub->add_option("--default-max-tokens", c->default_max_tokens,
                  "max_tokens of a request that gives none (0: what the context has left, as vLLM)")
      ->check(CLI::NonNegativeNumber)->capture_default_str();
  sub->footer(
      "Requests without a temperature sample at 1.0 (OpenAI's default) and without a seed use seed 0, so the same\n"
      "request gives the same answer. Penalties, logit_bias, logprobs, guided decoding and n > 1 are refused (400).");
  commands.add(sub, [c] { return serve(*c); });
}

}  // namespace kvgate::cli
