// Helpers for the driver's end-to-end tests: tasks files the fake model answers, the scores it
// must get, the kvgate binary started in the background (to be killed), journal checks.
#pragma once
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/core/jsonl.h"
#include "harness/core/trial.h"
#include "tests/fake_openai_server.h"
#include "harness/runner/work_plan.h"
#include "tests/test_util.h"

extern char** environ;

namespace kvtest {

// n trials "say/NNNN": "Say wNNNN", target wNNNN, graded exact.
inline void write_say_tasks(const std::string& path, int n, bool chat = true) {
  std::vector<kvgate::Trial> trials;
  for (int i = 0; i < n; ++i) {
    kvgate::Trial t;
    char id[32];
    std::snprintf(id, sizeof id, "say/%04d", i);
    t.id = id;
    t.task = i % 2 ? "odd" : "even";
    t.bucket = 1024 * (1 + i % 3);
    const std::string word = "w" + std::to_string(i);
    t.input = chat ? nlohmann::json{{"messages", {{{"role", "user"}, {"content", "Say " + word}}}}} : nlohmann::json{{"prompt", "Say " + word}};
    t.target = word;
    t.grader = {{"name", "exact"}};
    trials.push_back(t);
  }
  kvgate::write_tasks(path, trials);
}

// The score the fake model earns for (trial i, repeat r) with base seed `seed`.
inline double expected_score(int i, int repeat, std::uint64_t seed = 0) {
  char id[32];
  std::snprintf(id, sizeof id, "say/%04d", i);
  const std::string word = "w" + std::to_string(i);
  return fake_model_answer("Say " + word, kvgate::runner::repeat_seed(seed, id, repeat)) == word ? 1.0 : 0.0;
}

struct Journal {
  std::map<std::pair<std::string, int>, nlohmann::json> lines;
  std::size_t duplicates = 0;
  std::size_t total = 0;
};
// Reads results.jsonl line by line (a torn last line is skipped), counting duplicate pairs.
inline Journal read_journal(const std::string& path) {
  Journal j;
  kvgate::JsonlReadOptions o;
  o.allow_torn_tail = true;
  kvgate::for_each_jsonl(
      path,
      [&](nlohmann::json&& v, std::size_t) {
        ++j.total;
        auto key = std::make_pair(v["id"].get<std::string>(), v["repeat"].get<int>());
        if (j.lines.count(key)) ++j.duplicates;
        j.lines[key] = std::move(v);
      },
      o);
  return j;
}

// Every (trial, repeat) of n trials x repeats once, answered, with the fake model's score.
inline void check_complete_and_scored(const Journal& j, int n, int repeats, std::uint64_t seed = 0) {
  CHECK(j.duplicates == 0);
  CHECK(j.total == static_cast<std::size_t>(n * repeats));
  std::size_t wrong = 0, errors = 0;
  for (int i = 0; i < n; ++i)
    for (int r = 0; r < repeats; ++r) {
      char id[32];
      std::snprintf(id, sizeof id, "say/%04d", i);
      auto it = j.lines.find({id, r});
      if (it == j.lines.end()) {
        ++wrong;
        continue;
      }
      if (!it->second["error"].is_null()) ++errors;
      else if (it->second["score"].get<double>() != expected_score(i, r, seed)) ++wrong;
    }
  CHECK(errors == 0);
  CHECK(wrong == 0);
}

// The kvgate binary in the background (stdout/stderr to files), so a test can kill it.
class KvgateProcess {
 public:
  KvgateProcess(const std::vector<std::string>& args, const std::string& log_prefix) {
    std::vector<std::string> argv_s = {KVGATE_BIN};
    argv_s.insert(argv_s.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& a : argv_s) argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, (log_prefix + ".out").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&fa, 2, (log_prefix + ".err").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (posix_spawn(&pid_, argv[0], &fa, nullptr, argv.data(), environ) != 0) pid_ = -1;
    posix_spawn_file_actions_destroy(&fa);
  }
  ~KvgateProcess() {
    if (pid_ > 0 && !reaped_) {
      ::kill(pid_, SIGKILL);
      wait();
    }
  }
  bool started() const { return pid_ > 0; }
  bool running() {
    if (reaped_) return false;
    int status = 0;
    const pid_t r = ::waitpid(pid_, &status, WNOHANG);
    if (r == pid_) {
      reaped_ = true;
      status_ = status;
      return false;
    }
    return true;
  }
  void kill_hard() { send(SIGKILL); }
  void send(int sig) {
    if (!reaped_) ::kill(pid_, sig);
  }
  int wait() {  // exit code, or 128 + signal
    if (!reaped_) {
      ::waitpid(pid_, &status_, 0);
      reaped_ = true;
    }
    return WIFEXITED(status_) ? WEXITSTATUS(status_) : 128 + WTERMSIG(status_);
  }

 private:
  pid_t pid_ = -1;
  bool reaped_ = false;
  int status_ = 0;
};

// Lines in a file (0 when it does not exist).
inline std::size_t count_lines(const std::string& path) {
  FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return 0;
  std::size_t n = 0;
  for (int c; (c = std::fgetc(f)) != EOF;) n += c == '\n';
  std::fclose(f);
  return n;
}

}  // namespace kvtest
