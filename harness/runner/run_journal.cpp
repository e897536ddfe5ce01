#include "harness/runner/run_journal.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <map>
#include <unordered_map>

#include "harness/core/atomic_file.h"
#include "harness/core/error.h"
#include "harness/core/jsonl.h"
#include "harness/core/run_dir.h"

namespace kvgate::runner {

using nlohmann::json;
namespace fs = std::filesystem;

RunDirLock::RunDirLock(const std::string& dir) {
  const std::string path = dir + "/.kvgate.lock";
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) throw Error(path + ": cannot create the lock file (" + std::strerror(errno) + "): check the directory's permissions");
  if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    ::close(fd_);
    fd_ = -1;
    throw Error(dir + ": another kvgate process is running into this directory: wait for it, or pass another --out");
  }
  const std::string pid = std::to_string(::getpid()) + "\n";
  if (::ftruncate(fd_, 0) == 0) (void)!::write(fd_, pid.data(), pid.size());
}

RunDirLock::~RunDirLock() {
  if (fd_ >= 0) ::close(fd_);  // releases the lock
}

json comparable_identity(json id) {
  if (!id.is_object() || id.value("backend", "") == "openai" || id.contains("attention_numerics")) return id;
  std::string numerics = "exact";
  if (auto it = id.find("kernel_switches"); it != id.end() && it->is_object()) {
    if (auto n = it->find("numerics"); n != it->end() && n->is_string() && !n->empty()) numerics = n->get<std::string>();
    it->erase("numerics");
    if (it->empty()) id.erase("kernel_switches");
  }
  id["attention_numerics"] = numerics;
  return id;
}

std::vector<std::string> identity_differences(const json& before, const json& now, const std::set<std::string>& ignore) {
  std::vector<std::string> diffs;
  std::set<std::string> keys;
  if (before.is_object())
    for (const auto& item : before.items()) keys.insert(item.key());
  if (now.is_object())
    for (const auto& item : now.items()) keys.insert(item.key());
  for (const std::string& k : keys) {
    if (ignore.count(k)) continue;
    const json b = before.is_object() && before.contains(k) ? before[k] : json(nullptr);
    const json n = now.is_object() && now.contains(k) ? now[k] : json(nullptr);
    if (b != n) diffs.push_back(k + ": " + b.dump() + " -> " + n.dump());
  }
  return diffs;
}

std::string supersede_run(const std::string& dir) {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &tm);
  std::string target = dir + "/superseded/" + stamp;
  for (int i = 2; fs::exists(target); ++i) target = dir + "/superseded/" + stamp + "-" + std::to_string(i);
  make_directories(target);
  for (const char* name : {"run.json", "results.jsonl"}) {
    const std::string from = dir + "/" + name;
    if (!fs::exists(from)) continue;
    std::error_code ec;
    fs::rename(from, target + "/" + name, ec);
    if (ec) throw Error(from + ": cannot move it to " + target + " (" + ec.message() + ")");
  }
  return target;
}

std::size_t drop_error_lines(const std::string& path) {
  if (!fs::exists(path)) return 0;
  std::string kept;
  std::size_t dropped = 0;
  JsonlReadOptions opts;
  opts.allow_torn_tail = true;
  for_each_jsonl(
      path,
      [&](json&& v, std::size_t) {
        if (v.is_object() && v.contains("error") && !v["error"].is_null()) {
          ++dropped;
          return;
        }
        kept += to_jsonl_line(v);
      },
      opts);
  if (dropped) write_file_atomic(path, kept);
  return dropped;
}

DoneSet journal_pairs(const std::vector<ResultRecord>& records, const std::string& path, const TasksFile& tasks,
                      const Shard& shard) {
  std::unordered_map<std::string, std::size_t> index;
  for (std::size_t i = 0; i < tasks.trials.size(); ++i) index.emplace(tasks.trials[i].id, i);
  DoneSet done;
  for (std::size_t k = 0; k < records.size(); ++k) {
    const ResultRecord& r = records[k];
    auto it = index.find(r.id);
    if (it == index.end())
      throw Error(path + ": result " + std::to_string(k + 1) + " is for trial \"" + r.id + "\", which is not in " + tasks.path +
                  ": this run directory belongs to another tasks file (pass another --out, or --force-new)");
    if (!in_shard(it->second, shard))
      throw Error(path + ": result " + std::to_string(k + 1) + " (trial \"" + r.id + "\") is not in --shard " +
                  std::to_string(shard.index) + "/" + std::to_string(shard.count) + ": pass the shard this directory was run with");
    if (!done.insert({r.id, r.repeat}).second)
      throw Error(path + ": trial \"" + r.id + "\" repeat " + std::to_string(r.repeat) +
                  " appears twice: the journal was edited or written by two runs at once; delete one of the two lines");
  }
  return done;
}

}  // namespace kvgate::runner
