// tokenizer.json + tokenizer_config.json -> Tokenizer::Impl, with an error naming the file and the
// field for anything malformed or unsupported.
#include <algorithm>

#include "harness/core/error.h"
#include "harness/tokenizer/byte_level.h"
#include "harness/tokenizer/tokenizer_json_sax.h"
#include "harness/tokenizer/tokenizer_impl.h"

namespace kvgate {

namespace {
using nlohmann::json;

bool flag(const json& j, const char* key, bool fallback, const std::string& where) {
  if (!j.contains(key) || j[key].is_null()) return fallback;
  if (!j[key].is_boolean()) throw Error(where + ": added token field \"" + key + "\" must be true or false");
  return j[key].get<bool>();
}

void parse_added_tokens(const json& root, Tokenizer::Impl& t, const std::string& where) {
  if (!root.contains("added_tokens") || root["added_tokens"].is_null()) return;
  const json& list = root["added_tokens"];
  if (!list.is_array()) throw Error(where + ": \"added_tokens\" must be an array");
  for (const json& a : list) {
    if (!a.is_object() || !a.contains("id") || !a["id"].is_number_integer() || !a.contains("content") ||
        !a["content"].is_string())
      throw Error(where + ": each added token needs an integer \"id\" and a string \"content\"");
    const std::int64_t id = a["id"].get<std::int64_t>();
    if (id < 0 || id > (1 << 30)) throw Error(where + ": added token id " + std::to_string(id) + " is out of range");
    tok::AddedToken tk;
    tk.id = static_cast<std::int32_t>(id);
    tk.content = a["content"].get<std::string>();
    tk.special = flag(a, "special", false, where);
    tk.lstrip = flag(a, "lstrip", false, where);
    tk.rstrip = flag(a, "rstrip", false, where);
    tk.normalized = flag(a, "normalized", !tk.special, where);
    tk.single_word = flag(a, "single_word", false, where);
    if (tk.content.empty()) continue;
    if (t.added_by_content.count(tk.content)) continue;  // HF ignores repeats
    t.added_by_content[tk.content] = tk.id;
    t.added_by_id[tk.id] = t.added.size();
    t.added.push_back(std::move(tk));
  }
  // HF's matching order: special tokens first, then the others, each in file order.
  std::vector<tok::AddedToken> raw, norm;
  std::vector<std::string> raw_pat, norm_pat;
  for (int pass = 0; pass < 2; ++pass)
    for (const auto& tk : t.added) {
      if (tk.special != (pass == 0)) continue;
      if (tk.normalized) {
        std::string scratch;
        norm_pat.emplace_back(t.normalizer.apply(tk.content, scratch));
        norm.push_back(tk);
      } else {
        raw_pat.push_back(tk.content);
        raw.push_back(tk);
      }
    }
  t.raw_matcher = tok::AddedTokenMatcher(std::move(raw), std::move(raw_pat));
  t.normalized_matcher = tok::AddedTokenMatcher(std::move(norm), std::move(norm_pat));
}

// The ids a single-sequence post-processor puts before / after the text.
void parse_post_processor(const json& p, Tokenizer::Impl& t, const std::string& where) {
  if (p.is_null()) return;
  if (!p.is_object() || !p.contains("type") || !p["type"].is_string())
    throw Error(where + ": \"post_processor\" must be null or an object with a \"type\"");
  const std::string type = p["type"].get<std::string>();
  if (type == "ByteLevel") return;  // offsets only
  if (type == "Sequence") {
    if (!p.contains("processors") || !p["processors"].is_array())
      throw Error(where + ": post_processor Sequence needs a \"processors\" array");
    for (const json& inner : p["processors"]) parse_post_processor(inner, t, where);
    return;
  }
  std::vector<std::int32_t> prefix, suffix;
  if (type == "TemplateProcessing") {
    if (!p.contains("single") || !p["single"].is_array()) throw Error(where + ": TemplateProcessing needs a \"single\" array");
    const json specials = p.contains("special_tokens") ? p["special_tokens"] : json::object();
    bool seen_sequence = false;
    for (const json& piece : p["single"]) {
      if (piece.contains("Sequence")) {
        if (seen_sequence) throw Error(where + ": TemplateProcessing \"single\" has two sequences");
        seen_sequence = true;
        continue;
      }
      if (!piece.contains("SpecialToken") || !piece["SpecialToken"].contains("id") || !piece["SpecialToken"]["id"].is_string())
        throw Error(where + ": TemplateProcessing pieces must be {\"SpecialToken\": {\"id\": ...}} or {\"Sequence\": ...}");
      const std::string name = piece["SpecialToken"]["id"].get<std::string>();
      if (!specials.is_object() || !specials.contains(name) || !specials[name].contains("ids") || !specials[name]["ids"].is_array())
        throw Error(where + ": TemplateProcessing special token \"" + name + "\" has no ids in \"special_tokens\"");
      for (const json& id : specials[name]["ids"]) {
        if (!id.is_number_integer()) throw Error(where + ": TemplateProcessing ids must be integers");
        (seen_sequence ? suffix : prefix).push_back(id.get<std::int32_t>());
      }
    }
    if (!seen_sequence) throw Error(where + ": TemplateProcessing \"single\" has no sequence");
  } else if (type == "RobertaProcessing" || type == "BertProcessing") {
    for (const char* key : {"cls", "sep"})
      if (!p.contains(key) || !p[key].is_array() || p[key].size() != 2 || !p[key][1].is_number_integer())
        throw Error(where + ": " + type + " needs \"" + key + "\": [token, id]");
    prefix.push_back(p["cls"][1].get<std::int32_t>());
    suffix.push_back(p["sep"][1].get<std::int32_t>());
  } else {
    throw Error(where + ": post_processor \"" + type + "\" is not supported (TemplateProcessing, ByteLevel, "
                "RobertaProcessing, BertProcessing and Sequence are)");
  }
  // A later processor wraps the result of the earlier ones.
  t.prefix_ids.insert(t.prefix_ids.begin(), prefix.begin(), prefix.end());
  t.suffix_ids.insert(t.suffix_ids.end(), suffix.begin(), suffix.end());
}

void parse_decoder(const json& d, Tokenizer::Impl& t, const std::string& where) {
  if (d.is_null()) {
    t.decoder = Tokenizer::Impl::Decoder::JoinWithSpaces;  // HF without a decoder
    return;
  }
  if (!d.is_object() || !d.contains("type") || !d["type"].is_string())
    throw Error(where + ": \"decoder\" must be null or an object with a \"type\"");
  const std::string type = d["type"].get<std::string>();
  if (type == "ByteLevel") return;
  if (type == "Sequence" && d.contains("decoders") && d["decoders"].is_array()) {
    for (const json& inner : d["decoders"]) {
      if (!inner.is_object() || inner.value("type", "") != "ByteLevel")
        throw Error(where + ": decoder Sequence may only hold ByteLevel decoders for a byte-level BPE tokenizer");
    }
    return;
  }
  throw Error(where + ": decoder \"" + type + "\" is not supported (kvgate reads byte-level BPE tokenizers, whose decoder is ByteLevel)");
}

SpecialToken special_from_config(const json& cfg, const char* key, const Tokenizer::Impl& t, const std::string& where) {
  SpecialToken s;
  if (!cfg.contains(key) || cfg[key].is_null()) return s;
  const json& v = cfg[key];
  if (v.is_string()) s.text = v.get<std::string>();
  else if (v.is_object() && v.contains("content") && v["content"].is_string()) s.text = v["content"].get<std::string>();
  else throw Error(where + ": \"" + key + "\" must be a string, null or {\"content\": ...}");
  if (const auto it = t.added_by_content.find(s.text); it != t.added_by_content.end()) s.id = it->second;
  else if (const auto id = t.model->token_to_id(s.text)) s.id = *id;
  return s;
}

void parse_config(const json& cfg, std::string_view chat_template_file, Tokenizer::Impl& t, const std::string& where) {
  if (!cfg.is_object()) throw Error(where + ": must be a JSON object");
  t.specials.bos = special_from_config(cfg, "bos_token", t, where);
  t.specials.eos = special_from_config(cfg, "eos_token", t, where);
  t.specials.pad = special_from_config(cfg, "pad_token", t, where);
  t.specials.unk = special_from_config(cfg, "unk_token", t, where);
  // What transformers passes to templates: its special_tokens_map.
  nlohmann::ordered_json vars = nlohmann::ordered_json::object();
  for (const char* key : {"bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token", "mask_token"}) {
    const SpecialToken s = special_from_config(cfg, key, t, where);
    if (!s.text.empty()) vars[key] = s.text;
  }
  if (cfg.contains("additional_special_tokens") && cfg["additional_special_tokens"].is_array()) {
    nlohmann::ordered_json extra = nlohmann::ordered_json::array();
    for (const json& e : cfg["additional_special_tokens"]) {
      if (e.is_string()) extra.push_back(e.get<std::string>());
      else if (e.is_object() && e.contains("content") && e["content"].is_string()) extra.push_back(e["content"].get<std::string>());
    }
    vars["additional_special_tokens"] = extra;
  }
  const auto add_template = [&](const std::string& name, std::string source, const std::string& origin) {
    try {
      t.templates[name] = std::make_unique<ChatTemplate>(std::move(source), vars);
    } catch (const Error& e) {
      throw Error(origin + ": " + e.what());
    }
  };
  if (!chat_template_file.empty()) {
    add_template("default", std::string(chat_template_file), where + " (chat_template.jinja)");
    return;
  }
  if (!cfg.contains("chat_template") || cfg["chat_template"].is_null()) return;
  const json& ct = cfg["chat_template"];
  if (ct.is_string()) {
    add_template("default", ct.get<std::string>(), where + " chat_template");
  } else if (ct.is_array()) {
    for (const json& named : ct) {
      if (!named.is_object() || !named.contains("name") || !named["name"].is_string() || !named.contains("template") ||
          !named["template"].is_string())
        throw Error(where + ": \"chat_template\" entries must be {\"name\": ..., \"template\": ...}");
      add_template(named["name"].get<std::string>(), named["template"].get<std::string>(),
                   where + " chat_template \"" + named["name"].get<std::string>() + "\"");
    }
  } else {
    throw Error(where + ": \"chat_template\" must be a string or a list of named templates");
  }
}
}  // namespace

std::shared_ptr<Tokenizer::Impl> load_tokenizer_impl(std::string_view tokenizer_json, std::string_view config_json,
                                                     std::string_view chat_template_file, const std::string& name) {
  auto t = std::make_shared<Tokenizer::Impl>();
  t->path = name;
  tok::BpeTables tables;
  json root = tok::parse_tokenizer_json(tokenizer_json, name, tables);
  try {
    if (!root.is_object() || !root.contains("model"))
      throw Error(name + ": no \"model\": not a Hugging Face tokenizer.json");
    if (!tables.have_vocab || !tables.have_merges) {  // not streamed: an unusual layout, read from the document
      tok::BpeTables from_doc = tok::bpe_tables_from_json(root["model"], name);
      if (!tables.have_vocab) {
        tables.vocab = std::move(from_doc.vocab);
        tables.have_vocab = from_doc.have_vocab;
      }
      if (!tables.have_merges) {
        tables.merges = std::move(from_doc.merges);
        tables.have_merges = from_doc.have_merges;
      }
      if (tables.error.empty()) tables.error = from_doc.error;
    }
    // "truncation" and "padding" are ignored, as transformers does unless asked: counts are of whole inputs.
    t->model = tok::BpeModel::build(root["model"], std::move(tables), name);
    t->normalizer = tok::Normalizer::from_json(root.value("normalizer", json()), name);
    t->pre_tokenizer = tok::PreTokenizer::from_json(root.value("pre_tokenizer", json()), name);
    parse_added_tokens(root, *t, name);
    parse_post_processor(root.value("post_processor", json()), *t, name);
    parse_decoder(root.value("decoder", json()), *t, name);
    // Distinct tokens over the model vocabulary and the added tokens.
    t->vocab_size = t->model->vocab_size();
    for (const auto& a : t->added)
      if (!t->model->token_to_id(a.content)) ++t->vocab_size;
  } catch (const json::exception& e) {
    throw Error(name + ": malformed tokenizer.json (" + e.what() + ")");
  }
  if (!config_json.empty() || !chat_template_file.empty()) {
    const std::string where = name.size() > 14 && name.compare(name.size() - 14, 14, "tokenizer.json") == 0
                                  ? name.substr(0, name.size() - 14) + "tokenizer_config.json"
                                  : name + " (tokenizer_config.json)";
    json cfg = json::object();
    try {
      if (!config_json.empty()) cfg = json::parse(config_json);
      parse_config(cfg, chat_template_file, *t, where);
    } catch (const json::exception& e) {
      throw Error(where + ": malformed (" + e.what() + ")");
    }
  }
  return t;
}

}  // namespace kvgate
