#include "harness/compare/gains.h"

#include <cmath>
#include <filesystem>

#include "harness/capacity/capacity.h"
#include "harness/core/error.h"
#include "harness/stats/geometric_mean_ratio.h"

namespace kvgate::compare {

using nlohmann::json;

namespace {

struct Metric {
  const char* name;
  const char* label;
  bool lower_is_better;
  std::optional<double> (*get)(const ResultRecord&);
};

std::optional<double> positive(double v) { return std::isfinite(v) && v > 0 ? std::optional<double>(v) : std::nullopt; }

std::optional<double> ttft(const ResultRecord& r) { return r.ttft_ms ? positive(*r.ttft_ms) : std::nullopt; }
std::optional<double> e2e(const ResultRecord& r) { return r.latency_ms ? positive(*r.latency_ms) : std::nullopt; }
std::optional<double> itl(const ResultRecord& r) {
  if (const auto it = r.extra.find("itl_ms"); it != r.extra.end() && it->is_object())
    if (const auto m = it->find("mean"); m != it->end() && m->is_number()) return positive(m->get<double>());
  if (const auto it = r.extra.find("inter_token_ms"); it != r.extra.end() && it->is_array() && !it->empty()) {
    double sum = 0;
    for (const json& g : *it)
      if (g.is_number()) sum += g.get<double>();
    return positive(sum / static_cast<double>(it->size()));
  }
  return std::nullopt;
}
std::optional<double> tokens_per_s(const ResultRecord& r) {
  if (!r.completion_tokens || *r.completion_tokens <= 0 || !r.latency_ms || *r.latency_ms <= 0) return std::nullopt;
  return positive(static_cast<double>(*r.completion_tokens) / (*r.latency_ms / 1000.0));
}

const Metric kMetrics[] = {
    {"ttft_ms", "TTFT", true, ttft},
    {"itl_ms", "ITL", true, itl},
    {"e2e_ms", "E2E latency", true, e2e},
    {"output_tokens_per_s", "output tokens/s", false, tokens_per_s},
};

const json* at(const json& j, std::initializer_list<const char*> path) {
  const json* cur = &j;
  for (const char* k : path) {
    if (!cur->is_object()) return nullptr;
    const auto it = cur->find(k);
    if (it == cur->end()) return nullptr;
    cur = &*it;
  }
  return cur;
}

// The KV format kvgate's planner knows for what the run declares or the engine reports.
std::string planner_format(const RunManifest& m) {
  std::string f;
  for (const json* v : {at(m.kv, {"format"}), at(m.engine, {"log", "facts", "kv_cache_dtype"}), at(m.engine, {"summary", "kv_cache_dtype"})})
    if (v && v->is_string() && !v->get_ref<const std::string&>().empty()) {
      f = v->get<std::string>();
      break;
    }
  if (f == "auto" || f == "bfloat16") return "bf16";
  if (f == "fp8") return "fp8_e4m3";  // vLLM's and TensorRT-LLM's fp8 is E4M3
  return f;
}

std::optional<KvCapacity> capacity_from_log(const RunManifest& m) {
  const json* t = at(m.engine, {"log", "facts", "kv_cache_tokens"});
  if (!t || !t->is_number_integer()) return std::nullopt;
  std::string detail = "engine log";
  if (const json* p = at(m.engine, {"log", "path"}); p && p->is_string()) detail += " " + p->get<std::string>();
  if (const json* l = at(m.engine, {"log", "evidence", "kv_cache_tokens", "line"}); l && l->is_number_integer())
    detail += " line " + std::to_string(l->get<long long>());
  return KvCapacity{.tokens = t->get<long long>(), .source = "engine_log", .detail = detail};
}

std::optional<KvCapacity> capacity_estimate(const RunManifest& m, const CompareOptions& o, std::string& why) {
  std::string config = o.model_config;
  if (config.empty() && m.backend == "reference" && !m.model.empty() &&
      std::filesystem::exists(std::filesystem::path(m.model) / "config.json"))
    config = (std::filesystem::path(m.model) / "config.json").string();
  if (config.empty()) {
    why = "no engine log with the KV cache size (kvgate run --engine-log) and no --model-config for an estimate";
    return std::nullopt;
  }
  const std::string format = planner_format(m);
  if (format.empty()) {
    why = "the run records no KV format (kvgate run --kv-format) to estimate its capacity";
    return std::nullopt;
  }
  try {
    const capacity::ModelDims dims = capacity::read_model_dims(config);
    const capacity::CapacityOptions co;  // an H200 at vLLM's default memory utilization
    const capacity::CapacityRow row = capacity::plan_capacity(dims, {format, json::object()}, co);
    char detail[256];
    std::snprintf(detail, sizeof detail, "kvgate capacity: %s, %s, %.0f GB x %.2f - weights %.1f GB - overhead %.1f GB",
                  config.c_str(), format.c_str(), co.gpu_mem_gb, co.mem_util, row.weights_bytes / 1e9, co.overhead_gb);
    return KvCapacity{.tokens = row.tokens, .source = "estimate", .detail = detail};
  } catch (const Error& e) {
    why = std::string("no capacity estimate: ") + e.what();
    return std::nullopt;
  }
}

std::optional<double> ratio_of(double c, double r) { return r > 0 && c >= 0 ? std::optional<double>(c / r) : std::nullopt; }

}  // namespace

const char* metric_label(const std::string& metric) {
  for (const Metric& m : kMetrics)
    if (metric == m.name) return m.label;
  return "?";
}

RunPerformance run_performance(const RunDir& run, const CompareOptions& o) {
  RunPerformance p;
  std::vector<double> values[4], gaps;
  for (const ResultRecord& r : run.results.records) {
    if (r.error) continue;
    if (r.latency_ms) ++p.timed_results;
    for (std::size_t i = 0; i < 4; ++i)
      if (const auto v = kMetrics[i].get(r)) values[i].push_back(*v);
    if (const auto it = r.extra.find("inter_token_ms"); it != r.extra.end() && it->is_array())
      for (const json& g : *it)
        if (g.is_number() && std::isfinite(g.get<double>())) gaps.push_back(g.get<double>());
  }
  const auto summary = [](std::vector<double> v) {
    return v.empty() ? std::nullopt : std::optional<stats::Percentiles>(stats::percentiles(std::move(v)));
  };
  p.ttft_ms = summary(values[0]);
  if (!gaps.empty()) {
    p.itl_ms = summary(std::move(gaps));
    p.itl_basis = "inter_token_ms";
  } else if (!values[1].empty()) {
    p.itl_ms = summary(values[1]);
    p.itl_basis = "itl_ms.mean";
  }
  p.e2e_ms = summary(values[2]);
  p.output_tokens_per_s = summary(values[3]);
  p.kv_capacity = capacity_from_log(run.manifest);
  if (const json* c = at(run.manifest.engine, {"log", "facts", "max_concurrency"}); c && c->is_number())
    p.max_concurrency = c->get<double>();
  if (!p.kv_capacity) {
    std::string why;
    p.kv_capacity = capacity_estimate(run.manifest, o, why);
  }
  return p;
}

Gains pair_gains(const PairRecords& rec, const RunPerformance& ref, const RunPerformance& cand, const CompareOptions& o) {
  Gains g;
  for (const Metric& m : kMetrics) {
    std::vector<double> per_trial;
    std::size_t results = 0;
    for (const auto& trial : rec.trials) {
      double sum = 0;
      int n = 0;
      for (const auto& [ri, ci] : trial) {
        const ResultRecord &a = rec.reference.results.records[ri], &b = rec.candidate.results.records[ci];
        if (a.error || b.error) continue;
        const auto va = m.get(a), vb = m.get(b);
        if (!va || !vb) continue;
        sum += std::log(*vb / *va);
        ++n;
      }
      if (n == 0) continue;
      per_trial.push_back(sum / n);
      results += static_cast<std::size_t>(n);
    }
    if (per_trial.empty()) continue;
    const stats::GeometricRatio gr = stats::geometric_mean_ratio(per_trial, o.alpha);
    PairedRatio pr{.metric = m.name, .lower_is_better = m.lower_is_better, .trials = per_trial.size(), .results = results,
                   .ratio = gr.estimate, .interval = gr.interval};
    const std::optional<stats::Percentiles>* rp = nullptr;
    const std::optional<stats::Percentiles>* cp = nullptr;
    const std::string name = m.name;
    if (name == "ttft_ms") rp = &ref.ttft_ms, cp = &cand.ttft_ms;
    if (name == "itl_ms") rp = &ref.itl_ms, cp = &cand.itl_ms;
    if (name == "e2e_ms") rp = &ref.e2e_ms, cp = &cand.e2e_ms;
    if (name == "output_tokens_per_s") rp = &ref.output_tokens_per_s, cp = &cand.output_tokens_per_s;
    if (rp && cp && *rp && *cp) {
      pr.p50_ratio = ratio_of((*cp)->p50, (*rp)->p50);
      pr.p90_ratio = ratio_of((*cp)->p90, (*rp)->p90);
      pr.p99_ratio = ratio_of((*cp)->p99, (*rp)->p99);
    }
    g.ratios.push_back(pr);
  }
  bool have_ttft = false, have_e2e = false;
  for (const PairedRatio& r : g.ratios) {
    have_ttft = have_ttft || r.metric == "ttft_ms";
    have_e2e = have_e2e || r.metric == "e2e_ms";
  }
  if (!have_e2e) g.notes.push_back("no paired latencies: the results carry no latency_ms (runs made by kvgate run do)");
  else if (!have_ttft) g.notes.push_back("no TTFT or ITL: the runs were not streamed (kvgate run --stream records them)");

  // Capacity: both from engine logs, else both estimated alike (a log on one side only is not mixed with an estimate).
  std::optional<KvCapacity> a = capacity_from_log(rec.reference.manifest), b = capacity_from_log(rec.candidate.manifest);
  bool estimate = false;
  if (!a || !b) {
    std::string why_a, why_b;
    a = capacity_estimate(rec.reference.manifest, o, why_a);
    b = capacity_estimate(rec.candidate.manifest, o, why_b);
    estimate = true;
    if (!a || !b) {
      g.notes.push_back("no KV capacity ratio: " + (!why_a.empty() ? why_a : why_b));
      return g;
    }
  }
  if (a->tokens > 0)
    g.capacity = CapacityGain{.reference_tokens = a->tokens, .candidate_tokens = b->tokens,
                              .ratio = static_cast<double>(b->tokens) / static_cast<double>(a->tokens),
                              .estimate = estimate, .source = estimate ? "estimate" : "engine_log"};
  return g;
}

}  // namespace kvgate::compare
