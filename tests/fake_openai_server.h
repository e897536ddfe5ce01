// A fake OpenAI-compatible server on 127.0.0.1 for the driver's tests and benchmark: answers
// /v1/chat/completions and /v1/completions (plain or SSE), /v1/models, /version and a vLLM-style
// /metrics, and injects faults at configurable rates: 429 + Retry-After, 500, 503, answers slower
// than the client's timeout, connections dropped mid-body, truncated JSON, broken SSE streams.
//
// Set the public fields, then start(). The fake model is deterministic: asked "Say WORD" it answers WORD, except when
// hash(WORD, seed) % 5 == 0, when it answers "wrong" (so scores depend on the trial and its
// repeat's seed, and a run that resends a trial must get the same score).
#pragma once
#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/core/rng.h"
#include "tests/local_server.h"

namespace kvtest {

struct FaultRates {
  double r429 = 0, r500 = 0, r503 = 0, slow = 0, drop = 0, truncated = 0, broken_sse = 0;
  std::string retry_after = "0";  // Retry-After header value sent with 429 (and 503)
  int slow_ms = 300;              // a "slow" answer waits this long (set it past the client's --timeout)
  double sum() const { return r429 + r500 + r503 + slow + drop + truncated + broken_sse; }
  static FaultRates uniform(double total) {  // `total` spread evenly over the seven kinds
    const double each = total / 7.0;
    FaultRates f;
    f.r429 = f.r500 = f.r503 = f.slow = f.drop = f.truncated = f.broken_sse = each;
    return f;
  }
};

inline std::string fake_model_answer(const std::string& prompt, std::uint64_t seed) {
  const std::string word = prompt.rfind("Say ", 0) == 0 ? prompt.substr(4) : prompt;
  return kvgate::derive_seed(seed, word) % 5 == 0 ? "wrong" : word;
}

class FakeOpenAIServer {
 public:
  FaultRates faults;
  int chunk_delay_ms = 0;         // between SSE chunks (to measure inter-token gaps)
  int answer_delay_ms = 0;        // before every answer (to slow a run down for kill tests)
  std::string model = "fake-model";
  std::string required_key;       // when set, requests without "Authorization: Bearer <key>" get 401
  std::string garbage;            // when set, every completion request gets this body with status 200
  std::atomic<std::size_t> requests{0};
  std::atomic<std::size_t> injected{0};
  std::atomic<int> in_flight{0}, max_in_flight{0};

  explicit FakeOpenAIServer(std::uint64_t fault_seed = 1, std::size_t threads = 96) : rng_(fault_seed) {
    auto& s = base_.server;
    s.new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
    s.set_keep_alive_max_count(1000000);
    s.set_keep_alive_timeout(2);
    s.set_tcp_nodelay(true);
    s.set_payload_max_length(64u << 20);
    s.Post("/v1/chat/completions", [this](const httplib::Request& rq, httplib::Response& rs) { answer(rq, rs, true); });
    s.Post("/v1/completions", [this](const httplib::Request& rq, httplib::Response& rs) { answer(rq, rs, false); });
    s.Get("/v1/models", [this](const httplib::Request&, httplib::Response& rs) {
      nlohmann::json j = {{"object", "list"}, {"data", {{{"id", model}, {"object", "model"}, {"max_model_len", 4096}}}}};
      rs.set_content(j.dump(), "application/json");
    });
    s.Get("/version", [](const httplib::Request&, httplib::Response& rs) { rs.set_content(R"({"version":"0.0.fake"})", "application/json"); });
    s.Get("/metrics", [](const httplib::Request&, httplib::Response& rs) {
      rs.set_content("# TYPE vllm:cache_config_info gauge\nvllm:cache_config_info{block_size=\"16\",cache_dtype=\"fp8_e4m3\"} 1.0\n",
                     "text/plain");
    });
  }

  void start() { base_.start(); }  // after setting the fields above
  std::string base_url() const { return base_.url("/v1"); }
  int port() const { return base_.port; }

  std::map<std::string, std::size_t> fault_counts() {
    std::lock_guard<std::mutex> lock(mu_);
    return counts_;
  }
  std::vector<nlohmann::json> bodies() {  // the last request bodies received (at most 10000)
    std::lock_guard<std::mutex> lock(mu_);
    return bodies_;
  }
  std::vector<std::string> auth_headers() {
    std::lock_guard<std::mutex> lock(mu_);
    return auth_;
  }

 private:
  std::string pick_fault(bool stream) {
    std::lock_guard<std::mutex> lock(mu_);
    double u = rng_.uniform();
    const std::pair<const char*, double> kinds[] = {{"429", faults.r429},   {"500", faults.r500},       {"503", faults.r503},
                                                    {"slow", faults.slow},  {"drop", faults.drop},      {"truncated", faults.truncated},
                                                    {"broken_sse", faults.broken_sse}};
    for (const auto& [name, rate] : kinds) {
      if (u < rate) {
        std::string kind = name;
        if (kind == "broken_sse" && !stream) kind = "truncated";
        ++counts_[kind];
        return kind;
      }
      u -= rate;
    }
    return "";
  }

  static void error_body(httplib::Response& rs, int status, const std::string& message) {
    rs.status = status;
    nlohmann::json j = {{"error", {{"message", message}, {"type", "fake"}, {"code", status}}}};
    rs.set_content(j.dump(), "application/json");
  }

  void answer(const httplib::Request& rq, httplib::Response& rs, bool chat) {
    ++requests;
    const int now = ++in_flight;
    for (int m = max_in_flight.load(); now > m && !max_in_flight.compare_exchange_weak(m, now);) {
    }
    struct Leave {
      std::atomic<int>& n;
      ~Leave() { --n; }
    } leave{in_flight};

    nlohmann::json body = nlohmann::json::parse(rq.body, nullptr, false);
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (bodies_.size() < 10000 && !body.is_discarded()) bodies_.push_back(body);
      if (auth_.size() < 10000) auth_.push_back(rq.get_header_value("Authorization"));
    }
    if (!required_key.empty() && rq.get_header_value("Authorization") != "Bearer " + required_key)
      return error_body(rs, 401, "invalid API key");
    if (body.is_discarded() || !body.is_object()) return error_body(rs, 400, "body is not JSON");
    if (!garbage.empty()) return rs.set_content(garbage, "application/json");
    const std::string prompt = chat ? body["messages"].back().value("content", std::string()) : body.value("prompt", std::string());
    if (prompt.rfind("REJECT", 0) == 0) return error_body(rs, 400, "this prompt is rejected on purpose");
    const bool stream = body.value("stream", false);
    if (answer_delay_ms) std::this_thread::sleep_for(std::chrono::milliseconds(answer_delay_ms));

    const std::string fault = pick_fault(stream);
    if (!fault.empty()) ++injected;
    if (fault == "429" || fault == "503") {
      rs.set_header("Retry-After", faults.retry_after);
      return error_body(rs, fault == "429" ? 429 : 503, fault == "429" ? "rate limited" : "overloaded");
    }
    if (fault == "500") return error_body(rs, 500, "internal error");
    if (fault == "slow") std::this_thread::sleep_for(std::chrono::milliseconds(faults.slow_ms));

    const std::uint64_t seed = body.contains("seed") && body["seed"].is_number_unsigned() ? body["seed"].get<std::uint64_t>() : 0;
    const std::string text = fake_model_answer(prompt, seed);
    const bool tools = body.contains("tools");
    if (!stream) {
      nlohmann::json message = {{"role", "assistant"}, {"content", tools ? nlohmann::json(nullptr) : nlohmann::json(text)},
                                {"reasoning_content", "thinking about " + prompt}};
      if (tools)
        message["tool_calls"] = {{{"id", "call_1"}, {"type", "function"},
                                  {"function", {{"name", "say"}, {"arguments", nlohmann::json({{"word", text}}).dump()}}}}};
      nlohmann::json choice = chat ? nlohmann::json{{"index", 0}, {"message", message}, {"finish_reason", tools ? "tool_calls" : "stop"}}
                                   : nlohmann::json{{"index", 0}, {"text", text}, {"finish_reason", "stop"}};
      nlohmann::json j = {{"id", "x"}, {"object", chat ? "chat.completion" : "text_completion"}, {"model", model},
                          {"choices", {choice}},
                          {"usage", {{"prompt_tokens", prompt.size()}, {"completion_tokens", 3}, {"total_tokens", prompt.size() + 3}}}};
      const std::string full = j.dump();
      if (fault == "truncated") return rs.set_content(full.substr(0, full.size() / 2), "application/json");
      if (fault == "drop") {  // headers promise the whole body; the connection closes halfway
        rs.set_content_provider(full.size(), "application/json", [full](size_t offset, size_t, httplib::DataSink& sink) {
          if (offset == 0) sink.write(full.data(), full.size() / 2);
          return false;
        });
        return;
      }
      return rs.set_content(full, "application/json");
    }
    // SSE: a role chunk, the answer in three pieces (with reasoning first for chat), finish, usage, [DONE].
    std::vector<std::string> events;
    auto chunk = [&](const nlohmann::json& delta_or_text, const nlohmann::json& finish) {
      nlohmann::json c = chat ? nlohmann::json{{"index", 0}, {"delta", delta_or_text}, {"finish_reason", finish}}
                              : nlohmann::json{{"index", 0}, {"text", delta_or_text}, {"finish_reason", finish}};
      return "data: " + nlohmann::json({{"id", "x"}, {"object", "chunk"}, {"choices", {c}}}).dump() + "\n\n";
    };
    if (chat) {
      events.push_back(chunk({{"role", "assistant"}}, nullptr));
      events.push_back(chunk({{"reasoning_content", "thinking"}}, nullptr));
    }
    const std::size_t third = (text.size() + 2) / 3;
    for (std::size_t i = 0; i < text.size(); i += third) {
      const std::string piece = text.substr(i, third);
      events.push_back(chat ? chunk({{"content", piece}}, nullptr) : chunk(piece, nullptr));
    }
    events.push_back(chat ? chunk(nlohmann::json::object(), "stop") : chunk("", "stop"));
    events.push_back("data: " + nlohmann::json({{"id", "x"}, {"choices", nlohmann::json::array()},
                                                {"usage", {{"prompt_tokens", prompt.size()}, {"completion_tokens", 3}}}}).dump() +
                     "\r\n\r\n");
    events.push_back("data: [DONE]\n\n");
    if (fault == "broken_sse") {  // half the events, the last one cut mid-JSON, no finish_reason
      events.resize(std::max<std::size_t>(1, events.size() / 2 - 1));
      events.back() = events.back().substr(0, events.back().size() / 2);
    } else if (fault == "truncated" || fault == "drop") {  // the connection dies mid-stream
      events.resize(2);
    }
    const int delay = chunk_delay_ms;
    const bool cut = fault == "drop";
    rs.set_chunked_content_provider("text/event-stream", [events, delay, cut](size_t, httplib::DataSink& sink) {
      for (std::size_t i = 0; i < events.size(); ++i) {
        if (i && delay) std::this_thread::sleep_for(std::chrono::milliseconds(delay));
        if (!sink.write(events[i].data(), events[i].size())) return false;
      }
      if (cut) return false;
      sink.done();
      return true;
    });
  }

  LocalServer base_;
  std::mutex mu_;
  kvgate::Rng rng_;
  std::map<std::string, std::size_t> counts_;
  std::vector<nlohmann::json> bodies_;
  std::vector<std::string> auth_;
};

}  // namespace kvtest
