// harness/runner/engine_metadata: what the endpoint probe reads from llama-server (/props,
// /v1/models meta) and vLLM (/v1/models), on answers in tests/data/engine-responses/: the context
// limit, where it came from, llama.cpp's slots; the advice to raise it; no model-name warning for
// llama-server, which serves its one model under any name.
#include <iostream>
#include <map>
#include <sstream>
#include <string>

#include "tests/catch_compat.hpp"
#include "harness/runner/engine_metadata.h"
#include "tests/test_util.h"

using namespace kvgate;
using nlohmann::json;

namespace {

const std::string kDir = "tests/data/engine-responses/";

// A server that answers GET paths from files; everything else is a 404.
runner::ProbeGet server(const std::map<std::string, std::string>& files) {
  return [files](const std::string& url) {
    for (const auto& [path, file] : files)
      if (url.size() >= path.size() && url.compare(url.size() - path.size(), path.size(), path) == 0)
        return runner::ProbeAnswer{.status = 200, .body = kvtest::read_text(kDir + file), .error = ""};
    return runner::ProbeAnswer{.status = 404, .body = "{\"error\":\"not found\"}", .error = ""};
  };
}

// stderr while `f` runs (log_info / log_warn write there).
template <class F>
std::string stderr_of(F f) {
  std::ostringstream captured;
  std::streambuf* old = std::cerr.rdbuf(captured.rdbuf());
  f();
  std::cerr.rdbuf(old);
  return captured.str();
}

bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

const std::vector<runner::EndpointProbe> kOne = {{.base = "http://127.0.0.1:8081/v1", .redacted = "http://127.0.0.1:8081/v1"}};

}  // namespace

TEST_CASE("llama-server: the per-slot context from /props, its slots, the build; the limit says where it came from") {
  json probe;
  const std::string err = stderr_of([&] {
    probe = runner::probe_engines(kOne, "demo", server({{"/props", "llamacpp-props-np4.json"}, {"/models", "llamacpp-v1-models-np4.json"}}));
  });
  const json& s = probe["summary"];
  CHECK(s["engine"] == "llama.cpp");
  CHECK(s["version"] == "b7100-a1b2c3d4e");
  CHECK(s["max_model_len"] == 4096);
  CHECK(s["max_model_len_source"] == "/props default_generation_settings.n_ctx");
  CHECK(s["slots"] == 4);
  CHECK(s["n_ctx_train"] == 16384);
  CHECK(s["model_loaded"] == "/tmp/kvgate-llama/demo.gguf");
  CHECK(runner::context_limit_text(s) ==
        "4096 tokens per slot (llama.cpp /props default_generation_settings.n_ctx, total_slots 4: llama-server -c 16384 -np 4 "
        "gives each slot -c / -np)");
  CHECK(runner::context_advice(s, 16384 + 64) == "start llama-server with -c 69632 -np 4, or with fewer slots (-c 17408 -np 1)");
  // --model "demo" is not the served id "demo.gguf", and llama-server answers it anyway: no warning.
  CHECK_FALSE(has(err, "warning"));
  CHECK(has(err, "answers requests for any model name"));
}

TEST_CASE("llama-server without /props (--no-endpoint-props): /v1/models meta.n_ctx, named so") {
  const json probe = runner::probe_engines(kOne, "demo.gguf", server({{"/models", "llamacpp-v1-models-np4.json"}}));
  const json& s = probe["summary"];
  CHECK(s["max_model_len"] == 4096);
  CHECK(s["max_model_len_source"] == "/v1/models meta.n_ctx");
  CHECK_FALSE(s.contains("engine"));  // nothing says llama.cpp: the limit is then not called per slot
  CHECK(runner::context_limit_text(s) == "4096 tokens (/v1/models meta.n_ctx)");
}

TEST_CASE("vLLM's /v1/models (a real answer): max_model_len and its source; an unknown model still warns") {
  json probe;
  const std::string err = stderr_of([&] {
    probe = runner::probe_engines(kOne, "meta-llama/Meta-Llama-3.1-8B-Instruct", server({{"/models", "vllm-v1-models-modal-2024.json"}}));
  });
  CHECK(probe["summary"]["max_model_len"] == 8096);
  CHECK(probe["summary"]["max_model_len_source"] == "/v1/models max_model_len");
  CHECK(runner::context_limit_text(probe["summary"]) == "8096 tokens (/v1/models max_model_len)");
  CHECK_FALSE(has(err, "warning"));
  const std::string wrong = stderr_of([&] {
    runner::probe_engines(kOne, "Qwen/Qwen3-8B", server({{"/models", "vllm-v1-models-modal-2024.json"}}));
  });
  CHECK(has(wrong, "does not list --model Qwen/Qwen3-8B"));
  json vllm = {{"engine", "vllm"}, {"max_model_len", 8096}};
  CHECK(runner::context_advice(vllm, 16000) == "start vLLM with --max-model-len 16384");
  CHECK(runner::context_advice(json{{"engine", "sglang"}}, 1024) == "start SGLang with --context-length 1024");
  CHECK(runner::context_advice(json::object(), 1024).empty());
}

TEST_CASE("SGLang: /server_info's context_length is null unless set, so /v1/models max_model_len gives the limit") {
  const runner::ProbeGet sglang = [](const std::string& url) {
    if (url.ends_with("/v1/models"))
      return runner::ProbeAnswer{.status = 200, .body = R"({"object":"list","data":[{"id":"m","object":"model","max_model_len":32768}]})", .error = ""};
    if (url.ends_with("/server_info"))
      return runner::ProbeAnswer{.status = 200, .body = R"({"context_length":null,"kv_cache_dtype":"fp8_e4m3","version":"0.5.2"})", .error = ""};
    return runner::ProbeAnswer{.status = 404, .body = "", .error = ""};
  };
  const json s = runner::probe_engines(kOne, "m", sglang)["summary"];
  CHECK(s["engine"] == "sglang");
  CHECK(s["kv_cache_dtype"] == "fp8_e4m3");
  CHECK(s["max_model_len"] == 32768);
  CHECK(s["max_model_len_source"] == "/v1/models max_model_len");
  CHECK(runner::context_advice(s, 40000) == "start SGLang with --context-length 40960");
}
