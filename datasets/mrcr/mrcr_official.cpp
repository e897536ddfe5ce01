#include "datasets/mrcr/mrcr_official.h"

#include <algorithm>
#include <cstdio>
#include <fstream>

#include "harness/core/error.h"
#include "harness/core/json_fields.h"
#include "datasets/mrcr/mrcr_chat.h"

namespace kvgate::mrcr {

using nlohmann::json;

namespace {

std::string parse_error_text(const json::parse_error& e) {
  const std::string what = e.what();  // "[json.exception.parse_error.101] parse error at ..."
  const auto pos = what.find("] ");
  return pos == std::string::npos ? what : what.substr(pos + 2);
}

std::string pad4(std::int64_t n) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%04lld", static_cast<long long>(n));
  return buf;
}

}  // namespace

OfficialRow parse_official_row(const json& row, const std::string& where, std::int64_t index) {
  FieldReader f(row, where);
  OfficialRow r;
  r.index = index;
  const std::string prompt = f.str("prompt");
  try {
    r.messages = json::parse(prompt);
  } catch (const json::parse_error& e) {
    f.fail("prompt", "is not valid JSON (" + parse_error_text(e) +
                         "): it must be the JSON text of the messages list; re-export the row without changing it");
  }
  if (!r.messages.is_array() || r.messages.empty())
    f.fail("prompt", "must hold a non-empty JSON list of messages, got " + describe_json_value(r.messages));
  for (std::size_t i = 0; i < r.messages.size(); ++i) {
    const json& m = r.messages[i];
    const std::string at = "message " + std::to_string(i);
    if (!m.is_object()) f.fail("prompt", at + " is not an object: " + describe_json_value(m));
    if (!m.contains("role") || !m["role"].is_string()) f.fail("prompt", at + " has no string \"role\"");
    if (!m.contains("content") || !m["content"].is_string()) f.fail("prompt", at + " has no string \"content\"");
  }
  r.answer = f.str("answer");
  r.prefix = f.str("random_string_to_prepend");
  if (r.prefix.empty()) f.fail("random_string_to_prepend", "is empty: the grader needs the prefix the answer starts with");
  r.n_needles = f.integer("n_needles");
  if (r.n_needles < 1) f.fail("n_needles", "must be >= 1, got " + std::to_string(r.n_needles));
  r.desired_msg_index = f.integer("desired_msg_index");
  if (r.desired_msg_index < 0 || r.desired_msg_index >= static_cast<std::int64_t>(r.messages.size()))
    f.fail("desired_msg_index", "is " + std::to_string(r.desired_msg_index) + ", outside the " +
                                    std::to_string(r.messages.size()) + " messages of \"prompt\"");
  r.total_messages = f.integer("total_messages");
  if (r.total_messages < 0) f.fail("total_messages", "must be >= 0");
  r.n_chars = f.integer("n_chars");
  if (r.n_chars < 0) f.fail("n_chars", "must be >= 0");
  if (f.has_value("date_added")) {
    const json& d = f.any("date_added");
    r.date_added = d.is_string() ? d.get<std::string>() : d.dump();
  }
  return r;
}

void for_each_official_row(const std::string& path, const std::function<bool(OfficialRow&&)>& fn) {
  // Streamed line by line: the full export is gigabytes.
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(path + ": cannot open: check the path of the openai/mrcr JSONL export");
  std::string line;
  std::int64_t line_no = 0, index = 0;
  while (std::getline(in, line)) {
    ++line_no;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const std::string where = path + ":" + std::to_string(line_no);
    json value;
    try {
      value = json::parse(line);
    } catch (const json::parse_error& e) {
      throw Error(where + ": not valid JSON (" + parse_error_text(e) + "): each line must be one row object");
    }
    if (!fn(parse_official_row(value, where, index++))) return;
  }
  if (in.bad()) throw Error(path + ": read failed");
  if (index == 0) throw Error(path + ": no rows: expected one openai/mrcr row object a line");
}

std::optional<std::int64_t> bin_upper_edge(std::int64_t tokens) {
  if (tokens < kBinEdges.front() || tokens > kBinEdges.back()) return std::nullopt;
  for (std::size_t i = 1; i < kBinEdges.size(); ++i)  // [4096, 8192], then (lo, hi]
    if (tokens <= kBinEdges[i]) return kBinEdges[i];
  return std::nullopt;
}

std::int64_t bin_tokens(const TokenCounter& counter, const json& messages, const std::string& answer) {
  std::int64_t n = static_cast<std::int64_t>(counter.count_text(answer));
  for (const json& m : messages)
    if (m.contains("content") && m["content"].is_string())
      n += static_cast<std::int64_t>(counter.count_text(m["content"].get_ref<const std::string&>()));
  return n;
}

OfficialTrialBuilder::OfficialTrialBuilder(OfficialTrialOptions options) : o_(std::move(options)) {
  if (!o_.counter) throw Error("official MRCR rows: no token counter given", kExitInternal);
  for (std::int64_t b : o_.buckets)
    if (std::find(kBinEdges.begin() + 1, kBinEdges.end(), b) == kBinEdges.end()) {
      std::string edges;
      for (std::size_t i = 1; i < kBinEdges.size(); ++i) edges += (i > 1 ? "," : "") + std::to_string(kBinEdges[i]);
      throw Error("--lengths: " + std::to_string(b) + " is not the upper edge of an official MRCR bin (" + edges +
                  "; 8k..1m also work)");
    }
}

bool OfficialTrialBuilder::add(const OfficialRow& row) {
  ++summary_.rows;
  auto wanted_bucket = [&](std::int64_t b) {
    return o_.buckets.empty() || std::find(o_.buckets.begin(), o_.buckets.end(), b) != o_.buckets.end();
  };
  auto full = [&](std::int64_t b) { return o_.per_bucket > 0 && summary_.per_bucket[b] >= o_.per_bucket; };
  auto all_full = [&] {
    if (o_.per_bucket <= 0 || o_.buckets.empty()) return false;
    return std::all_of(o_.buckets.begin(), o_.buckets.end(), full);
  };
  if (!o_.needles.empty() &&
      std::find(o_.needles.begin(), o_.needles.end(), static_cast<int>(row.n_needles)) == o_.needles.end()) {
    ++summary_.not_selected;
    return true;
  }
  const std::int64_t tokens = bin_tokens(*o_.counter, row.messages, row.answer);
  const std::optional<std::int64_t> bin = bin_upper_edge(tokens);
  if (!bin) {
    ++summary_.out_of_bins;
    return true;
  }
  if (!wanted_bucket(*bin) || full(*bin)) {
    ++summary_.not_selected;
    return !all_full();
  }
  Trial t;
  t.id = "mrcr/" + std::to_string(*bin) + "/" + pad4(row.index);
  t.task = "mrcr";
  t.bucket = *bin;
  const json messages = o_.merge_user_turns ? merge_consecutive_user_turns(row.messages) : row.messages;
  t.input = {{"messages", messages}};
  t.target = row.answer;
  t.grader = {{"name", "mrcr"}, {"prefix", row.prefix}};
  t.meta = {{"source", "openai/mrcr"},
            {"origin", o_.origin},
            {"row", row.index},
            {"n_needles", row.n_needles},
            {"desired_msg_index", row.desired_msg_index},  // the row's, in its own messages
            {"desired_msg_index_sent",
             o_.merge_user_turns ? merged_message_index(row.messages, row.desired_msg_index) : row.desired_msg_index},
            {"total_messages", row.total_messages},
            {"n_chars", row.n_chars},
            {"bin_tokens", tokens},
            {"prompt_tokens", o_.counter->count_chat(messages)},
            {"answer_tokens", o_.counter->count_text(row.answer)},
            {"token_count_source", o_.counter->source()},
            {"exact_tokens", o_.counter->exact()},
            {"merged_user_turns", o_.merge_user_turns}};
  if (row.date_added) t.meta["date_added"] = *row.date_added;
  trials_.push_back(std::move(t));
  ++summary_.per_bucket[*bin];
  return !all_full();
}

}  // namespace kvgate::mrcr
