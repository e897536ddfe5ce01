#include "harness/gate/suite.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <set>
#include <sstream>

#include "harness/core/error.h"
#include "harness/core/json_fields.h"
#include "harness/gate/trial_gen.h"

namespace kvgate::gate {

using nlohmann::json;

namespace {

// A value of the document with its place: messages read "suite.yaml:12: tasks[0].per_bucket: ...".
class Node {
 public:
  Node(const json& v, std::string source, const LineMap& lines, std::string pointer = "", std::string path = "")
      : v_(v), source_(std::move(source)), lines_(lines), pointer_(std::move(pointer)), path_(std::move(path)) {}

  const json& value() const { return v_; }
  const std::string& path() const { return path_; }
  Node key(const std::string& k) const {
    return Node(v_.at(k), source_, lines_, pointer_ + "/" + k, path_.empty() ? k : path_ + "." + k);
  }
  Node item(std::size_t i) const {
    return Node(v_.at(i), source_, lines_, pointer_ + "/" + std::to_string(i), path_ + "[" + std::to_string(i) + "]");
  }
  bool has(const std::string& k) const { return v_.is_object() && v_.contains(k) && !v_.at(k).is_null(); }

  // "suite.yaml:12: tasks[0]" (the line when the document came from YAML).
  std::string where() const {
    auto it = lines_.find(pointer_);
    std::string w = source_;
    if (it != lines_.end()) w += ":" + std::to_string(it->second);
    return path_.empty() ? w : w + ": " + path_;
  }
  [[noreturn]] void fail(const std::string& what) const { throw Error(where() + ": " + what); }

  void expect_object() const {
    if (!v_.is_object()) fail("must be a mapping (key: value), got " + describe_json_value(v_));
  }
  void check_keys(const std::vector<std::string>& known, const std::string& what) const {
    expect_object();
    for (auto it = v_.begin(); it != v_.end(); ++it)
      if (std::find(known.begin(), known.end(), it.key()) == known.end()) {
        std::string list;
        for (const std::string& k : known) list += (list.empty() ? "" : ", ") + k;
        key(it.key()).fail("unknown key for " + what + " (known: " + list + ")");
      }
  }
  std::string str() const {
    if (!v_.is_string()) fail("must be a string, got " + describe_json_value(v_));
    return v_.get<std::string>();
  }
  std::int64_t integer(std::int64_t lo, std::int64_t hi) const {
    if (!v_.is_number_integer()) fail("must be an integer, got " + describe_json_value(v_));
    const std::int64_t x = v_.get<std::int64_t>();
    if (x < lo || x > hi) fail("must be in [" + std::to_string(lo) + ", " + std::to_string(hi) + "], got " + std::to_string(x));
    return x;
  }
  double number(double lo, double hi) const {
    if (!v_.is_number()) fail("must be a number, got " + describe_json_value(v_));
    const double x = v_.get<double>();
    if (!std::isfinite(x) || x < lo || x > hi) fail("must be in [" + fmt(lo) + ", " + fmt(hi) + "], got " + fmt(x));
    return x;
  }
  bool boolean() const {
    if (!v_.is_boolean()) fail("must be true or false, got " + describe_json_value(v_));
    return v_.get<bool>();
  }

 private:
  static std::string fmt(double x) {
    std::ostringstream os;
    os << x;
    return os.str();
  }
  const json& v_;
  std::string source_;
  const LineMap& lines_;
  std::string pointer_, path_;
};

constexpr std::int64_t kMaxLength = std::int64_t{1} << 24;  // 16M tokens

// 4096, "4k", "128K", "1m"; k = 1024.
std::int64_t length_value(const Node& n) {
  if (n.value().is_number_integer()) return n.integer(1, kMaxLength);
  if (!n.value().is_string()) n.fail("must be a token count such as 4096 or \"4k\", got " + describe_json_value(n.value()));
  std::string s = n.str();
  std::int64_t mult = 1;
  if (!s.empty() && (s.back() == 'k' || s.back() == 'K')) mult = 1024, s.pop_back();
  else if (!s.empty() && (s.back() == 'm' || s.back() == 'M')) mult = 1024 * 1024, s.pop_back();
  if (s.empty() || s.size() > 9 || !std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; }))
    n.fail("must be a token count such as 4096 or \"4k\", got \"" + n.str() + "\"");
  const std::int64_t v = std::stoll(s) * mult;
  if (v < 1 || v > kMaxLength) n.fail("must be in [1, " + std::to_string(kMaxLength) + "] tokens");
  return v;
}

LengthSpec parse_lengths(const Node& n) {
  LengthSpec l;
  if (n.value().is_array()) {
    if (n.value().empty()) n.fail("is empty: give at least one bucket, e.g. [4096, 8192], or {from: 4096, to: max}");
    for (std::size_t i = 0; i < n.value().size(); ++i) {
      const std::int64_t v = length_value(n.item(i));
      if (!l.list.empty() && v <= l.list.back()) n.item(i).fail("buckets must be ascending and distinct");
      l.list.push_back(v);
    }
    return l;
  }
  if (!n.value().is_object())
    n.fail("must be a list of buckets, e.g. [4096, 8192], or a ladder {from: 4096, to: max}, got " + describe_json_value(n.value()));
  n.check_keys({"from", "to"}, "lengths (a ladder doubling from `from` up to `to`)");
  if (!n.has("from")) n.fail("the ladder needs `from` (the smallest bucket, e.g. 4096)");
  l.from = length_value(n.key("from"));
  if (n.has("to")) {
    const Node to = n.key("to");
    if (to.value().is_string() && to.str() == "max") l.to = 0;
    else l.to = length_value(to);
    if (l.to != 0 && l.to < l.from) to.fail("must be at least `from` (" + std::to_string(l.from) + ")");
  }
  return l;
}

SamplingParams parse_sampling(const Node& n, SamplingParams s) {
  n.check_keys({"temperature", "top_p", "top_k", "seed", "max_tokens", "stop"}, "sampling");
  if (n.has("temperature")) s.temperature = n.key("temperature").number(0.0, 100.0);
  if (n.has("top_p")) {
    s.top_p = n.key("top_p").number(0.0, 1.0);
    if (s.top_p <= 0) n.key("top_p").fail("must be in (0, 1]");
  }
  if (n.has("top_k")) s.top_k = static_cast<int>(n.key("top_k").integer(1, 1 << 20));
  if (n.has("seed")) s.seed = static_cast<std::uint64_t>(n.key("seed").integer(0, INT64_MAX));
  if (n.has("max_tokens")) s.max_tokens = static_cast<int>(n.key("max_tokens").integer(1, 1 << 20));
  if (n.has("stop")) {
    const Node st = n.key("stop");
    if (!st.value().is_array()) st.fail("must be a list of strings");
    s.stop.clear();
    for (std::size_t i = 0; i < st.value().size(); ++i) s.stop.push_back(st.item(i).str());
  }
  return s;
}

struct Defaults {
  int per_bucket = 10;
  int repeats = 1;
  SamplingParams sampling{};
};

const std::vector<std::string> kCommonTaskKeys = {"task", "lengths", "per_bucket", "repeats", "sampling", "gate", "margin", "optional"};

TaskSpec parse_task(const Node& n, const Defaults& d) {
  n.expect_object();
  if (!n.has("task")) n.fail("`task` missing: one of niah, multicode, mrcr, gsm8k, golden");
  TaskSpec t;
  t.task = n.key("task").str();
  t.where = n.where();
  std::vector<std::string> known = kCommonTaskKeys;
  const std::vector<std::string>& gen = generator_keys(t.task, n.key("task").where());
  known.insert(known.end(), gen.begin(), gen.end());
  n.check_keys(known, "a " + t.task + " task");

  const bool long_context = is_long_context(t.task);
  if (n.has("lengths")) {
    if (!long_context) n.key("lengths").fail(t.task + " has no length buckets: drop `lengths`");
    t.lengths = parse_lengths(n.key("lengths"));
  } else if (long_context) {
    n.fail("`lengths` missing: a list such as [4096, 8192] or a ladder {from: 4096, to: max} (max: the model's context)");
  }
  if (n.has("per_bucket")) {
    if (!long_context) n.key("per_bucket").fail(t.task + " has no length buckets: use its own count (gsm8k: limit)");
    t.per_bucket = static_cast<int>(n.key("per_bucket").integer(1, 1000000));
  } else if (long_context) {
    t.per_bucket = d.per_bucket;
  }
  t.repeats = n.has("repeats") ? static_cast<int>(n.key("repeats").integer(1, 100000)) : d.repeats;
  t.sampling = n.has("sampling") ? parse_sampling(n.key("sampling"), d.sampling) : d.sampling;
  if (t.repeats > 1 && t.sampling.temperature == 0.0)
    n.fail("repeats " + std::to_string(t.repeats) + " at temperature 0 repeat the same greedy answer: set sampling.temperature (and a seed) or repeats: 1");
  if (t.task == "golden" && t.sampling.temperature != 0.0)
    n.fail("golden prompts run at temperature 0 (structural breaks are read from greedy outputs): drop sampling.temperature");
  if (n.has("gate")) t.gate = n.key("gate").boolean();
  if (n.has("margin")) {
    t.margin = n.key("margin").number(0.0, 1.0);
    if (*t.margin <= 0.0) n.key("margin").fail("must be in (0, 1]");
  }
  if (n.has("optional")) t.optional = n.key("optional").boolean();
  for (const std::string& k : gen)
    if (n.has(k)) t.options[k] = n.value().at(k);
  check_generator_options(t);
  return t;
}

}  // namespace

Suite parse_suite(const json& doc, const std::string& source, const LineMap& lines) {
  const Node root(doc, source, lines);
  root.check_keys({"suite", "description", "seed", "margin", "alpha", "max_error_rate", "auc_axis", "errors", "history",
                   "defaults", "tasks"},
                  "a suite");
  Suite s;
  s.source = source;
  s.document = doc;
  if (!root.has("suite")) root.fail("`suite` missing: the suite's name, e.g. suite: my-gate");
  s.name = root.key("suite").str();
  if (s.name.empty()) root.key("suite").fail("must not be empty");
  if (root.has("description")) s.description = root.key("description").str();
  if (root.has("seed")) s.seed = static_cast<std::uint64_t>(root.key("seed").integer(0, INT64_MAX));
  compare::CompareOptions& c = s.compare;
  if (root.has("margin")) c.margin = root.key("margin").number(0.0, 1.0);
  if (c.margin <= 0.0) root.key("margin").fail("must be in (0, 1]");
  if (root.has("alpha")) c.alpha = root.key("alpha").number(1e-9, 0.5);
  if (root.has("max_error_rate")) c.max_error_rate = root.key("max_error_rate").number(0.0, 1.0);
  if (root.has("auc_axis")) {
    const std::string a = root.key("auc_axis").str();
    if (a != "linear" && a != "log2") root.key("auc_axis").fail("must be linear or log2, got \"" + a + "\"");
    c.auc_axis = a == "log2" ? stats::AucAxis::log2 : stats::AucAxis::linear;
  }
  if (root.has("errors")) {
    const std::string e = root.key("errors").str();
    if (e != "fail" && e != "exclude") root.key("errors").fail("must be fail or exclude, got \"" + e + "\"");
    c.errors = e == "exclude" ? compare::ErrorPolicy::exclude : compare::ErrorPolicy::fail;
  }
  if (root.has("history")) s.history = root.key("history").boolean();

  Defaults d;
  if (root.has("defaults")) {
    const Node dn = root.key("defaults");
    dn.check_keys({"per_bucket", "repeats", "sampling"}, "defaults");
    if (dn.has("per_bucket")) d.per_bucket = static_cast<int>(dn.key("per_bucket").integer(1, 1000000));
    if (dn.has("repeats")) d.repeats = static_cast<int>(dn.key("repeats").integer(1, 100000));
    if (dn.has("sampling")) d.sampling = parse_sampling(dn.key("sampling"), d.sampling);
  }

  if (!root.has("tasks")) root.fail("`tasks` missing: a list such as [{task: niah, lengths: [4096]}]");
  const Node tasks = root.key("tasks");
  if (!tasks.value().is_array() || tasks.value().empty()) tasks.fail("must be a non-empty list of tasks");
  std::set<std::string> seen;
  for (std::size_t i = 0; i < tasks.value().size(); ++i) {
    TaskSpec t = parse_task(tasks.item(i), d);
    if (!seen.insert(t.task).second)
      tasks.item(i).fail("task " + t.task + " appears twice: compare pairs trials by task, so give each task once");
    s.tasks.push_back(std::move(t));
  }
  return s;
}

}  // namespace kvgate::gate
