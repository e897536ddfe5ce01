#include "harness/tokenizer/tokenizer_json_sax.h"

#include <vector>

#include "harness/core/error.h"

namespace kvgate::tok {

namespace {
using json = nlohmann::json;

// Forwards SAX events to nlohmann's DOM builder, diverting the two big model tables.
class Sax {
 public:
  Sax(json& root, BpeTables& tables) : dom_(root, true), tables_(tables) {}

  bool null() { return value([&] { return dom_.null(); }, [&] { bad_merge(); }); }
  bool boolean(bool v) { return value([&] { return dom_.boolean(v); }, [&] { bad_merge(); }); }
  bool number_integer(json::number_integer_t v) {
    return value([&] { return dom_.number_integer(v); }, [&] { bad_merge(); }, v);
  }
  bool number_unsigned(json::number_unsigned_t v) {
    return value([&] { return dom_.number_unsigned(v); }, [&] { bad_merge(); },
                 v > static_cast<json::number_unsigned_t>(INT64_MAX) ? -1 : static_cast<std::int64_t>(v));
  }
  bool number_float(json::number_float_t v, const json::string_t& s) {
    return value([&] { return dom_.number_float(v, s); }, [&] { bad_merge(); });
  }
  bool binary(json::binary_t& b) { return value([&] { return dom_.binary(b); }, [&] { bad_merge(); }); }
  bool string(json::string_t& s) {
    if (mode_ == Mode::Vocab && depth_ == mode_depth_) {
      bad_vocab();
      return true;
    }
    if (mode_ == Mode::Merges) {
      if (depth_ == mode_depth_) add_merge_string(tables_, s);
      else if (depth_ == mode_depth_ + 1) pair_.push_back(std::move(s));
      else bad_merge();
      return true;
    }
    if (mode_ != Mode::None) return true;
    return dom_.string(s);
  }

  bool start_object(std::size_t n) {
    if (mode_ != Mode::None) {
      ++depth_;
      if (mode_ == Mode::Vocab) bad_vocab();
      else bad_merge();
      return true;
    }
    if (at_model_key("vocab")) {
      enter(Mode::Vocab);
      tables_.have_vocab = true;
      return true;
    }
    ++depth_;
    keys_.emplace_back();
    return dom_.start_object(n);
  }
  bool end_object() {
    if (mode_ != Mode::None) {
      if (depth_ == mode_depth_ && mode_ == Mode::Vocab) return leave();
      --depth_;
      return true;
    }
    --depth_;
    keys_.pop_back();
    return dom_.end_object();
  }
  bool start_array(std::size_t n) {
    if (mode_ == Mode::Merges) {
      ++depth_;
      if (depth_ == mode_depth_ + 1) pair_.clear();
      else bad_merge();
      return true;
    }
    if (mode_ == Mode::Vocab) {
      ++depth_;
      bad_vocab();
      return true;
    }
    if (at_model_key("merges")) {
      enter(Mode::Merges);
      tables_.have_merges = true;
      return true;
    }
    ++depth_;
    keys_.emplace_back();
    return dom_.start_array(n);
  }
  bool end_array() {
    if (mode_ == Mode::Merges) {
      if (depth_ == mode_depth_) return leave();
      if (depth_ == mode_depth_ + 1) {
        if (pair_.size() == 2) tables_.merges.emplace_back(std::move(pair_[0]), std::move(pair_[1]));
        else bad_merge();
      }
      --depth_;
      return true;
    }
    if (mode_ == Mode::Vocab) {
      --depth_;
      return true;
    }
    --depth_;
    keys_.pop_back();
    return dom_.end_array();
  }
  bool key(json::string_t& k) {
    if (mode_ == Mode::Vocab) {
      if (depth_ == mode_depth_) key_ = std::move(k);
      return true;
    }
    if (mode_ != Mode::None) return true;
    keys_.back() = k;
    return dom_.key(k);
  }
  bool parse_error(std::size_t pos, const std::string& token, const nlohmann::detail::exception& e) {
    return dom_.parse_error(pos, token, e);
  }

 private:
  enum class Mode { None, Vocab, Merges };

  // At root.model.<name>: depth 2 (inside the model object) with the last key `name`, and the
  // model object is the root's "model".
  bool at_model_key(const char* name) const {
    return depth_ == 2 && keys_.size() == 2 && keys_[0] == "model" && keys_[1] == name;
  }
  void enter(Mode m) {
    mode_ = m;
    ++depth_;
    mode_depth_ = depth_;
  }
  bool leave() {
    mode_ = Mode::None;
    --depth_;
    return dom_.null();  // the placeholder the document gets
  }
  template <typename Dom, typename Merge>
  bool value(Dom&& dom, Merge&& merge, std::int64_t integer = -1) {
    if (mode_ == Mode::None) return dom();
    if (mode_ == Mode::Vocab) {
      if (depth_ == mode_depth_ && integer >= 0) tables_.vocab.emplace_back(std::move(key_), integer);
      else if (depth_ == mode_depth_) bad_vocab();
      return true;
    }
    merge();
    return true;
  }
  void bad_vocab() {
    if (tables_.error.empty()) tables_.error = "vocab entry \"" + key_ + "\" must map to a non-negative integer id";
  }
  void bad_merge() {
    if (tables_.error.empty()) tables_.error = "merge " + std::to_string(tables_.merges.size()) + " must be \"a b\" or [\"a\", \"b\"]";
  }

  nlohmann::detail::json_sax_dom_parser<json> dom_;
  BpeTables& tables_;
  std::vector<std::string> keys_;  // the last key of each open container (empty for arrays)
  int depth_ = 0;
  Mode mode_ = Mode::None;
  int mode_depth_ = 0;
  std::string key_;
  std::vector<std::string> pair_;
};
}  // namespace

json parse_tokenizer_json(std::string_view text, const std::string& name, BpeTables& tables) {
  json root;
  Sax sax(root, tables);
  try {
    json::sax_parse(text, &sax);
  } catch (const json::exception& e) {
    throw Error(name + " is not valid JSON (" + e.what() + "): give a Hugging Face tokenizer.json");
  }
  return root;
}

}  // namespace kvgate::tok
