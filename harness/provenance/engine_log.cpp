#include "harness/provenance/engine_log.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <map>
#include <optional>

#include "datasets/common/pcre_regex.h"
#include "harness/core/error.h"
#include "harness/core/sha256.h"

namespace kvgate::provenance {

std::string_view engine_log_patterns_text();  // generated from engine_log_patterns.json

namespace {

using nlohmann::json;

struct Capture {
  int group = 1;  // 0: `templ` joins several groups
  std::string field, type = "string", map, templ;
};

struct Pattern {
  std::string id, engine, needle;
  Regex regex;
  bool take_last = false;
  std::vector<Capture> captures;
  std::optional<json> value;  // a fixed value when the line is present
  std::string value_field;
  std::size_t priority = 0;   // index in the table: lower wins
};

struct Table {
  json source;
  std::vector<Pattern> patterns;
  std::map<std::string, std::map<std::string, std::string>> normalize;
};

// "b{1}-{2}": the groups a template names, in order.
std::vector<int> template_groups(const std::string& templ) {
  std::vector<int> out;
  for (std::size_t i = templ.find('{'); i != std::string::npos; i = templ.find('{', i + 1))
    out.push_back(std::atoi(templ.c_str() + i + 1));
  return out;
}

// The template with each {N} replaced by group N; "" when a group it names did not take part.
std::string fill_template(const std::string& templ, const RegexMatch& m) {
  std::string out;
  for (std::size_t i = 0; i < templ.size(); ++i) {
    const std::size_t close = templ[i] == '{' ? templ.find('}', i) : std::string::npos;
    if (close == std::string::npos) {
      out += templ[i];
      continue;
    }
    const std::string& g = m.groups[static_cast<std::size_t>(std::atoi(templ.c_str() + i + 1) - 1)];
    if (g.empty()) return "";
    out += g;
    i = close;
  }
  return out;
}

// The table is compiled in, so a bad entry is a bug in kvgate (exit 4), found by any test.
const Table& table() {
  static const Table t = [] {
    Table out;
    out.source = json::parse(engine_log_patterns_text());
    for (const auto& [name, m] : out.source.at("normalize").items())
      for (const auto& [from, to] : m.items()) out.normalize[name][from] = to.get<std::string>();
    std::size_t i = 0;
    for (const json& p : out.source.at("patterns")) {
      Pattern pat{.id = p.at("id"), .engine = p.at("engine"), .needle = p.at("needle"),
                  .regex = Regex(p.at("regex").get<std::string>()), .take_last = p.value("take", "first") == "last",
                  .captures = {}, .value = std::nullopt, .value_field = "", .priority = i++};
      if (p.contains("value")) {
        pat.value = p.at("value");
        pat.value_field = p.at("field");
      }
      for (const json& c : p.value("captures", json::array()))
        pat.captures.push_back({.group = c.value("group", 0), .field = c.at("field"), .type = c.value("type", "string"),
                                .map = c.value("map", ""), .templ = c.value("template", "")});
      for (const Capture& c : pat.captures) {
        std::vector<int> groups = {c.group};
        if (!c.templ.empty()) groups = template_groups(c.templ);
        for (int g : groups)
          if (g < 1 || g > pat.regex.group_count())
            throw Error("engine_log_patterns.json: " + pat.id + ": group " + std::to_string(g) + " does not exist", 4);
      }
      out.patterns.push_back(std::move(pat));
    }
    return out;
  }();
  return t;
}

// vLLM colors its log on a terminal: drop ESC[...m so patterns see the text.
std::string_view strip_ansi(std::string_view line, std::string& buffer) {
  if (line.find('\x1b') == std::string_view::npos) return line;
  buffer.clear();
  for (std::size_t i = 0; i < line.size(); ++i) {
    if (line[i] == '\x1b' && i + 1 < line.size() && line[i + 1] == '[') {
      std::size_t j = i + 2;
      while (j < line.size() && (std::isdigit(static_cast<unsigned char>(line[j])) || line[j] == ';')) ++j;
      if (j < line.size() && line[j] == 'm') {
        i = j;
        continue;
      }
    }
    buffer += line[i];
  }
  return buffer;
}

// A captured text as the field's type; nullopt when it does not parse (the line is then ignored).
// Valid UTF-8 (a log may hold cut-off characters): invalid bytes become U+FFFD, so every writer can dump it.
std::string valid_utf8(const std::string& s) {
  return json::parse(json(s).dump(-1, ' ', false, json::error_handler_t::replace)).get<std::string>();
}

std::optional<json> convert(std::string raw, const Capture& c, const Table& t) {
  if (c.type == "integer" || c.type == "number") {
    raw.erase(std::remove(raw.begin(), raw.end(), ','), raw.end());
    if (raw.empty()) return std::nullopt;
    char* end = nullptr;
    if (c.type == "integer") {
      const long long v = std::strtoll(raw.c_str(), &end, 10);
      if (*end != '\0') return std::nullopt;
      return json(v);
    }
    const double v = std::strtod(raw.c_str(), &end);
    if (*end != '\0') return std::nullopt;
    return json(v);
  }
  if (raw == "None") return json(nullptr);  // Python's repr of an unset argument
  if (raw.size() >= 2 && (raw.front() == '\'' || raw.front() == '"') && raw.back() == raw.front())
    raw = raw.substr(1, raw.size() - 2);
  if (c.map == "underscores_to_spaces") {
    std::replace(raw.begin(), raw.end(), '_', ' ');
  } else if (!c.map.empty()) {
    const auto m = t.normalize.find(c.map);
    if (m != t.normalize.end())
      if (const auto it = m->second.find(raw); it != m->second.end()) return json(it->second);
  }
  return json(raw);
}

struct Kept {
  json value;
  std::size_t priority = 0, line = 0;
  std::string pattern, raw, engine;
};

class Collector {
 public:
  explicit Collector(const Table& t) : t_(t) {}

  void line(std::string_view text, std::size_t number) {
    for (const Pattern& p : t_.patterns) {
      if (text.find(p.needle) == std::string_view::npos) continue;
      RegexMatch m;
      if (!p.regex.search(text, m)) continue;
      ++matches_[p.engine][p.id];
      if (p.value) offer(p.value_field, *p.value, "", p, number);
      for (const Capture& c : p.captures) {
        const std::string raw =
            valid_utf8(c.templ.empty() ? m.groups[static_cast<std::size_t>(c.group - 1)] : fill_template(c.templ, m));
        if (raw.empty()) continue;  // an optional group that did not take part
        if (std::optional<json> v = convert(raw, c, t_)) offer(c.field, *v, raw, p, number);
      }
    }
  }

  json result(const std::string& name) const {
    json out = {{"engine", nullptr}, {"facts", json::object()}, {"evidence", json::object()},
                {"notes", json::array()}, {"warnings", json::array()}};
    std::vector<std::pair<std::size_t, std::string>> engines;  // formats matched, engine
    for (const auto& [engine, ids] : matches_)
      if (engine != "any") engines.emplace_back(ids.size(), engine);
    std::sort(engines.rbegin(), engines.rend());
    std::string engine;
    if (!engines.empty() && (engines.size() == 1 || engines[0].first > engines[1].first)) engine = engines[0].second;
    if (engines.size() > 1) {
      std::string list;
      for (const auto& [n, e] : engines) list += (list.empty() ? "" : ", ") + e + " (" + std::to_string(n) + " line formats)";
      out["warnings"].push_back(name + ": the log matches several engines' formats: " + list +
                                (engine.empty() ? "; no facts taken: pass one server's log"
                                                : "; facts taken from " + engine + "'s lines only"));
    }
    if (!engine.empty()) out["engine"] = engine;
    for (const auto& [field, k] : kept_) {
      if (k.engine != "any" && k.engine != engine) continue;
      out["facts"][field] = k.value;
      json ev = {{"line", k.line}, {"pattern", k.pattern}};  // raw is valid UTF-8 (line())
      if (!k.raw.empty() && json(k.raw) != k.value) ev["raw"] = k.raw;
      out["evidence"][field] = ev;
    }
    for (const std::string& n : notes_) out["notes"].push_back(n);
    if (out["facts"].empty())
      out["warnings"].push_back(name + ": no line of a vLLM, SGLang or TensorRT-LLM startup log was recognized, so the "
                                "attention backend, KV cache size and engine version stay unknown; pass the server's "
                                "own startup log (docs/engine-log.md lists the lines kvgate reads)");
    return out;
  }

 private:
  void offer(const std::string& field, const json& value, const std::string& raw, const Pattern& p, std::size_t line) {
    Kept next{.value = value, .priority = p.priority, .line = line, .pattern = p.id, .raw = raw, .engine = p.engine};
    auto it = kept_.find(field);
    if (it == kept_.end()) {
      kept_.emplace(field, std::move(next));
      return;
    }
    Kept& cur = it->second;
    const bool differs = cur.value != value;
    if (p.priority < cur.priority || (p.priority == cur.priority && p.take_last)) {
      if (differs && p.priority < cur.priority) note(field, next, cur);
      cur = std::move(next);
    } else if (differs) {
      note(field, cur, next);
    }
  }
  void note(const std::string& field, const Kept& kept, const Kept& other) {
    if (notes_.size() >= 20) return;
    notes_.push_back(field + ": kept " + kept.value.dump() + " (line " + std::to_string(kept.line) + ", " + kept.pattern +
                     "); line " + std::to_string(other.line) + " says " + other.value.dump() + " (" + other.pattern + ")");
  }

  const Table& t_;
  std::map<std::string, std::map<std::string, int>> matches_;  // engine -> pattern id -> lines
  std::map<std::string, Kept> kept_;
  std::vector<std::string> notes_;
};

}  // namespace

const json& engine_log_pattern_table() { return table().source; }

const std::vector<std::string>& known_engines() {
  static const std::vector<std::string> engines = {"vllm", "sglang", "tensorrt_llm", "llama.cpp"};
  return engines;
}

std::string thousands(long long v) {
  std::string digits = std::to_string(v < 0 ? -v : v), out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return (v < 0 ? "-" : "") + out;
}

std::string facts_line(const json& log) {
  const json facts = log.is_object() ? log.value("facts", json::object()) : json::object();
  const auto str = [&](const char* k) -> std::string {
    if (!facts.contains(k) || facts[k].is_null()) return "";
    return facts[k].is_string() ? facts[k].get<std::string>() : facts[k].dump();
  };
  std::vector<std::string> parts;
  std::string head = log.is_object() && log.contains("engine") && log["engine"].is_string() ? log["engine"].get<std::string>() : "";
  if (!str("version").empty()) head += (head.empty() ? "version " : " ") + str("version");
  if (!head.empty()) parts.push_back(head);
  if (!str("attention_backend").empty())
    parts.push_back("attention " + str("attention_backend") +
                    (str("flash_attn_version").empty() ? "" : " (FlashAttention " + str("flash_attn_version") + ")"));
  std::string kv = str("kv_cache_dtype");
  if (!str("kv_cache_dtype_allocated").empty()) kv += (kv.empty() ? "" : " ") + std::string("[") + str("kv_cache_dtype_allocated") + "]";
  if (!str("kv_scales").empty()) kv += (kv.empty() ? "" : " ") + std::string("(scales ") + str("kv_scales") + ")";
  if (!str("type_k").empty() || !str("type_v").empty())  // llama.cpp: K and V have their own types
    kv += (kv.empty() ? "" : " ") + std::string("K ") + (str("type_k").empty() ? "?" : str("type_k")) + " V " +
          (str("type_v").empty() ? "?" : str("type_v"));
  if (!kv.empty()) parts.push_back("KV " + kv);
  if (!str("flash_attn").empty()) parts.push_back("flash attention " + str("flash_attn"));
  if (facts.contains("n_ctx_per_seq") && facts["n_ctx_per_seq"].is_number_integer())
    parts.push_back("context " + thousands(facts["n_ctx_per_seq"].get<long long>()) + " tokens per sequence" +
                    (str("slots").empty() ? "" : " (" + str("slots") + (str("slots") == "1" ? " slot)" : " slots)")));
  if (facts.contains("kv_cache_tokens") && facts["kv_cache_tokens"].is_number_integer())
    parts.push_back("KV cache " + thousands(facts["kv_cache_tokens"].get<long long>()) + " tokens");
  if (!str("max_concurrency").empty()) parts.push_back("max concurrency " + str("max_concurrency"));
  if (!str("gpu").empty()) parts.push_back("GPU " + str("gpu"));
  std::string out;
  for (const std::string& p : parts) out += (out.empty() ? "" : ", ") + p;
  return out;
}

json parse_engine_log_text(std::string_view text, const std::string& name) {
  Collector c(table());
  std::string buffer;
  std::size_t number = 0, pos = 0;
  while (pos < text.size()) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    c.line(strip_ansi(line, buffer), ++number);
    pos = end + 1;
  }
  json out = c.result(name);
  out["path"] = name;
  out["bytes"] = text.size();
  out["lines"] = number;
  return out;
}

json parse_engine_log(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("--engine-log " + path + ": cannot read it; pass the server's startup log (e.g. `vllm serve ... 2>&1 | tee vllm.log`)");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) throw Error("--engine-log " + path + ": read error");
  json out = parse_engine_log_text(text, path);
  out["sha256"] = sha256_hex(text);
  return out;
}

}  // namespace kvgate::provenance
