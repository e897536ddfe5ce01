#include "reports/history.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <regex>

#include "harness/compare/pinning.h"
#include "harness/core/atomic_file.h"
#include "harness/core/error.h"
#include "harness/core/json_fields.h"
#include "harness/core/jsonl.h"
#include "harness/core/manifest.h"
#include "harness/core/sha256.h"
#include "reports/run_facts.h"

namespace kvgate::reports {

using nlohmann::json;

std::string HistoryRow::series() const {
  std::string s = model.empty() ? std::string("model ?") : model;
  s += " \u00b7 KV " + (kv_format.empty() ? std::string("?") : kv_format);
  if (!baseline_kv_format.empty() && baseline_kv_format != kv_format) s += " vs " + baseline_kv_format;
  return s;
}

namespace {

json opt(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }

bool is_date(const std::string& s) {
  static const std::regex re(R"(\d{4}-\d{2}-\d{2})");
  return std::regex_match(s, re);
}

std::optional<double> opt_num(const json& o, const char* key) {
  if (!o.is_object() || !o.contains(key) || !o[key].is_number()) return std::nullopt;
  return o[key].get<double>();
}

json gains_json(const HistoryGains& g) {
  return {{"kv_capacity_ratio", opt(g.kv_capacity_ratio)}, {"kv_capacity_estimate", g.kv_capacity_estimate},
          {"itl_ratio", opt(g.itl_ratio)},                 {"itl_lo", opt(g.itl_lo)},
          {"itl_hi", opt(g.itl_hi)},                       {"ttft_ratio", opt(g.ttft_ratio)},
          {"ttft_lo", opt(g.ttft_lo)},                     {"ttft_hi", opt(g.ttft_hi)},
          {"e2e_ratio", opt(g.e2e_ratio)},                 {"e2e_lo", opt(g.e2e_lo)},
          {"e2e_hi", opt(g.e2e_hi)},                       {"tokens_per_s_ratio", opt(g.tokens_per_s_ratio)}};
}

// A history row's or a compare JSON's gains; absent or malformed parts stay empty (older files).
HistoryGains gains_of_row(const json& j) {
  HistoryGains g;
  if (!j.is_object()) return g;
  g.kv_capacity_ratio = opt_num(j, "kv_capacity_ratio");
  g.kv_capacity_estimate = j.value("kv_capacity_estimate", false);
  g.itl_ratio = opt_num(j, "itl_ratio"), g.itl_lo = opt_num(j, "itl_lo"), g.itl_hi = opt_num(j, "itl_hi");
  g.ttft_ratio = opt_num(j, "ttft_ratio"), g.ttft_lo = opt_num(j, "ttft_lo"), g.ttft_hi = opt_num(j, "ttft_hi");
  g.e2e_ratio = opt_num(j, "e2e_ratio"), g.e2e_lo = opt_num(j, "e2e_lo"), g.e2e_hi = opt_num(j, "e2e_hi");
  g.tokens_per_s_ratio = opt_num(j, "tokens_per_s_ratio");
  return g;
}

HistoryGains gains_of_compare(const json& pair) {
  HistoryGains g;
  const auto it = pair.find("gains");
  if (it == pair.end() || !it->is_object()) return g;
  if (const auto cap = it->find("kv_capacity"); cap != it->end() && cap->is_object()) {
    g.kv_capacity_ratio = opt_num(*cap, "ratio");
    g.kv_capacity_estimate = cap->value("estimate", false);
  }
  if (const auto ms = it->find("metrics"); ms != it->end() && ms->is_array())
    for (const json& m : *ms) {
      if (!m.is_object() || !m.contains("metric") || !m["metric"].is_string()) continue;
      const std::string name = m["metric"];
      if (name == "itl_ms") g.itl_ratio = opt_num(m, "ratio"), g.itl_lo = opt_num(m, "lo"), g.itl_hi = opt_num(m, "hi");
      if (name == "ttft_ms") g.ttft_ratio = opt_num(m, "ratio"), g.ttft_lo = opt_num(m, "lo"), g.ttft_hi = opt_num(m, "hi");
      if (name == "e2e_ms") g.e2e_ratio = opt_num(m, "ratio"), g.e2e_lo = opt_num(m, "lo"), g.e2e_hi = opt_num(m, "hi");
      if (name == "output_tokens_per_s") g.tokens_per_s_ratio = opt_num(m, "ratio");
    }
  return g;
}

std::vector<std::string> pinning_of_compare(const json& pair) {
  std::vector<std::string> out;
  const auto it = pair.find("pinning");
  if (it == pair.end() || !it->is_object() || !it->contains("differences") || !(*it)["differences"].is_array()) return out;
  for (const json& d : (*it)["differences"]) {
    if (!d.is_object() || !d.contains("label") || !d["label"].is_string()) continue;
    const auto side = [&](const char* k) { return d.contains(k) ? compare::value_text(d[k]) : std::string("(not recorded)"); };
    out.push_back(d["label"].get<std::string>() + " " + side("reference") + " -> " + side("candidate"));
  }
  return out;
}

}  // namespace

json to_json(const HistoryRow& r) {
  json tasks = json::array();
  for (const HistoryTask& t : r.tasks)
    tasks.push_back({{"task", t.task},
                     {"verdict", t.verdict},
                     {"metric", t.metric},
                     {"reference_metric", t.reference_metric},
                     {"candidate_metric", t.candidate_metric},
                     {"ratio", opt(t.ratio)},
                     {"lcb", opt(t.lcb)},
                     {"ucb", opt(t.ucb)},
                     {"trials", t.trials},
                     {"lost", t.lost},
                     {"gained", t.gained},
                     {"mcnemar_p", t.mcnemar_p},
                     {"regressed_buckets", t.regressed_buckets}});
  return {{"schema", kHistorySchema},
          {"date", r.date},
          {"recorded_at", r.recorded_at},
          {"source", r.source},
          {"source_sha256", r.source_sha256},
          {"pair", r.pair},
          {"verdict", r.verdict},
          {"baseline", r.baseline},
          {"candidate", r.candidate},
          {"engine", r.engine},
          {"engine_version", r.engine_version},
          {"baseline_engine_version", r.baseline_engine_version},
          {"model", r.model},
          {"kv_format", r.kv_format},
          {"baseline_kv_format", r.baseline_kv_format},
          {"margin", r.margin},
          {"alpha", r.alpha},
          {"kvgate_version", r.kvgate_version},
          {"tasks", tasks},
          {"gains", gains_json(r.gains)},
          {"pinning_differences", r.pinning_differences}};
}

HistoryRow history_row_from_json(const json& j, const std::string& where) {
  FieldReader f(j, where);
  if (f.str("schema") != kHistorySchema)
    f.fail("schema", "is not \"" + std::string(kHistorySchema) + "\": not a kvgate history row (or one of a newer kvgate)");
  HistoryRow r;
  r.date = f.str("date");
  if (!is_date(r.date)) f.fail("date", "must be YYYY-MM-DD");
  r.recorded_at = f.str("recorded_at");
  r.source = f.str("source");
  r.source_sha256 = f.str("source_sha256");
  r.pair = static_cast<std::size_t>(f.integer("pair"));
  r.verdict = f.str("verdict");
  r.baseline = f.str("baseline");
  r.candidate = f.str("candidate");
  r.engine = f.str("engine");
  r.engine_version = f.str("engine_version");
  r.baseline_engine_version = f.str("baseline_engine_version");
  r.model = f.str("model");
  r.kv_format = f.str("kv_format");
  r.baseline_kv_format = f.str("baseline_kv_format");
  r.margin = f.number("margin");
  r.alpha = f.number("alpha");
  r.kvgate_version = f.str("kvgate_version");
  const json& tasks = f.array("tasks");
  for (std::size_t i = 0; i < tasks.size(); ++i) {
    FieldReader t(tasks[i], where + ": tasks[" + std::to_string(i) + "]");
    HistoryTask h;
    h.task = t.str("task");
    h.verdict = t.str("verdict");
    h.metric = t.str("metric");
    h.reference_metric = t.number("reference_metric");
    h.candidate_metric = t.number("candidate_metric");
    h.ratio = t.opt_number("ratio");
    h.lcb = t.opt_number("lcb");
    h.ucb = t.opt_number("ucb");
    h.trials = static_cast<std::size_t>(t.integer("trials"));
    h.lost = static_cast<std::size_t>(t.integer("lost"));
    h.gained = static_cast<std::size_t>(t.integer("gained"));
    h.mcnemar_p = t.number("mcnemar_p");
    for (const json& b : t.array("regressed_buckets")) {
      if (!b.is_number_integer()) t.fail("regressed_buckets", "must hold integers");
      h.regressed_buckets.push_back(b.get<std::int64_t>());
    }
    r.tasks.push_back(std::move(h));
  }
  if (const auto g = j.find("gains"); g != j.end()) r.gains = gains_of_row(*g);
  if (const auto p = j.find("pinning_differences"); p != j.end() && p->is_array())
    for (const json& d : *p)
      if (d.is_string()) r.pinning_differences.push_back(d.get<std::string>());
  return r;
}

std::vector<HistoryRow> rows_from_compare_json(const json& result, const std::string& source, const std::string& sha256,
                                               const HistoryAddOptions& o) {
  FieldReader top(result, source);
  if (!top.has("schema") || top.str("schema") != "kvgate-compare/1")
    top.fail("schema", "is not \"kvgate-compare/1\": pass the file written by `kvgate compare --json F`");
  const json& options = top.object("options");
  FieldReader opts(options, source + ": options");
  const json& runs = top.array("runs");
  const json& pairs = top.array("pairs");
  if (!o.date.empty() && !is_date(o.date)) throw Error("--date " + o.date + ": not a date: use YYYY-MM-DD");
  const std::string recorded = o.recorded_at.empty() ? utc_now_rfc3339() : o.recorded_at;
  std::vector<HistoryRow> rows;
  for (std::size_t pi = 0; pi < pairs.size(); ++pi) {
    const std::string where = source + ": pairs[" + std::to_string(pi) + "]";
    FieldReader p(pairs[pi], where);
    if (!p.boolean("gating")) continue;
    const auto ref = static_cast<std::size_t>(p.integer("reference")), cand = static_cast<std::size_t>(p.integer("candidate"));
    if (ref >= runs.size() || cand >= runs.size() || p.integer("reference") < 0 || p.integer("candidate") < 0)
      p.fail("candidate", "names a run that is not in runs[]");
    const auto manifest = [&](std::size_t i) { return runs[i].is_object() && runs[i].contains("manifest") ? runs[i]["manifest"] : json(); };
    const RunFacts base = run_facts(manifest(ref)), cf = run_facts(manifest(cand));
    HistoryRow r;
    r.date = o.date;
    for (const std::string* when : {&cf.started_at, &base.started_at})
      if (r.date.empty() && when->size() >= 10 && is_date(when->substr(0, 10))) r.date = when->substr(0, 10);
    if (r.date.empty())
      throw Error(source + ": the runs record no start date (run.json started_at): pass --date YYYY-MM-DD for this night");
    r.recorded_at = recorded;
    r.source = source;
    r.source_sha256 = sha256;
    r.pair = pi;
    r.verdict = p.str("verdict");
    r.baseline = p.str("reference_label");
    r.candidate = p.str("candidate_label");
    r.engine = cf.engine;
    r.engine_version = cf.engine_version;
    r.baseline_engine_version = base.engine_version;
    r.model = cf.model.empty() ? base.model : cf.model;
    r.kv_format = cf.kv_format;
    r.baseline_kv_format = base.kv_format;
    r.margin = opts.number("margin");
    r.alpha = opts.number("alpha");
    r.kvgate_version = top.has_value("kvgate_version") ? top.str("kvgate_version") : "";
    r.gains = gains_of_compare(pairs[pi]);
    r.pinning_differences = pinning_of_compare(pairs[pi]);
    const json& tasks = p.array("tasks");
    for (std::size_t ti = 0; ti < tasks.size(); ++ti) {
      const std::string tw = where + ": tasks[" + std::to_string(ti) + "]";
      FieldReader t(tasks[ti], tw);
      HistoryTask h;
      h.task = t.str("task");
      h.verdict = t.str("verdict");
      h.metric = t.str("metric");
      h.reference_metric = t.number("reference_metric");
      h.candidate_metric = t.number("candidate_metric");
      const json& ratio = t.object("ratio");
      h.ratio = opt_num(ratio, "estimate");
      h.lcb = h.ratio ? opt_num(ratio, "lcb") : std::nullopt;
      h.ucb = h.ratio ? opt_num(ratio, "ucb") : std::nullopt;
      h.trials = static_cast<std::size_t>(t.integer("trials"));
      FieldReader flips(t.object("flips"), tw + ": flips");
      h.lost = static_cast<std::size_t>(flips.integer("lost"));
      h.gained = static_cast<std::size_t>(flips.integer("gained"));
      h.mcnemar_p = FieldReader(flips.object("mcnemar"), tw + ": flips.mcnemar").number("exact");
      for (const json& b : t.array("buckets")) {
        FieldReader bf(b, tw + ": buckets[]");
        if (bf.boolean("regression")) h.regressed_buckets.push_back(bf.integer("bucket"));
      }
      r.tasks.push_back(std::move(h));
    }
    rows.push_back(std::move(r));
  }
  if (rows.empty()) throw Error(source + ": no comparison of a candidate with the baseline (pairs[] has no gating pair)");
  return rows;
}

std::vector<HistoryRow> read_history(const std::string& db) {
  std::vector<HistoryRow> rows;
  for_each_jsonl(db, [&](json&& j, std::size_t line) { rows.push_back(history_row_from_json(j, db + ":" + std::to_string(line))); });
  return rows;
}

namespace {

// An exclusive lock on db + ".lock" for the scope.
class FileLock {
 public:
  explicit FileLock(const std::string& db) : path_(db + ".lock") {
    fd_ = ::open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0) throw Error(path_ + ": cannot create the history lock (" + std::strerror(errno) + "): check the directory is writable");
    while (::flock(fd_, LOCK_EX) != 0)
      if (errno != EINTR) throw Error(path_ + ": cannot lock (" + std::strerror(errno) + ")");
  }
  ~FileLock() { ::close(fd_); }
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;

 private:
  std::string path_;
  int fd_ = -1;
};

}  // namespace

AddOutcome add_to_history(const std::string& db, const std::string& result_path, const HistoryAddOptions& o) {
  const std::string text = read_file(result_path);
  json result;
  try {
    result = json::parse(text);
  } catch (const json::parse_error& e) {
    throw Error(result_path + ": not valid JSON (" + std::string(e.what()) + "): pass the file written by `kvgate compare --json F`");
  }
  const std::vector<HistoryRow> rows = rows_from_compare_json(result, result_path, sha256_hex(text), o);

  FileLock lock(db);
  std::string existing;
  std::vector<HistoryRow> old;
  std::error_code ec;
  if (std::filesystem::exists(db, ec)) {
    existing = read_file(db);
    old = read_history(db);  // refuses a malformed history rather than appending to it
    if (!existing.empty() && existing.back() != '\n') existing += '\n';
  }
  AddOutcome out;
  std::string added;
  for (const HistoryRow& r : rows) {
    bool present = false;
    for (const HistoryRow& h : old) present = present || (h.source_sha256 == r.source_sha256 && h.pair == r.pair);
    if (present) {
      ++out.already_present;
      continue;
    }
    added += to_jsonl_line(to_json(r));
    ++out.added;
  }
  if (out.added) write_file_atomic(db, existing + added);
  return out;
}

}  // namespace kvgate::reports
