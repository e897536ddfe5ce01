#include "harness/runner/merge.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>

#include "harness/core/atomic_file.h"
#include "harness/core/error.h"
#include "harness/core/jsonl.h"
#include "harness/core/manifest.h"
#include "harness/core/run_dir.h"
#include "harness/core/version.h"
#include "harness/runner/run_journal.h"
#include "harness/runner/run_summary.h"
#include "harness/runner/work_plan.h"

namespace kvgate::runner {

using nlohmann::json;
namespace fs = std::filesystem;

json merge_runs(const MergeOptions& o) {
  if (o.dirs.empty()) throw Error("kvgate merge: no run directories given");
  if (fs::exists(o.out) && !(fs::is_directory(o.out) && fs::is_empty(o.out)))
    throw Error("--out " + o.out + ": exists and is not empty: merge into a new directory");
  for (const std::string& d : o.dirs)
    if (fs::exists(o.out) && fs::equivalent(d, o.out)) throw Error("--out " + o.out + ": is one of the inputs");

  std::vector<RunDir> runs;
  for (const std::string& d : o.dirs) runs.push_back(load_run_dir(d));

  // One configuration: identities equal but for the shard.
  const json* first_identity = nullptr;
  for (const RunDir& r : runs) {
    auto it = r.manifest.extra.find("identity");
    if (it == r.manifest.extra.end())
      throw Error(r.path + "/run.json: no \"identity\": merge joins directories written by `kvgate run`");
    if (!first_identity) {
      first_identity = &*it;
      continue;
    }
    std::set<std::string> ignore = o.may_differ;
    ignore.insert("shard");
    const auto diffs = identity_differences(comparable_identity(*first_identity), comparable_identity(*it), ignore);
    if (!diffs.empty()) {
      std::string list;
      for (const auto& d : diffs) list += "\n  " + d;
      throw Error(r.path + ": another configuration than " + runs[0].path + ":" + list + "\nmerge only shards of one run");
    }
  }

  // Shards: all of one count, each once; missing ones named.
  std::set<int> seen;
  int count = 0;
  std::size_t unsharded = 0;
  for (const RunDir& r : runs) {
    const json& sh = r.manifest.extra["identity"]["shard"];
    if (sh.is_null()) {
      ++unsharded;
      continue;
    }
    const Shard s = parse_shard(sh.get<std::string>());
    if (count && s.count != count)
      throw Error(r.path + ": shard " + sh.get<std::string>() + " of another split than /" + std::to_string(count));
    count = s.count;
    if (!seen.insert(s.index).second)
      throw Error(r.path + ": shard " + sh.get<std::string>() + " given twice: pass each shard's directory once");
  }
  if (unsharded && count) throw Error("kvgate merge: mixes sharded and unsharded run directories");
  std::vector<int> missing;
  for (int i = 0; i < count; ++i)
    if (!seen.count(i)) missing.push_back(i);
  if (!missing.empty() && !o.allow_partial) {
    std::string list;
    for (int i : missing) list += (list.empty() ? "" : ", ") + std::to_string(i) + "/" + std::to_string(count);
    throw Error("kvgate merge: shards missing: " + list + ": pass them too, or --allow-partial (then `kvgate run --out " + o.out +
                "` with the same settings runs what is missing)");
  }

  // Every (id, repeat) once.
  std::map<std::pair<std::string, int>, std::string> owner;
  std::vector<ResultRecord> all;
  std::size_t expected = 0;
  json merged_from = json::array();
  json sessions = json::array();
  bool all_complete = missing.empty();
  for (const RunDir& r : runs) {
    for (const ResultRecord& rec : r.results.records) {
      auto [it, fresh] = owner.emplace(std::make_pair(rec.id, rec.repeat), r.path);
      if (!fresh)
        throw Error(r.path + ": trial \"" + rec.id + "\" repeat " + std::to_string(rec.repeat) + " is also in " + it->second +
                    ": the inputs overlap; merge each shard once");
      all.push_back(rec);
    }
    const json summary = r.manifest.extra.value("summary", json::object());
    expected += summary.value("expected", r.results.records.size());
    all_complete = all_complete && summary.value("complete", false);
    merged_from.push_back({{"dir", r.path}, {"shard", r.manifest.extra["identity"]["shard"]}, {"results", r.results.records.size()},
                           {"status", r.manifest.extra.value("status", std::string("unknown"))}});
    if (r.manifest.extra.contains("sessions") && r.manifest.extra["sessions"].is_array())
      for (const json& s : r.manifest.extra["sessions"]) {
        json tagged = s;
        tagged["dir"] = r.path;
        sessions.push_back(tagged);
      }
  }
  std::sort(all.begin(), all.end(), [](const ResultRecord& a, const ResultRecord& b) {
    return a.id != b.id ? a.id < b.id : a.repeat < b.repeat;
  });

  RunManifest m = runs[0].manifest;
  m.kvgate_version = version();
  m.kvgate_commit = git_commit();
  for (const RunDir& r : runs) {
    if (!r.manifest.started_at.empty() && (m.started_at.empty() || r.manifest.started_at < m.started_at)) m.started_at = r.manifest.started_at;
    if (r.manifest.ended_at > m.ended_at) m.ended_at = r.manifest.ended_at;
  }
  json identity = *first_identity;
  identity["shard"] = nullptr;  // the merged directory is the whole run: `kvgate run` resumes it unsharded
  m.extra["identity"] = identity;
  if (m.extra.contains("run") && m.extra["run"].is_object()) m.extra["run"]["shard"] = nullptr;
  m.extra["merged_from"] = merged_from;
  m.extra["sessions"] = sessions;
  json summary = summarize_results(all, expected);
  summary["complete"] = all_complete && all.size() >= expected;
  m.extra["summary"] = summary;
  m.extra["status"] = summary["complete"].get<bool>() ? "complete" : "incomplete";
  // Engines of every input, in case shards met different servers.
  json engines = json::array();
  for (const RunDir& r : runs) engines.push_back(r.manifest.engine);
  if (runs.size() > 1) m.engine = {{"shards", engines}, {"summary", runs[0].manifest.engine.value("summary", json::object())}};

  make_directories(o.out);
  std::string text;
  for (const ResultRecord& r : all) text += to_jsonl_line(to_json(r));
  write_file_atomic(results_path(o.out), text);
  write_manifest(manifest_path(o.out), m);
  return summary;
}

}  // namespace kvgate::runner
