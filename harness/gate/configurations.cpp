#include "harness/gate/configurations.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <map>
#include <set>

#include "harness/core/error.h"
#include "harness/core/log.h"
#include "harness/decoder/device.h"
#include "harness/decoder/kernel_switches.h"
#include "harness/decoder/kv_flags.h"
#include "harness/decoder/model_config.h"
#include "harness/runner/engine_metadata.h"
#include "harness/runner/http_backend.h"
#include "harness/runner/run_session.h"
#include "kernels/kv_format.h"

namespace kvgate::gate {

namespace fs = std::filesystem;

namespace {

void check_label(const std::string& label, const std::string& flag) {
  const bool ok = !label.empty() && label.size() <= 64 && label != "." && label != ".." &&
                  std::all_of(label.begin(), label.end(), [](char c) {
                    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.' ||
                           c == '+' || c == '(' || c == ')' || c == ',';
                  });
  // '+', '(', ')' and ',' spell a KV configuration's settings (fp8_e4m3+skip(0,27)): every filesystem takes
  // them; a shell wants such a path quoted (docs/suites.md).
  if (!ok)
    throw Error(flag + " \"" + label + "\": a label names a directory under DIR/runs/: use 1-64 letters, digits, '-', '_', '.', "
                "'+', '(', ')' or ','");
}

// "URL[,URL...]": replicas of one engine; the run spreads its requests over them.
std::vector<std::string> replicas(const std::string& urls, const std::string& flag) {
  std::vector<std::string> out;
  std::size_t from = 0;
  while (true) {
    const std::size_t comma = urls.find(',', from);
    const std::string u = urls.substr(from, comma == std::string::npos ? std::string::npos : comma - from);
    if (u.empty()) throw Error(flag + " " + urls + ": an empty URL: give URL or URL,URL,... (replicas of one engine)");
    out.push_back(u);
    if (comma == std::string::npos) return out;
    from = comma + 1;
  }
}

Configuration endpoint(const Targets& t, const std::string& url, const std::string& flag, std::string label, std::string log,
                       const KvSettings* kv) {
  Configuration c{.label = std::move(label), .engine_log = std::move(log)};
  if (kv) {
    c.kv = *kv;
    c.kv_format = kv->format;
  }
  c.backend.kind = "openai";
  c.backend.http = runner::HttpBackendOptions{
      .endpoints = replicas(url, flag),
      .model = t.model,
      .api = runner::parse_api(t.api),
      .stream = t.stream,
      .api_key = runner::read_api_key(t.api_key_env, !t.api_key_env.empty()),
      .api_key_env = t.api_key_env.empty() ? "OPENAI_API_KEY" : t.api_key_env,
      .insecure = t.insecure,
      .ca_bundle = t.ca_bundle,
      .timeout_s = t.timeout_s,
  };
  return c;
}

Configuration reference(const Targets& t, const std::string& model_dir, const KvSettings& kv, std::string label) {
  Configuration c{.label = std::move(label), .kv_format = kv.format, .kv = kv};
  c.backend.kind = "reference";
  c.backend.reference = runner::ReferenceBackendOptions{.model_dir = model_dir,
                                                        .kv_format = kv.format,
                                                        .device = decoder::resolve_device(t.device),
                                                        .kv_params = kv.kv_params(),
                                                        .kernel_switches = decoder::with_numerics(kv.kernel_switches, t.numerics),
                                                        .threads = t.threads,
                                                        .max_batch = t.max_batch,
                                                        .stream = t.stream};
  return c;
}

}  // namespace

std::string find_demo_model() {
  std::vector<fs::path> roots = {fs::current_path()};
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) roots.push_back(exe.parent_path().parent_path());
#ifdef KVGATE_SOURCE_DIR
  roots.emplace_back(KVGATE_SOURCE_DIR);
#endif
  for (const fs::path& r : roots)
    if (fs::is_regular_file(r / "models/demo/config.json", ec)) return (r / "models/demo").lexically_normal().string();
  return "";
}

std::vector<Configuration> make_configurations(const Targets& t) {
  const bool named_nothing = t.baseline_url.empty() && t.candidate_urls.empty() && t.model_dir.empty() && t.candidate_kv.empty();
  std::vector<KvSettings> candidate_kv = parse_kv_settings(t.candidate_kv, "--candidate-kv");
  if (named_nothing && t.baseline_kv.empty()) candidate_kv = parse_kv_settings({"fp8_e4m3,int4_per_token_head"}, "--candidate-kv");  // the main job
  std::vector<KvSettings> baseline_kv = parse_kv_settings(t.baseline_kv.empty() ? std::vector<std::string>{} : std::vector{t.baseline_kv}, "--baseline-kv");
  if (baseline_kv.size() > 1) throw Error("--baseline-kv " + t.baseline_kv + ": one baseline, one format: give the others to --candidate-kv");
  // With candidate endpoints, --candidate-kv declares their formats (one per URL): the reference
  // decoder's candidates and endpoints' are never mixed, so a format never has two meanings.
  std::vector<KvSettings> endpoint_kv;
  if (!t.candidate_urls.empty() && !candidate_kv.empty()) {
    if (candidate_kv.size() != t.candidate_urls.size())
      throw Error("--candidate-kv names " + std::to_string(candidate_kv.size()) + " formats for " + std::to_string(t.candidate_urls.size()) +
                  " --candidate endpoints: with endpoints it declares each server's KV format, one per --candidate URL in order");
    for (const KvSettings& k : candidate_kv) check_endpoint_kv(k, "--candidate-kv");
    endpoint_kv = std::move(candidate_kv);
    candidate_kv.clear();
  }
  if (!t.baseline_url.empty())
    for (const KvSettings& k : baseline_kv) check_endpoint_kv(k, "--baseline-kv");
  if (t.candidate_urls.empty() && candidate_kv.empty())
    throw Error("gate: no candidate: pass --candidate URL (an endpoint) or --candidate-kv F[,F...] (the reference decoder)");

  const bool any_endpoint = !t.baseline_url.empty() || !t.candidate_urls.empty();
  if (any_endpoint && t.model.empty())
    throw Error("gate: --model missing: pass the model name the servers serve (GET BASE_URL/models lists them)");
  const bool any_reference = t.baseline_url.empty() || !candidate_kv.empty();
  std::string model_dir = t.model_dir;
  if (any_reference && model_dir.empty()) {
    model_dir = find_demo_model();
    if (model_dir.empty())
      throw Error("gate: no --model-dir given and the demo model (models/demo/ of the kvgate checkout) is not there: pass "
                  "--model-dir DIR (a Hugging Face checkpoint), or endpoints with --baseline URL --candidate URL --model M");
    log_info("gate: the reference decoder runs the demo model " + model_dir);
  }
  if (!model_dir.empty()) model_dir = fs::absolute(model_dir).lexically_normal().string();
  if (!any_reference && !t.device.empty()) throw Error("--device belongs to the reference decoder (--model-dir, --candidate-kv): drop it");
  if (!any_reference && !t.numerics.empty())
    throw Error("--numerics belongs to the reference decoder (--model-dir, --candidate-kv); a server computes as its engine does: drop it");

  const std::size_t n_candidates = t.candidate_urls.size() + candidate_kv.size();
  if (t.candidate_labels.size() > n_candidates)
    throw Error("--candidate-label given " + std::to_string(t.candidate_labels.size()) + " times for " + std::to_string(n_candidates) +
                " candidates (endpoints first, then KV formats)");
  if (t.candidate_engine_logs.size() > t.candidate_urls.size())
    throw Error("--candidate-engine-log given " + std::to_string(t.candidate_engine_logs.size()) + " times for " +
                std::to_string(t.candidate_urls.size()) + " candidate endpoints (one log per --candidate URL, in order)");
  if (!t.baseline_engine_log.empty() && t.baseline_url.empty())
    throw Error("--baseline-engine-log belongs to a --baseline URL (an engine's startup log): drop it for the reference decoder");

  std::vector<Configuration> out;
  if (!t.baseline_url.empty()) {
    const KvSettings* declared = baseline_kv.empty() ? nullptr : &baseline_kv[0];
    std::string label = !t.baseline_label.empty() ? t.baseline_label : declared && !declared->label.empty() ? declared->label : "baseline";
    out.push_back(endpoint(t, t.baseline_url, "--baseline", std::move(label), t.baseline_engine_log, declared));
  } else {
    const KvSettings b = baseline_kv.empty() ? KvSettings{.format = "bf16"} : baseline_kv[0];
    out.push_back(reference(t, model_dir, b, t.baseline_label.empty() ? b.name() : t.baseline_label));
  }
  std::size_t k = 0;
  for (std::size_t i = 0; i < t.candidate_urls.size(); ++i, ++k) {
    const KvSettings* declared = i < endpoint_kv.size() ? &endpoint_kv[i] : nullptr;
    std::string label = k < t.candidate_labels.size()           ? t.candidate_labels[k]
                        : declared && !declared->label.empty() ? declared->label
                        : t.candidate_urls.size() == 1          ? "candidate"
                                                                : "candidate-" + std::to_string(i + 1);
    out.push_back(endpoint(t, t.candidate_urls[i], "--candidate", std::move(label),
                           i < t.candidate_engine_logs.size() ? t.candidate_engine_logs[i] : "", declared));
  }
  for (const KvSettings& f : candidate_kv) {
    out.push_back(reference(t, model_dir, f, k < t.candidate_labels.size() ? t.candidate_labels[k] : f.name()));
    ++k;
  }
  std::set<std::string> seen;
  for (const Configuration& c : out) {
    check_label(c.label, c.backend.kind == "openai" ? "--candidate-label" : "--candidate-kv");
    if (!seen.insert(c.label).second)
      throw Error("gate: two configurations are labelled \"" + c.label +
                  "\": give each its own with --baseline-label / --candidate-label or label=NAME (or drop the repeated KV format)");
  }
  return out;
}

void check_kv_settings(const std::vector<Configuration>& configs) {
  for (const Configuration& c : configs) {
    if (c.backend.kind != "reference") continue;
    const decoder::ModelConfig m = decoder::load_model_config(c.backend.reference.model_dir);
    const kernels::KvShape shape{.layers = m.num_layers, .kv_heads = m.num_kv_heads, .head_dim = m.head_dim};
    try {
      kernels::resolve_kv_format({.format = c.backend.reference.kv_format, .params = c.backend.reference.kv_params}, shape);
      decoder::resolve_kernel_switches(c.backend.reference.kernel_switches);
    } catch (const Error& e) {
      throw Error(c.label + " (" + c.backend.reference.model_dir + ", " + std::to_string(m.num_layers) + " layers): " + e.what());
    }
  }
}

std::string kvgate_format_of(const std::string& engine_kv_dtype) {
  std::string d;
  for (char ch : engine_kv_dtype) d += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  static const std::map<std::string, std::string> aliases = {
      {"auto", "bf16"},          {"bfloat16", "bf16"},      {"bf16", "bf16"},         {"float16", "fp16"},   {"f16", "fp16"},
      {"fp16", "fp16"},          {"half", "fp16"},          {"float32", "fp32"},      {"f32", "fp32"},       {"fp32", "fp32"},
      {"fp8", "fp8_e4m3"},       {"fp8_e4m3", "fp8_e4m3"},  {"float8_e4m3fn", "fp8_e4m3"}, {"fp8_e5m2", "fp8_e5m2"},
      {"float8_e5m2", "fp8_e5m2"}, {"nvfp4", "nvfp4"},      {"fp4_e2m1", "nvfp4"},    {"q8_0", "q8_0"},      {"q4_0", "q4_0"}};
  if (const auto it = aliases.find(d); it != aliases.end()) return it->second;
  const auto& names = kernels::kv_format_names();
  return std::find(names.begin(), names.end(), d) != names.end() ? d : "";
}

void check_declared_kv(const Configuration& c, const std::string& reported, const std::string& source) {
  if (c.backend.kind != "openai" || c.kv_format.empty() || reported.empty()) return;
  const std::string mapped = kvgate_format_of(reported);
  if (mapped.empty()) {
    log_info(c.label + ": the engine reports KV dtype \"" + reported + "\" (" + source + "), which kvgate cannot map; --kv says " +
             c.kv_format + " (recorded, not checked)");
    return;
  }
  // "auto" is the model's dtype: bf16 or fp16, whichever the checkpoint has.
  const bool same = mapped == c.kv_format || (reported == "auto" && (c.kv_format == "bf16" || c.kv_format == "fp16"));
  if (!same)
    throw Error(c.label + ": declared KV format " + c.kv_format + " but the engine reports " + reported + " (" + source +
                "): fix --baseline-kv / --candidate-kv, or restart the server with the format you mean to test");
}

std::int64_t discover_max_context(const std::vector<Configuration>& configs, std::string* source, nlohmann::json* engine) {
  std::int64_t best = 0;
  std::set<std::string> dirs;
  const auto take = [&](std::int64_t v, const std::string& from, const nlohmann::json& summary = nlohmann::json()) {
    if (v <= 0 || (best != 0 && v >= best)) return;
    best = v;
    if (source) *source = from;
    if (engine) *engine = summary;
  };
  for (const Configuration& c : configs) {
    if (c.backend.kind == "reference") {
      if (!dirs.insert(c.backend.reference.model_dir).second) continue;
      const decoder::ModelConfig m = decoder::load_model_config(c.backend.reference.model_dir);
      take(m.max_position_embeddings, c.backend.reference.model_dir + "/config.json max_position_embeddings");
    } else {
      runner::HttpBackendOptions o = c.backend.http;
      runner::HttpBackend backend(o);
      const nlohmann::json d = backend.describe();
      const nlohmann::json* s = d.contains("engine") && d["engine"].contains("summary") ? &d["engine"]["summary"] : nullptr;
      if (s && s->contains("max_model_len") && (*s)["max_model_len"].is_number_integer())
        take((*s)["max_model_len"].get<std::int64_t>(), c.label + " at " + o.endpoints.front() + ": " + runner::context_limit_text(*s), *s);
    }
  }
  return best;
}

}  // namespace kvgate::gate
