#include "datasets/golden/golden_compare.h"

#include <algorithm>

#include "datasets/common/edit_distance.h"

namespace kvgate {

using nlohmann::json;

namespace {

bool has(const std::vector<OutputProblem>& ps, BreakKind k) {
  return std::any_of(ps.begin(), ps.end(), [k](const OutputProblem& p) { return p.kind == k; });
}

// Tool calls reduced to what matters: name and parsed arguments (ids differ run to run).
json canonical_tool_calls(const json& calls) {
  json out = json::array();
  if (!calls.is_array()) return out;
  for (const json& c : calls) {
    json fn = c.is_object() && c.contains("function") ? c["function"] : json();
    json name = fn.is_object() && fn.contains("name") ? fn["name"] : json();
    json args = fn.is_object() && fn.contains("arguments") ? fn["arguments"] : json();
    if (args.is_string()) {
      json parsed = json::parse(args.get<std::string>(), nullptr, false);
      if (!parsed.is_discarded()) args = parsed;
    }
    out.push_back({{"name", name}, {"arguments", args}});
  }
  return out;
}

}  // namespace

std::string render_golden_output(const GoldenOutput& o) {
  std::string text = golden_answer_text(o.response);
  for (const json& c : canonical_tool_calls(o.tool_calls)) {
    const std::string name = c["name"].is_string() ? c["name"].get<std::string>() : c["name"].dump();
    text += "\n<tool_call> " + name + " " + c["arguments"].dump(-1, ' ', false, json::error_handler_t::replace);
  }
  return text;
}

GoldenDiff compare_golden(const GoldenRequest& request, const GoldenOutput& baseline, const GoldenOutput& candidate) {
  GoldenDiff d;
  const std::vector<OutputProblem> base = check_golden_output(request, baseline);
  const std::vector<OutputProblem> cand = check_golden_output(request, candidate);
  for (const OutputProblem& p : cand) {
    const bool shared = has(base, p.kind);
    // Requested JSON must be JSON whatever the baseline did; every other problem counts only when new.
    if (shared && p.kind != BreakKind::invalid_json) continue;
    d.breaks.push_back({p.kind, p.detail, shared});
  }
  const std::string base_text = golden_answer_text(baseline.response), cand_text = golden_answer_text(candidate.response);
  const std::size_t base_calls = tool_call_count(baseline.tool_calls), cand_calls = tool_call_count(candidate.tool_calls);
  // The baseline answered in JSON without being asked: the candidate should still be JSON.
  if (!request.json_requested && base_calls == 0 && cand_calls == 0 && !cand_text.empty() &&
      check_json_text(base_text).valid) {
    const JsonCheck c = check_json_text(cand_text);
    if (!c.valid) d.breaks.push_back({BreakKind::invalid_json, "the baseline answered in JSON; the candidate's " + c.error, false});
  }
  if (base_calls > 0 && cand_calls == 0)
    d.breaks.push_back({BreakKind::tool_call_dropped,
                        "the baseline made " + std::to_string(base_calls) + " tool call(s); the candidate made none", false});
  d.exact_match = base_text == cand_text && canonical_tool_calls(baseline.tool_calls) == canonical_tool_calls(candidate.tool_calls);
  d.edit_distance = d.exact_match ? 0.0 : normalized_edit_distance(render_golden_output(baseline), render_golden_output(candidate));
  return d;
}

GoldenSummary summarize_golden(const std::vector<GoldenDiff>& diffs, const GoldenGatePolicy& policy) {
  GoldenSummary s;
  s.prompts = diffs.size();
  double distance = 0.0;
  for (const GoldenDiff& d : diffs) {
    s.exact_matches += d.exact_match ? 1 : 0;
    distance += d.edit_distance;
    std::size_t counted = 0;
    for (const StructuralBreak& b : d.breaks) {
      if (b.in_baseline && policy.ignore_breaks_in_baseline) continue;
      ++counted;
      ++s.breaks_by_kind[to_string(b.kind)];
    }
    s.breaks += counted;
    s.prompts_with_breaks += counted > 0 ? 1 : 0;
  }
  if (s.prompts > 0) {
    s.exact_match_rate = static_cast<double>(s.exact_matches) / static_cast<double>(s.prompts);
    s.mean_edit_distance = distance / static_cast<double>(s.prompts);
  }
  s.gate_failed = s.breaks > policy.max_breaks;
  return s;
}

json to_json(const StructuralBreak& b) {
  return {{"kind", to_string(b.kind)}, {"detail", b.detail}, {"in_baseline", b.in_baseline}};
}

json to_json(const GoldenDiff& d) {
  json breaks = json::array();
  for (const StructuralBreak& b : d.breaks) breaks.push_back(to_json(b));
  return {{"breaks", breaks}, {"exact_match", d.exact_match}, {"edit_distance", d.edit_distance}};
}

json to_json(const GoldenSummary& s) {
  return {{"prompts", s.prompts},
          {"exact_matches", s.exact_matches},
          {"exact_match_rate", s.exact_match_rate},
          {"mean_edit_distance", s.mean_edit_distance},
          {"breaks", s.breaks},
          {"prompts_with_breaks", s.prompts_with_breaks},
          {"breaks_by_kind", s.breaks_by_kind},
          {"gate_failed", s.gate_failed}};
}

}  // namespace kvgate
