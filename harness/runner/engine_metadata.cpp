#include "harness/runner/engine_metadata.h"

#include <thread>

#include "harness/core/log.h"
#include "harness/runner/openai_protocol.h"
#include "harness/runner/url.h"

namespace kvgate::runner {

using nlohmann::json;

namespace {

constexpr std::size_t kMaxKeptBytes = 256 * 1024;  // one endpoint's answer kept in run.json

// A JSON answer small and shallow enough to keep; null otherwise.
json json_answer(const ProbeAnswer& a) {
  if (!a.error.empty() || a.status != 200 || a.body.size() > kMaxKeptBytes) return nullptr;
  json j = json::parse(a.body, nullptr, false);
  if (j.is_discarded() || !within_depth(j, 32)) return nullptr;
  return j;
}

json probe_one(const EndpointProbe& e, const ProbeGet& get) {
  json r = {{"url", e.redacted}};
  const ProbeAnswer models = get(join_path(e.base, "/models"));
  if (!models.error.empty()) {
    r["reachable"] = false;
    r["error"] = models.error;
    return r;  // the server is down or unreachable: the other probes would only wait
  }
  r["reachable"] = true;
  if (json m = json_answer(models); !m.is_null()) r["models"] = m;
  const std::string root = server_root(e.base);
  if (json v = json_answer(get(root + "/version")); !v.is_null()) r["version"] = v;
  json info = json_answer(get(root + "/server_info"));
  if (info.is_null() || !info.is_object()) info = json_answer(get(root + "/get_server_info"));
  if (info.is_object()) r["server_info"] = info;
  if (json p = json_answer(get(root + "/props")); p.is_object()) {
    if (p.contains("chat_template") && p["chat_template"].is_string() && p["chat_template"].get_ref<const std::string&>().size() > 4096)
      p["chat_template"] = "(" + std::to_string(p["chat_template"].get_ref<const std::string&>().size()) + " characters)";
    r["props"] = p;
  }
  const ProbeAnswer metrics = get(root + "/metrics");
  if (metrics.error.empty() && metrics.status == 200) {
    json labels = prometheus_labels(metrics.body, "vllm:cache_config_info");
    if (!labels.empty()) r["cache_config"] = labels;
  }
  return r;
}

const json* at(const json& j, std::initializer_list<const char*> path) {
  const json* cur = &j;
  for (const char* k : path) {
    if (!cur->is_object()) return nullptr;
    auto it = cur->find(k);
    if (it == cur->end()) return nullptr;
    cur = &*it;
  }
  return cur;
}

// The facts a report needs, in one place, from whichever endpoint reported them.
json summarize(const json& r, const std::string& model) {
  json s = json::object();
  const auto limit = [&](const json* v, const std::string& source) {
    if (!v || !v->is_number_integer() || v->get<std::int64_t>() <= 0 || s.contains("max_model_len")) return;
    s["max_model_len"] = *v;
    s["max_model_len_source"] = source;
  };
  // llama-server gives each slot n_ctx / n_parallel tokens: its /props says so first.
  if (const json* p = at(r, {"props"})) {
    limit(at(*p, {"default_generation_settings", "n_ctx"}), "/props default_generation_settings.n_ctx");
    if (const json* n = at(*p, {"total_slots"}); n && n->is_number_integer()) s["slots"] = *n;
  }
  if (const json* d = at(r, {"models", "data"}); d && d->is_array()) {
    json ids = json::array();
    for (const json& m : *d) {
      const json* id = at(m, {"id"});
      if (!id || !id->is_string()) continue;
      ids.push_back(*id);
      const bool ours = id->get_ref<const std::string&>() == model || d->size() == 1;
      if (id->get_ref<const std::string&>() == model) limit(at(m, {"max_model_len"}), "/v1/models max_model_len");
      if (ours) {  // llama-server: one model, whatever its id, with meta.n_ctx per slot
        limit(at(m, {"meta", "n_ctx"}), "/v1/models meta.n_ctx");
        if (const json* t = at(m, {"meta", "n_ctx_train"}); t && t->is_number_integer()) s["n_ctx_train"] = *t;
      }
    }
    s["served_models"] = ids;
  }
  if (r.contains("cache_config")) {
    s["engine"] = "vllm";
    if (const json* d = at(r, {"cache_config", "cache_dtype"})) s["kv_cache_dtype"] = *d;
  }
  if (const json* si = at(r, {"server_info"})) {
    const json* name = at(*si, {"engine"});  // kvgate serve names itself; SGLang does not
    s["engine"] = name && name->is_string() ? *name : json("sglang");
    // SGLang's HTTP answer spreads its server args at the top; its gRPC twin nests them in server_args.
    const json* d = at(*si, {"kv_cache_dtype"});
    if (!d) d = at(*si, {"server_args", "kv_cache_dtype"});
    if (d) s["kv_cache_dtype"] = *d;
    if (const json* v = at(*si, {"version"})) s["version"] = *v;
    limit(at(*si, {"context_length"}), "/server_info context_length");
    limit(at(*si, {"server_args", "context_length"}), "/server_info server_args.context_length");
  }
  if (const json* p = at(r, {"props"})) {
    s["engine"] = "llama.cpp";
    if (const json* b = at(*p, {"build_info"})) s["version"] = *b;
    if (const json* f = at(*p, {"model_path"}); f && f->is_string()) s["model_loaded"] = *f;
  }
  if (const json* v = at(r, {"version", "version"}); v && !s.contains("version")) s["version"] = *v;
  return s;
}

}  // namespace

json prometheus_labels(const std::string& text, const std::string& metric) {
  json labels = json::object();
  const std::string open = metric + "{";
  std::size_t pos = text.find(open);
  while (pos != std::string::npos && pos > 0 && text[pos - 1] != '\n') pos = text.find(open, pos + 1);
  if (pos == std::string::npos) return labels;
  std::size_t i = pos + open.size();
  while (i < text.size() && text[i] != '}' && text[i] != '\n') {
    const std::size_t eq = text.find('=', i);
    if (eq == std::string::npos || eq + 1 >= text.size() || text[eq + 1] != '"') break;
    std::string name = text.substr(i, eq - i);
    std::string value;
    std::size_t j = eq + 2;
    for (; j < text.size() && text[j] != '"' && text[j] != '\n'; ++j) {
      if (text[j] == '\\' && j + 1 < text.size()) ++j;
      value += text[j];
    }
    if (j >= text.size() || text[j] != '"') break;
    while (!name.empty() && (name.front() == ' ' || name.front() == ',')) name.erase(0, 1);
    labels[name] = value;
    i = j + 1;
    if (i < text.size() && text[i] == ',') ++i;
  }
  return labels;
}

std::string context_limit_text(const json& summary) {
  if (!summary.is_object() || !summary.contains("max_model_len") || !summary["max_model_len"].is_number_integer()) return "";
  const std::int64_t n = summary["max_model_len"].get<std::int64_t>();
  const std::string source = summary.value("max_model_len_source", std::string("the server"));
  const std::int64_t slots = summary.contains("slots") && summary["slots"].is_number_integer() ? summary["slots"].get<std::int64_t>() : 0;
  if (summary.value("engine", std::string()) != "llama.cpp")
    return std::to_string(n) + " tokens (" + source + ")";
  if (slots <= 1) return std::to_string(n) + " tokens per slot (llama.cpp " + source + ", 1 slot: llama-server -c " + std::to_string(n) + ")";
  return std::to_string(n) + " tokens per slot (llama.cpp " + source + ", total_slots " + std::to_string(slots) + ": llama-server -c " +
         std::to_string(n * slots) + " -np " + std::to_string(slots) + " gives each slot -c / -np)";
}

std::string context_advice(const json& summary, std::int64_t wanted) {
  if (!summary.is_object() || wanted <= 0) return "";
  wanted = (wanted + 1023) / 1024 * 1024;  // a round size to type; llama.cpp pads a slot to 256 anyway
  const std::string engine = summary.value("engine", std::string());
  const std::string n = std::to_string(wanted);
  if (engine == "llama.cpp") {
    const std::int64_t slots = summary.contains("slots") && summary["slots"].is_number_integer() ? summary["slots"].get<std::int64_t>() : 1;
    if (slots <= 1) return "start llama-server with -c " + n;
    return "start llama-server with -c " + std::to_string(wanted * slots) + " -np " + std::to_string(slots) +
           ", or with fewer slots (-c " + n + " -np 1)";
  }
  if (engine == "vllm") return "start vLLM with --max-model-len " + n;
  if (engine == "sglang") return "start SGLang with --context-length " + n;
  return "";
}

json probe_engines(const std::vector<EndpointProbe>& endpoints, const std::string& model, const ProbeGet& get) {
  std::vector<json> answers(endpoints.size());
  std::vector<std::thread> threads;
  for (std::size_t i = 0; i < endpoints.size(); ++i)
    threads.emplace_back([&, i] { answers[i] = probe_one(endpoints[i], get); });
  for (auto& t : threads) t.join();

  json out = {{"endpoints", json::array()}};
  json first_summary;
  for (std::size_t i = 0; i < answers.size(); ++i) {
    json s = summarize(answers[i], model);
    answers[i]["summary"] = s;
    out["endpoints"].push_back(answers[i]);
    if (!answers[i].value("reachable", false)) {
      log_warn(endpoints[i].redacted + ": not reachable now (" + answers[i].value("error", std::string("?")) +
               "); its requests will be retried");
      continue;
    }
    if (const json* ids = at(s, {"served_models"}); ids && !ids->empty()) {
      bool found = false;
      for (const json& id : *ids) found = found || id == model;
      // llama-server serves the one model it loaded under its file name (or --alias) and answers any name.
      const bool any_name = s.value("engine", std::string()) == "llama.cpp" && ids->size() == 1;
      if (!found && any_name)
        log_info(endpoints[i].redacted + " (llama-server) serves " + (*ids)[0].dump() + " and answers requests for any model name; "
                 "run.json records --model " + model);
      else if (!found)
        log_warn(endpoints[i].redacted + " does not list --model " + model + " among its models (" + ids->dump() +
                 "); requests may fail with HTTP 404");
    }
    if (first_summary.is_null()) {
      first_summary = s;
    } else {
      for (const char* k : {"engine", "version", "kv_cache_dtype", "max_model_len"})
        if (s.contains(k) && first_summary.contains(k) && s[k] != first_summary[k])
          log_warn("replicas disagree on " + std::string(k) + ": " + first_summary[k].dump() + " vs " + s[k].dump() + " at " +
                   endpoints[i].redacted + ": results would mix two configurations");
    }
  }
  out["summary"] = first_summary.is_null() ? json::object() : first_summary;
  return out;
}

}  // namespace kvgate::runner
