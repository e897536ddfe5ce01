// kvgate serve: the reference decoder as an OpenAI-compatible server.
#include <memory>

#include "cli_common.h"

namespace kvgate::cli {

namespace {
struct ServeOptions {
  std::string model_dir, kv_format = "bf16", host = "127.0.0.1", device;
  int port = 8000;
};
}  // namespace

void register_serve(CLI::App& app, Commands& commands) {
  auto o = std::make_shared<ServeOptions>();
  CLI::App* sub = app.add_subcommand("serve", "Serve the reference decoder with a chosen KV format as an OpenAI-compatible endpoint");
  sub->add_option("--model-dir", o->model_dir, "Hugging Face checkpoint directory")->required();
  sub->add_option("--kv-format", o->kv_format, "KV-cache format")->capture_default_str();
  sub->add_option("--host", o->host, "Address to bind (loopback unless you say otherwise)")->capture_default_str();
  sub->add_option("--port", o->port, "Port")->check(CLI::Range(1, 65535))->capture_default_str();
  sub->add_option("--device", o->device, "cuda or cpu (default cuda when a GPU is present)")->check(CLI::IsMember({"cuda", "cpu"}));
  commands.add(sub, [o] { return not_built("serve", 13); });
}

}  // namespace kvgate::cli
