#include "harness/gate/merge_shards.h"

#include <filesystem>
#include <map>
#include <set>

#include "harness/core/atomic_file.h"
#include "harness/core/error.h"
#include "harness/core/jsonl.h"
#include "harness/core/log.h"
#include "harness/core/manifest.h"
#include "harness/core/version.h"
#include "harness/gate/gate_dir.h"
#include "harness/gate/join_runs.h"
#include "harness/gate/plan.h"
#include "harness/runner/merge.h"

namespace kvgate::gate {

using nlohmann::json;
namespace fs = std::filesystem;

namespace {

struct ShardDir {
  std::string dir{};
  json record{};
  runner::Shard shard{};
};

// What must be equal in every shard: what made the trials, the trials themselves, and who ran them.
json configurations_sans_endpoints(const json& configs) {
  json out = json::array();
  for (json c : configs) {
    c.erase("endpoints");
    out.push_back(c);
  }
  return out;
}

void check_same_gate(const ShardDir& first, const ShardDir& s) {
  const json& a = first.record;
  const json& b = s.record;
  for (const char* k : {"suite", "seed", "tasks"})
    if (a["plan"].value(k, json()) != b["plan"].value(k, json()))
      throw Error(s.dir + ": another gate than " + first.dir + " (its plan's " + k +
                  " differs): merge the shards of one gate, all run with the same suite and inputs");
  for (const auto& [task, sha] : a["tasks_sha256"].items())
    if (b["tasks_sha256"].value(task, json()) != sha)
      throw Error(s.dir + "/tasks/" + task + ".jsonl: sha256 differs from " + first.dir +
                  "'s: the shards generated different trials (another tokenizer or data file?): run every shard with the same inputs");
  if (configurations_sans_endpoints(a["configurations"]) != configurations_sans_endpoints(b["configurations"]))
    throw Error(s.dir + ": other configurations than " + first.dir + " (labels, backends, models or KV formats): merge shards of one gate");
}

std::string shard_name(int index, int count) { return std::to_string(index) + "/" + std::to_string(count); }

// A shard directory's record, checked to hold a shard whose trials exist.
ShardDir read_shard(const std::string& dir) {
  ShardDir s{.dir = dir, .record = read_gate_record(dir)};
  if (s.record.contains("merged_from")) throw Error(dir + ": a merged gate, not a shard: pass the shard directories");
  const json& sh = s.record.value("shard", json());
  if (!sh.is_string()) throw Error(dir + ": a whole gate, not a shard (made without --shard): it needs no merge");
  s.shard = runner::parse_shard(sh.get<std::string>());
  if (!s.record.contains("tasks_sha256") || !s.record.contains("configurations"))
    throw Error(dir + ": shard " + sh.get<std::string>() + " stopped before its trials were written: re-run its command");
  return s;
}

struct Survey {
  std::vector<ShardDir> shards{};
  std::vector<std::string> unreadable{};  // "DIR: why"
  int count = 0;
  std::vector<int> missing{};
  std::vector<std::string> unfinished{};  // "DIR/runs/label/task: 10 of 12 results"
};

Survey survey(const std::vector<std::string>& dirs) {
  Survey v;
  std::map<int, std::string> seen;
  for (const std::string& d : dirs) {
    try {
      v.shards.push_back(read_shard(d));
    } catch (const Error& e) {
      v.unreadable.push_back(e.what());
      continue;
    }
    const ShardDir& s = v.shards.back();
    if (v.shards.size() > 1) check_same_gate(v.shards.front(), s);
    if (v.count && s.shard.count != v.count)
      throw Error(d + ": shard " + shard_text(s.shard) + " of another split than /" + std::to_string(v.count) + " (" +
                  v.shards.front().dir + ")");
    v.count = s.shard.count;
    if (auto [it, fresh] = seen.emplace(s.shard.index, d); !fresh)
      throw Error(d + ": shard " + shard_text(s.shard) + " is also " + it->second + ": pass each shard's directory once");
  }
  for (int i = 0; i < v.count; ++i)
    if (!seen.count(i)) v.missing.push_back(i);
  for (const ShardDir& s : v.shards)
    for (const json& c : s.record["configurations"])
      for (const auto& [task, sha] : s.record["tasks_sha256"].items()) {
        const std::string run = s.dir + "/runs/" + c["label"].get<std::string>() + "/" + task;
        if (!fs::is_regular_file(run + "/run.json")) {
          v.unfinished.push_back(run + ": not started");
          continue;
        }
        const json summary = read_manifest(run + "/run.json").extra.value("summary", json::object());
        if (!summary.value("complete", false))
          v.unfinished.push_back(run + ": " + std::to_string(summary.value("results", 0)) + " of " +
                                 std::to_string(summary.value("expected", 0)) + " results");
      }
  return v;
}

std::vector<std::string> problems(const Survey& v) {
  std::vector<std::string> out = v.unreadable;
  for (int i : v.missing) out.push_back("shard " + shard_name(i, v.count) + ": no directory given");
  out.insert(out.end(), v.unfinished.begin(), v.unfinished.end());
  return out;
}

// --out: new, empty, or an earlier merge (its runs and trials are remade from the shards).
void prepare_out(const std::string& out, const std::vector<std::string>& dirs) {
  for (const std::string& d : dirs)
    if (fs::exists(out) && fs::exists(d) && fs::equivalent(d, out)) throw Error("--out " + out + ": is one of the shard directories");
  if (!fs::exists(out) || (fs::is_directory(out) && fs::is_empty(out))) return;
  const bool earlier_merge = fs::is_regular_file(out + "/gate.json") && read_gate_record(out).contains("merged_from");
  if (!earlier_merge) throw Error("--out " + out + ": exists and is not an earlier merge: merge into a new directory");
  fs::remove_all(out + "/runs");
  fs::remove_all(out + "/tasks");
}

}  // namespace

json inspect_shards(const std::vector<std::string>& dirs) {
  const Survey v = survey(dirs);
  json shards = json::array();
  for (const ShardDir& s : v.shards) shards.push_back({{"dir", s.dir}, {"shard", shard_text(s.shard)}, {"tasks_sha256", s.record["tasks_sha256"]}});
  json missing = json::array();
  for (int i : v.missing) missing.push_back(shard_name(i, v.count));
  return {{"shards", shards},
          {"count", v.count ? json(v.count) : json(nullptr)},
          {"missing_shards", missing},
          {"unreadable", v.unreadable},
          {"unfinished_runs", v.unfinished},
          {"ready", problems(v).empty() && !v.shards.empty()}};
}

GateResult merge_gate_shards(const MergeShardsOptions& o) {
  if (o.shard_dirs.empty()) throw Error("--merge: no shard directories given: pass each shard's --out (e.g. --merge gate/shard-*)");
  if (o.out_dir.empty()) throw Error("--merge: --out DIR missing: the directory for the merged gate and its reports");
  const Survey v = survey(o.shard_dirs);
  if (v.shards.empty()) {
    std::string why;
    for (const std::string& u : v.unreadable) why += "\n  " + u;
    throw Error("--merge: none of the directories is a gate shard:" + why);
  }
  const std::vector<std::string> missing = problems(v);
  if (!missing.empty() && !o.allow_partial) {
    std::string list;
    for (const std::string& m : missing) list += "\n  " + m;
    throw Error("--merge: the gate is not whole:" + list +
                "\nrun those shards (the same command resumes an unfinished one), or pass --allow-partial to report what is there");
  }
  prepare_out(o.out_dir, o.shard_dirs);

  const json& first = v.shards.front().record;
  GateOptions g;
  g.suite = parse_suite(first["plan"]["suite"], first["inputs"].value("suite_source", std::string("built-in")));
  g.out_dir = o.out_dir;
  g.history_db = o.history_db;
  if (g.suite.history && g.history_db.empty())
    throw Error("--suite " + g.suite.name + ": this suite keeps a history: pass --history FILE to the merge");
  for (const json& c : first["configurations"]) g.configs.push_back(configuration_from_record(c, v.shards.front().dir + "/gate.json"));

  GateResult result;
  result.partial = missing;
  result.max_context = first["inputs"].value("max_context", std::int64_t{0});
  result.max_context_source = first["inputs"].value("max_context_source", std::string());
  result.skipped_tasks = first["inputs"].value("skipped_tasks", std::vector<std::string>{});
  std::vector<PlannedTask> tasks;
  for (const json& t : first["plan"]["tasks"]) {
    const std::string name = t["task"].get<std::string>();
    const TaskSpec* spec = nullptr;
    for (const TaskSpec& s : g.suite.tasks)
      if (s.task == name) spec = &s;
    if (!spec) throw Error(v.shards.front().dir + "/gate.json: task " + name + " is not in its suite: the record is damaged");
    tasks.push_back({.spec = spec, .buckets = t["buckets"].get<std::vector<std::int64_t>>(), .tasks_path = task_file(o.out_dir, name)});
    result.tasks.push_back({.task = name, .tasks_path = tasks.back().tasks_path, .buckets = tasks.back().buckets});
  }

  // The trials (byte-identical in every shard), then each configuration's task runs merged.
  make_directories(o.out_dir + "/tasks");
  for (const PlannedTask& p : tasks) fs::copy_file(task_file(v.shards.front().dir, p.spec->task), p.tasks_path);
  json merged_from = json::array();
  for (const ShardDir& s : v.shards) {
    merged_from.push_back({{"dir", s.dir}, {"shard", shard_text(s.shard)}});
    result.merged_from.push_back(s.dir);
  }
  for (const Configuration& c : g.configs)
    for (const PlannedTask& p : tasks) {
      runner::MergeOptions m{.dirs = {}, .out = o.out_dir + "/runs/" + c.label + "/" + p.spec->task, .allow_partial = true, .may_differ = {"endpoints"}};
      for (const ShardDir& s : v.shards) {
        const std::string run = s.dir + "/runs/" + c.label + "/" + p.spec->task;
        if (fs::is_regular_file(run + "/run.json")) m.dirs.push_back(run);
      }
      if (m.dirs.empty()) throw Error("--merge: no shard ran " + c.label + " / " + p.spec->task + ": nothing to compare; run the shards");
      const json summary = runner::merge_runs(m);
      result.runs.push_back({.label = c.label,
                             .task = p.spec->task,
                             .dir = m.out,
                             .results = summary.value("results", std::size_t{0}),
                             .expected = summary.value("expected", std::size_t{0}),
                             .complete = summary.value("complete", false)});
    }
  json record = first;
  record["created_at"] = utc_now_rfc3339();
  record["kvgate_version"] = version();
  record["shard"] = nullptr;
  record["merged_from"] = merged_from;
  record["partial"] = missing;
  write_file_atomic(o.out_dir + "/gate.json", record.dump(2) + "\n");
  if (!missing.empty()) log_warn("gate: partial merge (--allow-partial): " + std::to_string(missing.size()) + " parts missing");

  compare_and_report(result, g, tasks);
  return result;
}

}  // namespace kvgate::gate
