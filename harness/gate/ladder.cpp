#include "harness/gate/ladder.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <optional>

#include "harness/compare/verdict.h"
#include "harness/core/atomic_file.h"
#include "harness/core/error.h"
#include "harness/core/jsonl.h"
#include "harness/core/log.h"
#include "harness/decoder/model_config.h"
#include "harness/gate/ladder_inputs.h"
#include "kernels/kv_format.h"

namespace kvgate::gate {

using nlohmann::json;
namespace fs = std::filesystem;

namespace {

std::string times(double x) {
  char b[32];
  std::snprintf(b, sizeof b, "\u00d7%.2f", x);
  return b;
}

Configuration rung_configuration(const Configuration& baseline, const KvSettings& kv) {
  Configuration c = baseline;
  c.kv = kv;
  c.label = kv.name();
  c.kv_format = kv.format;
  c.backend.reference.kv_format = kv.format;
  c.backend.reference.kv_params = kv.kv_params();
  c.backend.reference.kernel_switches = kv.kernel_switches;
  return c;
}

double bytes_per_token(const kernels::KvShape& shape, const KvSettings& kv) {
  return kernels::resolve_kv_format({.format = kv.format, .params = kv.kv_params()}, shape).bytes_per_token();
}

std::string describe_rung(const LadderRung& r) {
  const std::string& f = r.kv.format;
  if (r.step == "uncalibrated") return f + (r.kv.scales.empty() && (f == "fp8_e4m3" || f == "fp8_e5m2") ? " at scale 1.0" : "");
  std::string s = f;
  if (!r.kv.scales.empty()) s += " with calibrated scales";
  if (!r.kv.skip_layers.empty()) {
    std::string layers;
    for (int l : r.kv.skip_layers) layers += (layers.empty() ? "" : ", ") + std::to_string(l);
    s += (r.kv.scales.empty() ? " with" : " and") + std::string(" layer") + (r.kv.skip_layers.size() > 1 ? "s " : " ") + layers + " in bf16";
  }
  return s;
}

class Ladder {
 public:
  explicit Ladder(const LadderOptions& o) : o_(o) {
    if (o.gate.configs.empty() || o.gate.configs[0].backend.kind != "reference")
      throw Error("--ladder walks the reference decoder (it restarts the engine for each rung): drop --baseline URL and give "
                  "--model-dir; for a served engine, docs/ladder.md lists the same steps by hand");
    if (o.start.format == "bf16" || o.start.format == "fp32")
      throw Error("--ladder " + o.start.format + ": the baseline's own precision has nothing to climb: give the format to ship, e.g. fp8_e4m3");
    if (!o.start.scales.empty() || !o.start.skip_layers.empty())
      throw Error("--ladder " + o.start.name() + ": the ladder finds the scales and the layers to skip itself: give the format "
                  "(and kernel switches, if any) only");
    baseline_ = o.gate.configs[0];
    const decoder::ModelConfig m = decoder::load_model_config(baseline_.backend.reference.model_dir);
    shape_ = {.layers = m.num_layers, .kv_heads = m.num_kv_heads, .head_dim = m.head_dim};
    result_.bf16_bytes_per_token = bytes_per_token(shape_, KvSettings{.format = "bf16"});
    dir_ = o.gate.out_dir + "/ladder";
  }

  LadderResult run() {
    KvSettings best = o_.start;
    best.label.clear();
    if (climb("uncalibrated", best)) return finish();
    if (takes_scales(best.format)) {
      best.scales = ladder_scales(inputs(), best.format);
      if (climb("calibrated", best)) return finish();
    } else {
      say("ladder: " + best.format + " takes no per-tensor scales: no calibration rung");
    }
    result_.ranked_layers = ladder_layer_ranking(inputs(), best);
    const int limit = o_.max_skip_layers > 0 ? o_.max_skip_layers : std::max(1, shape_.layers / 4);
    for (int n : skip_sizes(std::min(limit, shape_.layers - 1))) {
      KvSettings k = best;
      k.skip_layers.assign(result_.ranked_layers.begin(), result_.ranked_layers.begin() + n);
      std::sort(k.skip_layers.begin(), k.skip_layers.end());
      if (climb("skip", k)) return finish();
    }
    return finish();
  }

 private:
  LadderInputs& inputs() {
    if (!inputs_) inputs_.emplace(LadderInputs{.dir = dir_, .baseline = baseline_, .options = &o_});
    return *inputs_;
  }

  void say(const std::string& s) const {
    if (o_.log) o_.log(s);
    else log_info(s);
  }

  // Runs one rung; true when it PASSed (or the gate was stopped: nothing more runs).
  bool climb(const std::string& step, const KvSettings& kv) {
    LadderRung r{.step = step, .kv = kv, .label = kv.name()};
    r.bytes_per_token = bytes_per_token(shape_, kv);
    r.capacity = result_.bf16_bytes_per_token / r.bytes_per_token;
    say("ladder: rung " + std::to_string(result_.rungs.size() + 1) + ": " + r.label + " (" + describe_rung(r) + ")");
    GateOptions g = o_.gate;
    g.configs = {baseline_, rung_configuration(baseline_, kv)};
    g.history_db.clear();  // the ladder's final gate is the one a history keeps
    const GateResult gr = run_gate(g);
    if (gr.stopped) {
      stopped_ = gr.exit_code;
      return true;
    }
    r.verdict = gr.verdict;
    for (const compare::PairComparison& p : gr.comparison.pairs)
      if (p.gating) r.reason = compare::verdict_line(gr.comparison, p);
    say("ladder: " + r.label + ": " + compare::to_string(r.verdict));
    result_.rungs.push_back(r);
    write_file_atomic(o_.gate.out_dir + "/ladder.json", ladder_json(result_).dump(2) + "\n");
    if (r.verdict != compare::Verdict::pass) return false;
    result_.chosen = static_cast<int>(result_.rungs.size()) - 1;
    return true;
  }

  LadderResult finish() {
    if (stopped_) {
      result_.exit_code = stopped_;
      return result_;
    }
    if (result_.chosen >= 0) {
      const LadderRung& r = result_.rungs[static_cast<std::size_t>(result_.chosen)];
      result_.recommendation = "ship " + describe_rung(r) + ": PASS, " + times(r.capacity) + " capacity";
      result_.exit_code = 0;
    } else {
      result_.recommendation = "stay on bf16: no rung of " + o_.start.format + " passed (" + std::to_string(result_.rungs.size()) + " tried)";
      result_.exit_code = 1;
    }
    // The final gate: the baseline against every rung, each run resumed (nothing runs again), so
    // the reports compare them all and carry the ladder.
    GateOptions g = o_.gate;
    g.configs = {baseline_};
    for (const LadderRung& r : result_.rungs) g.configs.push_back(rung_configuration(baseline_, r.kv));
    g.report_sections.push_back(ladder_section(result_));
    result_.gate = run_gate(g);
    if (result_.gate.stopped) {
      result_.exit_code = result_.gate.exit_code;
      return result_;
    }
    const json record = ladder_json(result_);
    write_file_atomic(o_.gate.out_dir + "/ladder.json", record.dump(2) + "\n");
    // compare.json and summary.txt carry the ladder too: one file answers what to ship.
    for (const GateReport& f : result_.gate.reports) {
      if (f.format == "json") {
        json j = json::parse(read_file(f.path), nullptr, false);
        if (j.is_object()) {
          j["ladder"] = record;
          write_file_atomic(f.path, j.dump(2, ' ', false, json::error_handler_t::replace) + "\n");
        }
      } else if (f.format == "text") {
        write_file_atomic(f.path, read_file(f.path) + "\n" + ladder_text(result_));
      }
    }
    return result_;
  }

  const LadderOptions& o_;
  Configuration baseline_{};
  kernels::KvShape shape_{};
  std::string dir_{};
  std::optional<LadderInputs> inputs_{};
  LadderResult result_{};
  int stopped_ = 0;
};

}  // namespace

std::vector<int> skip_sizes(int limit) {
  std::vector<int> out;
  for (int n = 1; n < limit; n *= 2) out.push_back(n);
  if (limit >= 1) out.push_back(limit);
  return out;
}

LadderResult run_ladder(const LadderOptions& options) { return Ladder(options).run(); }

json ladder_json(const LadderResult& r) {
  json rungs = json::array();
  for (std::size_t i = 0; i < r.rungs.size(); ++i) {
    const LadderRung& x = r.rungs[i];
    rungs.push_back({{"rung", i + 1},
                     {"step", x.step},
                     {"label", x.label},
                     {"kv", x.kv.record()},
                     {"verdict", compare::to_string(x.verdict)},
                     {"reason", x.reason},
                     {"kv_bytes_per_token", x.bytes_per_token},
                     {"capacity_vs_bf16", x.capacity}});
  }
  return {{"schema", "kvgate-ladder/1"},
          {"rungs", rungs},
          {"chosen", r.chosen >= 0 ? json(r.rungs[static_cast<std::size_t>(r.chosen)].label) : json(nullptr)},
          {"recommendation", r.recommendation},
          {"bf16_kv_bytes_per_token", r.bf16_bytes_per_token},
          {"ranked_layers", r.ranked_layers}};
}

reports::ReportSection ladder_section(const LadderResult& r) {
  reports::ReportSection s{.id = "ladder",
                           .title = "Calibration ladder",
                           .columns = {"rung", "configuration", "verdict", "KV bytes / token", "capacity vs bf16", "why"}};
  char b[32];
  for (std::size_t i = 0; i < r.rungs.size(); ++i) {
    const LadderRung& x = r.rungs[i];
    std::snprintf(b, sizeof b, "%.0f", x.bytes_per_token);
    s.rows.push_back({std::to_string(i + 1) + " " + x.step, x.label, compare::to_string(x.verdict), b, times(x.capacity), x.reason});
  }
  std::snprintf(b, sizeof b, "%.0f", r.bf16_bytes_per_token);
  s.rows.push_back({"-", "bf16 (baseline)", "-", b, times(1.0), ""});
  s.conclusion = "Recommendation: " + r.recommendation;
  return s;
}

std::string ladder_text(const LadderResult& r) {
  std::string out = "ladder (seed 000's step 6: uncalibrated, calibrated, sensitive layers in bf16, else bf16):\n";
  int width = 4;  // the label column fits the longest label ("bf16" at least)
  for (const LadderRung& x : r.rungs) width = std::max(width, static_cast<int>(x.label.size()));
  char b[512];
  for (std::size_t i = 0; i < r.rungs.size(); ++i) {
    const LadderRung& x = r.rungs[i];
    std::snprintf(b, sizeof b, "  %zu. %-12s %-*s %-12s %6.0f B/token  %s capacity\n", i + 1, x.step.c_str(), width, x.label.c_str(),
                  compare::to_string(x.verdict), x.bytes_per_token, times(x.capacity).c_str());
    out += b;
  }
  std::snprintf(b, sizeof b, "     %-12s %-*s %-12s %6.0f B/token\n", "baseline", width, "bf16", "", r.bf16_bytes_per_token);
  out += b;
  if (!r.recommendation.empty()) out += "recommendation: " + r.recommendation + "\n";
  return out;
}

}  // namespace kvgate::gate
