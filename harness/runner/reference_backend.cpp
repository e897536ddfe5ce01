// `kvgate run --backend reference`: the trials go through kvgate's own decoder in this process
// instead of over HTTP. A chat trial is rendered with the checkpoint's chat template (as an
// OpenAI-compatible server would), a completions trial encoded with its special tokens; the answer
// is decoded from the generated ids. One attempt per call, like every backend: bad input for the
// decoder is a non-retryable error of that trial.
#include <chrono>
#include <memory>

#include "harness/core/error.h"
#include "harness/core/version.h"
#include "harness/decoder/device.h"
#include "harness/decoder/engine.h"
#include "harness/decoder/model_text.h"
#include "harness/runner/backend_factory.h"

namespace kvgate::runner {

namespace {

using nlohmann::json;
using nlohmann::ordered_json;

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

class ReferenceBackend final : public Backend {
 public:
  explicit ReferenceBackend(const ReferenceBackendOptions& o)
      : o_(o),
        device_(decoder::resolve_device(o.device)),
        model_(decoder::Model::load(o.model_dir)),
        text_(decoder::ModelText::load(o.model_dir, model_->config())),
        engine_(decoder::make_engine(model_, {.device = device_,
                                              .kv = {.format = o.kv_format, .params = o.kv_params},
                                              .max_batch = o.max_batch,
                                              .threads = o.threads,
                                              .kernel_switches = o.kernel_switches})) {}

  Response complete(const Request& r) override {
    const auto t0 = std::chrono::steady_clock::now();
    Response resp;
    try {
      const std::vector<int> prompt = prompt_ids(*r.trial, r.sampling);
      const SamplingParams& s = r.sampling;
      const int limit = text_.max_model_len();
      if (static_cast<long long>(prompt.size()) + s.max_tokens > limit)
        throw Error("the prompt (" + std::to_string(prompt.size()) + " tokens) plus max_tokens " +
                    std::to_string(s.max_tokens) + " exceeds the model's max_position_embeddings " + std::to_string(limit) +
                    ": lower --max-tokens or use shorter trials");
      decoder::TextSampling ts{.sampler = {.temperature = s.temperature, .top_p = s.top_p, .top_k = s.top_k.value_or(0)},
                               .seed = s.seed.value_or(0),
                               .max_tokens = s.max_tokens,
                               .stop = s.stop};
      decoder::GenerateOptions g = text_.generate_options(ts);
      std::optional<double> first_ms;
      double last_ms = 0.0;
      g.on_token = [&](int) {
        if (o_.stream) {
          const double now = ms_since(t0);
          if (!first_ms) first_ms = now;
          else resp.inter_token_ms.push_back(now - last_ms);
          last_ms = now;
        }
        return !(o_.cancel && o_.cancel->load(std::memory_order_relaxed));
      };
      const decoder::Generation gen = engine_->generate(prompt, g);
      resp.latency_ms = ms_since(t0);
      if (gen.finish_reason == "cancelled") {
        resp.error = "cancelled by a stop signal";
        resp.error_kind = "cancelled";
        return resp;
      }
      resp.text = decoder::ModelText::text_of(gen);
      resp.finish_reason = gen.finish_reason;
      resp.prompt_tokens = gen.prompt_tokens;
      resp.completion_tokens = static_cast<std::int64_t>(gen.tokens.size());
      resp.ttft_ms = first_ms;
      resp.details["usage"] = {{"prompt_tokens", gen.prompt_tokens},
                               {"completion_tokens", gen.tokens.size()},
                               {"total_tokens", gen.prompt_tokens + static_cast<int>(gen.tokens.size())}};
    } catch (const std::exception& e) {  // kvgate::Error: bad input for the decoder; anything else: reported the same way
      resp = Response{};
      resp.latency_ms = ms_since(t0);
      resp.error = std::string("reference decoder: ") + e.what();
      resp.error_kind = "backend";
      resp.retryable = false;
    }
    return resp;
  }

  json describe() override {
    const json engine = engine_->describe();
    const decoder::ModelConfig& c = model_->config();
    json summary = {{"engine", "kvgate-reference"},
                    {"version", version()},
                    {"kv_cache_dtype", o_.kv_format},
                    {"max_model_len", c.max_position_embeddings},
                    {"device", device_}};
    json out = {{"backend", "reference"},
                {"model_dir", o_.model_dir},
                {"model", c.to_json()},
                {"parameters", model_->parameter_count()},
                {"device", decoder::device_record(o_.device, device_)},
                {"tokenizer", {{"path", text_.tokenizer().path()},
                               {"chat_template", text_.tokenizer().has_chat_template() ? "checkpoint" : "ChatML (built in)"},
                               {"stop_token_ids", text_.stop_token_ids()}}},
                {"engine", engine},
                {"stream", o_.stream}};
    out["engine"]["summary"] = summary;
    // run.json's "kv": the resolved format record plus the kernel switches it ran with.
    if (engine.contains("kv")) {
      out["kv"] = engine["kv"];
      out["kv"]["kernel_switches"] = engine.value("kernel_switches", json::object());
    }
    return out;
  }

 private:
  std::vector<int> prompt_ids(const Trial& t, const SamplingParams& s) const {
    ChatOptions chat;
    chat.add_generation_prompt = true;
    for (const auto& item : s.extra_body.items()) {
      if (item.key() != "chat_template_kwargs")
        throw Error("--extra-body \"" + item.key() +
                    "\": the reference decoder takes only \"chat_template_kwargs\" (other fields are server settings)");
      if (!item.value().is_object()) throw Error("--extra-body \"chat_template_kwargs\" must be an object");
      chat.variables = ordered_json::parse(item.value().dump());
    }
    if (auto it = t.input.find("response_format"); it != t.input.end() && !it->is_null() &&
                                                   !(it->is_object() && it->value("type", "") == "text"))
      throw Error("trial " + t.id + ": \"response_format\" " + it->dump() +
                  " asks for guided decoding, which the reference decoder does not do");
    if (t.is_chat()) {
      if (auto it = t.input.find("tools"); it != t.input.end() && !it->is_null()) chat.tools = ordered_json::parse(it->dump());
      const std::vector<int> ids = text_.encode_chat(ordered_json::parse(t.input["messages"].dump()), chat);
      if (ids.empty()) throw Error("trial " + t.id + ": the chat template rendered no tokens");
      return ids;
    }
    const json& p = t.input["prompt"];
    if (!p.is_string()) throw Error("trial " + t.id + ": \"prompt\" must be a string for the reference decoder");
    std::vector<int> ids = text_.encode_prompt(p.get_ref<const std::string&>());
    if (ids.empty()) throw Error("trial " + t.id + ": the prompt encodes to no tokens");
    return ids;
  }

  ReferenceBackendOptions o_;
  std::string device_;
  std::shared_ptr<const decoder::Model> model_;
  decoder::ModelText text_;
  std::unique_ptr<decoder::Engine> engine_;
};

}  // namespace

std::unique_ptr<Backend> make_reference_backend(const ReferenceBackendOptions& options) {
  if (options.model_dir.empty()) throw Error("--backend reference: --model-dir missing: pass a Hugging Face checkpoint directory");
  if (options.kv_format.empty()) throw Error("--backend reference: --kv-format missing (bf16, fp8_e4m3, ...)");
  return std::make_unique<ReferenceBackend>(options);
}

}  // namespace kvgate::runner
