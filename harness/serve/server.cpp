#include "harness/serve/server.h"

#include <httplib.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <future>

#include "harness/core/error.h"
#include "harness/core/log.h"
#include "harness/core/version.h"
#include "harness/serve/api_error.h"
#include "harness/serve/openai_request.h"
#include "harness/serve/openai_response.h"

namespace kvgate::serve {

using nlohmann::json;

struct Server::Impl {
  decoder::Engine& engine;
  const decoder::ModelText& text;
  ServeOptions options;
  ServedModelInfo model;
  json engine_description;
  long long started = 0;
  std::atomic<unsigned long long> next_id{1};
  httplib::Server http;

  Impl(decoder::Engine& e, const decoder::ModelText& t, const decoder::ModelConfig& c, ServeOptions o)
      : engine(e), text(t), options(std::move(o)) {
    model = ServedModelInfo{.name = options.model_name,
                            .text = &text,
                            .vocab_size = c.vocab_size,
                            .max_model_len = c.max_position_embeddings,
                            .default_max_tokens = options.default_max_tokens};
    engine_description = engine.describe();
    started = static_cast<long long>(std::time(nullptr));
    routes();
  }

  static void send_json(httplib::Response& res, int status, const json& body) {
    res.status = status;
    res.set_content(body.dump(), "application/json");
  }
  static void send_error(httplib::Response& res, int status, const std::string& message, const std::string& param = "",
                         const std::string& code = "") {
    send_json(res, status, error_body(status, message, param, code));
  }

  // Every handler: an ApiError is its status; a kvgate::Error bad input (400); anything else 500.
  template <class F>
  httplib::Server::Handler guarded(F f) {
    return [this, f](const httplib::Request& req, httplib::Response& res) {
      const auto t0 = std::chrono::steady_clock::now();
      try {
        f(req, res);
      } catch (const ApiError& e) {
        send_error(res, e.status(), e.what(), e.param(), e.code());
      } catch (const Error& e) {
        send_error(res, e.exit_code() == kExitInternal ? 500 : 400, e.what());
      } catch (const std::exception& e) {
        send_error(res, 500, std::string("internal error: ") + e.what());
      }
      const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      log_verbose(req.method + " " + req.path + " -> " + std::to_string(res.status) + " (" + std::to_string(ms) + " ms)");
    };
  }

  ResponseHead head(const char* prefix) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%s%llx", prefix, next_id.fetch_add(1));
    return {.id = buf, .created = static_cast<long long>(std::time(nullptr)), .model = model.name};
  }

  decoder::GenerateOptions generate_options(const GenerationRequest& g, int max_tokens) const {
    decoder::TextSampling s = g.sampling;
    s.max_tokens = max_tokens;
    return text.generate_options(s);
  }

  Choice run_one(const GenerationRequest& g, std::size_t i) {
    const decoder::Generation gen = engine.generate(g.prompts[i], generate_options(g, g.max_tokens[i]));
    return {.text = decoder::ModelText::text_of(gen),
            .finish_reason = gen.finish_reason,
            .prompt_tokens = gen.prompt_tokens,
            .completion_tokens = static_cast<int>(gen.tokens.size())};
  }

  void generate(const GenerationRequest& g, httplib::Response& res) {
    if (g.stream) return stream(g, res);
    if (g.chat) return send_json(res, 200, chat_completion(head("chatcmpl-"), run_one(g, 0)));
    // Several prompts: submitted together, so the engine decodes them as one batch.
    std::vector<std::future<Choice>> futures;
    for (std::size_t i = 1; i < g.prompts.size(); ++i)
      futures.push_back(std::async(std::launch::async, [this, &g, i] { return run_one(g, i); }));
    std::vector<Choice> choices{run_one(g, 0)};
    for (auto& f : futures) choices.push_back(f.get());
    send_json(res, 200, text_completion(head("cmpl-"), choices));
  }

  // SSE: a chunk per piece of final text (what no stop string can still cut), then the finish
  // chunk, the usage chunk when asked, and [DONE]. A client that goes away stops the generation.
  void stream(const GenerationRequest& request, httplib::Response& res) {
    auto g = std::make_shared<GenerationRequest>(request);
    const ResponseHead h = head(g->chat ? "chatcmpl-" : "cmpl-");
    res.set_header("Cache-Control", "no-cache");
    res.set_chunked_content_provider("text/event-stream", [this, g, h](std::size_t, httplib::DataSink& sink) {
      const auto send = [&](const json& j) {
        const std::string e = sse_event(j);
        return sink.write(e.data(), e.size());
      };
      const auto piece = [&](const std::string& t) {
        return send(g->chat ? chat_chunk(h, {{"content", t}}, nullptr) : completion_chunk(h, t, nullptr));
      };
      if (g->chat && !send(chat_chunk(h, {{"role", "assistant"}, {"content", ""}}, nullptr))) return false;
      decoder::GenerateOptions o = generate_options(*g, g->max_tokens[0]);
      decoder::TextStreamer streamer(o.token_text, o.stop_token_ids, o.stop);
      bool client_gone = false;
      o.on_token = [&](int id) {
        const std::string t = streamer.push(id);
        if (!t.empty() && !piece(t)) client_gone = true;
        return !client_gone;
      };
      try {
        const decoder::Generation gen = engine.generate(g->prompts[0], o);
        if (client_gone || gen.finish_reason == "cancelled") return false;
        const std::string rest = streamer.finish(decoder::ModelText::text_of(gen));
        if (!rest.empty() && !piece(rest)) return false;
        if (!send(g->chat ? chat_chunk(h, json::object(), gen.finish_reason) : completion_chunk(h, "", gen.finish_reason)))
          return false;
        if (g->include_usage &&
            !send(usage_chunk(h, g->chat, usage_json(gen.prompt_tokens, static_cast<int>(gen.tokens.size())))))
          return false;
      } catch (const std::exception& e) {  // the status line is sent: report it in the stream, as vLLM does
        send(error_body(500, std::string("generation failed: ") + e.what()));
      }
      sink.write(sse_done(), std::string_view(sse_done()).size());
      sink.done();
      return true;
    });
  }

  json models_list() const {
    return {{"object", "list"},
            {"data", json::array({{{"id", model.name},
                                   {"object", "model"},
                                   {"created", started},
                                   {"owned_by", "kvgate"},
                                   {"root", options.info.value("model_dir", model.name)},
                                   {"parent", nullptr},
                                   {"max_model_len", model.max_model_len}}})}};
  }

  json server_info() const {
    json info = options.info;
    info["engine"] = "kvgate-reference";
    info["version"] = version();
    info["commit"] = git_commit();
    info["served_model_name"] = model.name;
    info["context_length"] = model.max_model_len;
    if (engine_description.contains("kv")) {
      info["kv"] = engine_description["kv"];
      info["kv_cache_dtype"] = engine_description["kv"].value("format", "");
    }
    info["kernel_switches"] = engine_description.value("kernel_switches", json::object());
    info["engine_description"] = engine_description;
    return info;
  }

  void routes() {
    // SO_REUSEADDR only: httplib's default adds SO_REUSEPORT, with which a second server on a port
    // in use binds too and the kernel splits connections between the two.
    http.set_socket_options([](socket_t sock) {
      int yes = 1;
      ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, reinterpret_cast<const void*>(&yes), sizeof yes);
    });
    http.set_payload_max_length(options.max_body_bytes);
    const int workers = options.workers;
    http.new_task_queue = [workers] { return new httplib::ThreadPool(static_cast<std::size_t>(workers)); };
    // Statuses httplib sets itself (404 no route, 413 too large, 400 unreadable request): an
    // OpenAI error body instead of an empty one.
    http.set_error_handler([this](const httplib::Request& req, httplib::Response& res) {
      if (!res.body.empty()) return;
      std::string message = "HTTP " + std::to_string(res.status);
      if (res.status == 404)
        message = "no route " + req.method + " " + req.path +
                  ": kvgate serve answers GET /v1/models, POST /v1/chat/completions, POST /v1/completions, POST /tokenize, "
                  "POST /detokenize, GET /health, GET /version, GET /server_info";
      else if (res.status == 413)
        message = "the request body is larger than this server's limit of " + std::to_string(options.max_body_bytes) +
                  " bytes (kvgate serve --max-body-bytes)";
      send_error(res, res.status, message);
    });
    http.set_exception_handler([](const httplib::Request&, httplib::Response& res, std::exception_ptr ep) {
      std::string what = "unknown exception";
      try {
        if (ep) std::rethrow_exception(ep);
      } catch (const std::exception& e) {
        what = e.what();
      } catch (...) {
      }
      send_error(res, 500, "internal error: " + what);
    });
    http.Get("/health", guarded([](const httplib::Request&, httplib::Response& res) { res.status = 200; }));
    http.Get("/version", guarded([](const httplib::Request&, httplib::Response& res) {
      send_json(res, 200, {{"version", version()}, {"engine", "kvgate-reference"}});
    }));
    http.Get("/server_info", guarded([this](const httplib::Request&, httplib::Response& res) { send_json(res, 200, server_info()); }));
    http.Get("/v1/models", guarded([this](const httplib::Request&, httplib::Response& res) { send_json(res, 200, models_list()); }));
    http.Post("/v1/chat/completions", guarded([this](const httplib::Request& req, httplib::Response& res) {
      generate(parse_chat_request(parse_body(req.body), model), res);
    }));
    http.Post("/v1/completions", guarded([this](const httplib::Request& req, httplib::Response& res) {
      generate(parse_completion_request(parse_body(req.body), model), res);
    }));
    http.Post("/tokenize", guarded([this](const httplib::Request& req, httplib::Response& res) {
      send_json(res, 200, tokenize(parse_body(req.body), model));
    }));
    http.Post("/detokenize", guarded([this](const httplib::Request& req, httplib::Response& res) {
      send_json(res, 200, detokenize(parse_body(req.body), model));
    }));
  }
};

Server::Server(decoder::Engine& engine, const decoder::ModelText& text, const decoder::ModelConfig& config, ServeOptions options)
    : impl_(std::make_unique<Impl>(engine, text, config, std::move(options))) {
  if (impl_->options.model_name.empty()) throw Error("serve: the served model name is empty", kExitInternal);
  if (impl_->options.workers < 1) throw Error("--workers must be at least 1");
}

Server::~Server() { stop(); }

int Server::bind(const std::string& host, int port) {
  const int bound = port == 0 ? impl_->http.bind_to_any_port(host) : (impl_->http.bind_to_port(host, port) ? port : -1);
  if (bound <= 0)
    throw Error("serve: cannot listen on " + host + ":" + std::to_string(port) +
                " (in use, or not an address of this machine): pick another --port or --host");
  return bound;
}

void Server::listen() { impl_->http.listen_after_bind(); }

void Server::stop() {
  if (impl_->http.is_running()) impl_->http.stop();
}

}  // namespace kvgate::serve
