#include "harness/gate/candidate_kv.h"

#include <algorithm>
#include <charconv>

#include "harness/core/error.h"
#include "harness/core/jsonl.h"
#include "harness/core/sha256.h"
#include "harness/decoder/kv_flags.h"
#include "kernels/kv_format.h"
#include "kernels/kv_scales.h"

namespace kvgate::gate {

using nlohmann::json;

namespace {

constexpr const char* kKeys = "scales=FILE, skip=L:L:..., switches={...}|@FILE, params={...}|@FILE, label=NAME";

bool known_format(const std::string& f) {
  const auto& names = kernels::kv_format_names();
  return f == kernels::kTestBrokenZeroV || std::find(names.begin(), names.end(), f) != names.end();
}

std::string format_list() {
  std::string s;
  for (const std::string& n : kernels::kv_format_names()) s += (s.empty() ? "" : ", ") + n;
  return s;
}

json json_object(const std::string& value, const std::string& flag, const std::string& key, const std::string& example) {
  const bool from_file = !value.empty() && value[0] == '@';
  const std::string text = from_file ? read_file(value.substr(1)) : value;
  json j = json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object())
    throw Error(flag + " " + key + "=" + value + ": not a JSON object; e.g. " + key + "=" + example + " or " + key + "=@FILE");
  return j;
}

std::vector<int> layer_list(const std::string& value, const std::string& flag) {
  std::vector<int> out;
  std::size_t from = 0;
  while (true) {
    const std::size_t colon = value.find(':', from);
    const std::string t = value.substr(from, colon == std::string::npos ? std::string::npos : colon - from);
    int layer = 0;
    const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), layer);
    if (t.empty() || ec != std::errc() || end != t.data() + t.size())
      throw Error(flag + " skip=" + value + ": \"" + t + "\" is not a layer number: give layers as skip=0:27 (':' between "
                  "them; negative counts from the end, e.g. skip=0:-1)");
    if (std::find(out.begin(), out.end(), layer) != out.end())
      throw Error(flag + " skip=" + value + ": layer " + t + " given twice: name each layer once");
    out.push_back(layer);
    if (colon == std::string::npos) return out;
    from = colon + 1;
  }
}

void set(KvSettings& s, const std::string& key, const std::string& value, const std::string& flag) {
  const auto once = [&](bool already) {
    if (already) throw Error(flag + " " + s.format + ": " + key + "= given twice: give each setting once");
  };
  if (value.empty()) throw Error(flag + " " + key + "=: no value: " + kKeys);
  if (key == "scales") {
    once(!s.scales.empty());
    try {
      kernels::read_kv_scales_file(value);  // unreadable or not JSON: an Error naming the path, before any work
    } catch (const Error& e) {
      throw Error(flag + " " + s.format + ",scales=" + value + ": " + e.what() + " (a scales file of kvgate calibrate, or SGLang's layout)");
    }
    s.scales = value;
  } else if (key == "skip") {
    once(!s.skip_layers.empty());
    s.skip_layers = layer_list(value, flag);
  } else if (key == "switches") {
    once(!s.kernel_switches.empty());
    s.kernel_switches = json_object(value, flag, key, "{\"q_fp8\":true}");
    try {
      decoder::parse_kernel_switches(s.kernel_switches.dump());  // an unknown switch fails here
    } catch (const Error& e) {
      throw Error(flag + " " + s.format + ",switches=" + value + ": " + e.what());
    }
  } else if (key == "params") {
    once(!s.params.empty());
    s.params = json_object(value, flag, key, "{\"k_scale\":0.05}");
    for (const char* k : {"scales", "skip_layers"})
      if (s.params.contains(k))
        throw Error(flag + " params: \"" + k + "\" has its own key: use " + (std::string(k) == "scales" ? "scales=FILE" : "skip=L:L"));
  } else if (key == "label") {
    once(!s.label.empty());
    s.label = value;
  } else {
    throw Error(flag + " " + s.format + "," + key + "=" + value + ": unknown setting \"" + key + "\": the settings are " + kKeys);
  }
}

std::string joined_layers(const std::vector<int>& layers) {
  std::string s;
  for (int l : layers) s += (s.empty() ? "" : ",") + std::to_string(l);
  return s;
}

std::string joined_keys(const json& j) {
  std::string s;
  for (const auto& item : j.items()) s += (s.empty() ? "" : ",") + item.key();
  return s;
}

}  // namespace

std::vector<std::string> split_top_level(const std::string& text) {
  std::vector<std::string> out;
  std::string cur;
  int depth = 0;
  bool quoted = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '\\' && i + 1 < text.size()) {
        cur += c;
        cur += text[++i];
        continue;
      }
      if (c == '"') quoted = false;
    } else if (c == '"') {
      quoted = true;
    } else if (c == '{' || c == '[') {
      ++depth;
    } else if ((c == '}' || c == ']') && depth > 0) {
      --depth;
    } else if (c == ',' && depth == 0) {
      out.push_back(cur);
      cur.clear();
      continue;
    }
    cur += c;
  }
  out.push_back(cur);
  return out;
}

bool KvSettings::plain() const { return scales.empty() && skip_layers.empty() && params.empty() && kernel_switches.empty(); }

std::string KvSettings::default_label() const {
  std::string s = format;
  if (!scales.empty()) s += "+calibrated";
  if (!skip_layers.empty()) s += "+skip(" + joined_layers(skip_layers) + ")";
  if (!params.empty()) s += "+params(" + joined_keys(params) + ")";
  if (!kernel_switches.empty()) s += "+switches(" + joined_keys(kernel_switches) + ")";
  return s;
}

std::string KvSettings::name() const { return label.empty() ? default_label() : label; }

json KvSettings::kv_params() const {
  json p = params;
  if (!scales.empty()) p["scales"] = scales;
  if (!skip_layers.empty()) p["skip_layers"] = skip_layers;
  return p;
}

json KvSettings::record() const {
  json r = {{"format", format},
            {"scales", scales.empty() ? json(nullptr) : json(scales)},
            {"skip_layers", skip_layers},
            {"params", params},
            {"kernel_switches", kernel_switches}};
  if (!scales.empty()) r["scales_sha256"] = sha256_file(scales);
  return r;
}

std::vector<KvSettings> parse_kv_settings(const std::vector<std::string>& values, const std::string& flag) {
  std::vector<KvSettings> out;
  for (const std::string& v : values) {
    bool first = true;
    for (const std::string& token : split_top_level(v)) {
      if (token.empty())
        throw Error(flag + " " + v + ": an empty entry: give FORMAT[,KEY=VALUE...][,FORMAT...], e.g. fp8_e4m3,scales=cal.json");
      const std::size_t eq = token.find('=');
      if (eq == std::string::npos) {
        if (!known_format(token)) {
          const bool number = token.find_first_not_of("-0123456789") == std::string::npos;
          throw Error(flag + " " + token + ": unknown KV format: one of " + format_list() + " (docs/kv-formats.md)" +
                      (number ? "; layers of skip= are separated by ':' (skip=0:27), ',' starts the next configuration" : ""));
        }
        out.push_back(KvSettings{.format = token});
      } else {
        if (first)
          throw Error(flag + " " + v + ": \"" + token + "\" comes before any format: settings follow their format, e.g. "
                      "fp8_e4m3,scales=cal.json");
        set(out.back(), token.substr(0, eq), token.substr(eq + 1), flag);
      }
      first = false;
    }
  }
  return out;
}

void check_endpoint_kv(const KvSettings& s, const std::string& flag) {
  if (s.plain()) return;
  throw Error(flag + " " + s.name() + ": an endpoint's KV format is declared, not set: the server holds its scales, skipped "
              "layers and kernels (start it with them); give the format alone (label= is fine)");
}

}  // namespace kvgate::gate
