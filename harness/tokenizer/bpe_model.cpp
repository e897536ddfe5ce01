#include "harness/tokenizer/bpe_model.h"

#include <algorithm>
#include <queue>

#include "harness/core/error.h"
#include "harness/tokenizer/byte_level.h"

namespace kvgate::tok {

namespace {
std::string opt_string(const nlohmann::json& m, const char* key, const std::string& where) {
  if (!m.contains(key) || m[key].is_null()) return "";
  if (!m[key].is_string()) throw Error(where + ": model field \"" + key + "\" must be a string or null");
  return m[key].get<std::string>();
}
bool opt_bool(const nlohmann::json& m, const char* key, const std::string& where) {
  if (!m.contains(key) || m[key].is_null()) return false;
  if (!m[key].is_boolean()) throw Error(where + ": model field \"" + key + "\" must be true or false");
  return m[key].get<bool>();
}
}  // namespace

void BpeModel::insert_merge(std::int32_t left, std::int32_t right, std::uint32_t rank, std::int32_t merged) {
  const std::uint64_t key = (static_cast<std::uint64_t>(static_cast<std::uint32_t>(left)) << 32) |
                            static_cast<std::uint32_t>(right);
  std::size_t h = (key * 0x9E3779B97F4A7C15ULL) >> shift_;
  for (;;) {
    MergeEntry& e = merges_[h];
    if (e.key == ~0ULL || e.key == key) {  // a repeated pair keeps its last rank, as HF's HashMap
      e = {key, rank, merged};
      return;
    }
    h = (h + 1) & (merges_.size() - 1);
  }
}

void add_merge_string(BpeTables& t, std::string_view s) {
  const std::size_t sp = s.find(' ');
  if (sp == std::string_view::npos || s.find(' ', sp + 1) != std::string_view::npos) {
    if (t.error.empty())
      t.error = "merge " + std::to_string(t.merges.size()) + " (\"" + std::string(s) + "\") must be two tokens separated by one space";
    t.merges.emplace_back();
    return;
  }
  t.merges.emplace_back(std::string(s.substr(0, sp)), std::string(s.substr(sp + 1)));
}

void add_merge(BpeTables& t, const nlohmann::json& mg) {
  if (mg.is_string()) {
    add_merge_string(t, mg.get_ref<const std::string&>());
  } else if (mg.is_array() && mg.size() == 2 && mg[0].is_string() && mg[1].is_string()) {
    t.merges.emplace_back(mg[0].get<std::string>(), mg[1].get<std::string>());
  } else {
    if (t.error.empty()) t.error = "merge " + std::to_string(t.merges.size()) + " must be \"a b\" or [\"a\", \"b\"]";
    t.merges.emplace_back();
  }
}

BpeTables bpe_tables_from_json(const nlohmann::json& m, const std::string& where) {
  BpeTables t;
  if (!m.is_object()) return t;
  if (m.contains("vocab") && m["vocab"].is_object()) {
    t.have_vocab = true;
    for (auto it = m["vocab"].begin(); it != m["vocab"].end(); ++it) {
      if (!it.value().is_number_integer()) {
        if (t.error.empty()) t.error = "vocab entry \"" + it.key() + "\" must map to a non-negative integer id";
        continue;
      }
      t.vocab.emplace_back(it.key(), it.value().get<std::int64_t>());
    }
  }
  if (m.contains("merges") && m["merges"].is_array()) {
    t.have_merges = true;
    for (const auto& mg : m["merges"]) add_merge(t, mg);
  }
  (void)where;
  return t;
}

std::unique_ptr<BpeModel> BpeModel::build(const nlohmann::json& m, BpeTables tables, const std::string& where) {
  if (!m.is_object()) throw Error(where + ": \"model\" must be an object");
  const std::string type = m.contains("type") && m["type"].is_string() ? m["type"].get<std::string>() : "BPE";
  if (type != "BPE")
    throw Error(where + ": model type \"" + type +
                "\" is not supported (kvgate reads byte-level BPE tokenizers: GPT-2, Llama-3, Qwen families); "
                "use the server's /tokenize endpoint (--tokenize-url) for this model");
  if (!tables.have_vocab) throw Error(where + ": BPE model needs a \"vocab\" object");
  if (!tables.have_merges) throw Error(where + ": BPE model needs a \"merges\" array");
  if (!tables.error.empty()) throw Error(where + ": " + tables.error);
  if (m.contains("dropout") && !m["dropout"].is_null() && !(m["dropout"].is_number() && m["dropout"].get<double>() == 0.0))
    throw Error(where + ": BPE dropout is random; kvgate encodes deterministically: set \"dropout\" to null");
  if (!opt_string(m, "continuing_subword_prefix", where).empty() || !opt_string(m, "end_of_word_suffix", where).empty())
    throw Error(where + ": continuing_subword_prefix / end_of_word_suffix are not used by byte-level BPE and are not supported");

  auto bpe = std::unique_ptr<BpeModel>(new BpeModel());
  bpe->fuse_unk_ = opt_bool(m, "fuse_unk", where);
  bpe->ignore_merges_ = opt_bool(m, "ignore_merges", where);
  // byte_fallback only matters for characters outside the vocabulary, which byte-level never has.

  std::int64_t max_id = -1;
  bpe->vocab_.reserve(tables.vocab.size());
  for (const auto& [tok, id] : tables.vocab) {
    if (id < 0 || id > (1 << 30))
      throw Error(where + ": vocab entry \"" + tok + "\" must map to a non-negative integer id below 2^30");
    bpe->vocab_.insert(tok, static_cast<std::int32_t>(id));
    max_id = std::max(max_id, id);
  }
  bpe->id_to_token_.assign(static_cast<std::size_t>(max_id + 1), {0, ~0U});
  bpe->vocab_.for_each([&](std::string_view tok, std::int32_t id) {
    bpe->id_to_token_[static_cast<std::size_t>(id)] = {static_cast<std::uint32_t>(bpe->tokens_.size()), static_cast<std::uint32_t>(tok.size())};
    bpe->tokens_.append(tok);
  });
  if (bpe->ignore_merges_) {
    std::string bytes;
    bpe->bytes_vocab_.reserve(bpe->vocab_.size());
    bpe->vocab_.for_each([&](std::string_view tok, std::int32_t id) {
      bytes.clear();
      if (byte_level_to_bytes(tok, bytes)) bpe->bytes_vocab_.insert(bytes, id);
    });
  }
  for (int b = 0; b < 256; ++b) bpe->byte_id_[b] = bpe->vocab_.find(bytes_to_byte_level(std::string(1, static_cast<char>(b))));
  const std::string unk = opt_string(m, "unk_token", where);
  if (!unk.empty()) {
    const std::int32_t id = bpe->vocab_.find(unk);
    if (id < 0) throw Error(where + ": unk_token \"" + unk + "\" is not in the vocab");
    bpe->unk_id_ = id;
  }

  std::size_t cap = 16;
  while (cap < tables.merges.size() * 2 + 16) cap <<= 1;
  bpe->merges_.assign(cap, MergeEntry{});
  bpe->shift_ = 64 - __builtin_ctzll(cap);
  std::string joined;
  for (std::size_t rank = 0; rank < tables.merges.size(); ++rank) {
    const auto& [a, b] = tables.merges[rank];
    const std::int32_t ia = bpe->vocab_.find(a), ib = bpe->vocab_.find(b);
    joined.assign(a);
    joined.append(b);
    const std::int32_t ij = bpe->vocab_.find(joined);
    if (ia < 0 || ib < 0 || ij < 0)
      throw Error(where + ": merge " + std::to_string(rank) + " (\"" + a + "\", \"" + b + "\") uses a token missing from the vocab");
    bpe->insert_merge(ia, ib, static_cast<std::uint32_t>(rank), ij);
  }
  return bpe;
}

std::optional<std::int32_t> BpeModel::token_to_id(std::string_view token) const {
  const std::int32_t id = vocab_.find(token);
  if (id < 0) return std::nullopt;
  return id;
}

std::optional<std::string_view> BpeModel::id_to_token(std::int32_t id) const {
  if (id < 0 || static_cast<std::size_t>(id) >= id_to_token_.size()) return std::nullopt;
  const auto [off, len] = id_to_token_[static_cast<std::size_t>(id)];
  if (len == ~0U) return std::nullopt;
  return std::string_view(tokens_).substr(off, len);
}

// Short words: repeated scans for the lowest (rank, position) pair.
void BpeModel::merge_small(std::vector<std::int32_t>& s) const {
  for (;;) {
    std::uint32_t best_rank = UINT32_MAX;
    std::size_t best = 0;
    std::int32_t merged = 0;
    for (std::size_t i = 0; i + 1 < s.size(); ++i) {
      const MergeEntry* e = find_merge(s[i], s[i + 1]);
      if (e && e->rank < best_rank) {
        best_rank = e->rank;
        best = i;
        merged = e->merged;
      }
    }
    if (best_rank == UINT32_MAX) return;
    s[best] = merged;
    s.erase(s.begin() + static_cast<std::ptrdiff_t>(best) + 1);
  }
}

// Long words: HF's algorithm, a min-heap of (rank, position) over a linked list, O(n log n).
void BpeModel::merge_large(std::vector<std::int32_t>& s) const {
  struct Cand {
    std::uint32_t rank;
    std::uint32_t pos;
    std::int32_t merged;
    bool operator>(const Cand& o) const { return rank != o.rank ? rank > o.rank : pos > o.pos; }
  };
  const std::size_t n = s.size();
  std::vector<std::int32_t> prev(n), next(n);
  std::vector<char> alive(n, 1);
  for (std::size_t i = 0; i < n; ++i) {
    prev[i] = static_cast<std::int32_t>(i) - 1;
    next[i] = i + 1 < n ? static_cast<std::int32_t>(i + 1) : -1;
  }
  std::priority_queue<Cand, std::vector<Cand>, std::greater<Cand>> heap;
  for (std::size_t i = 0; i + 1 < n; ++i)
    if (const MergeEntry* e = find_merge(s[i], s[i + 1])) heap.push({e->rank, static_cast<std::uint32_t>(i), e->merged});
  while (!heap.empty()) {
    const Cand top = heap.top();
    heap.pop();
    const std::uint32_t p = top.pos;
    if (!alive[p] || next[p] < 0) continue;
    const auto r = static_cast<std::size_t>(next[p]);
    const MergeEntry* e = find_merge(s[p], s[r]);
    if (!e || e->merged != top.merged) continue;  // stale entry
    s[p] = top.merged;
    alive[r] = 0;
    next[p] = next[r];
    if (next[r] >= 0) prev[next[r]] = static_cast<std::int32_t>(p);
    if (prev[p] >= 0)
      if (const MergeEntry* pe = find_merge(s[prev[p]], s[p]))
        heap.push({pe->rank, static_cast<std::uint32_t>(prev[p]), pe->merged});
    if (next[p] >= 0)
      if (const MergeEntry* ne = find_merge(s[p], s[next[p]])) heap.push({ne->rank, p, ne->merged});
  }
  std::size_t w = 0;
  for (std::size_t i = 0; i < n; ++i)
    if (alive[i]) s[w++] = s[i];
  s.resize(w);
}

void BpeModel::encode_uncached(std::string_view word, std::vector<std::int32_t>& out) const {
  if (ignore_merges_) {
    const std::int32_t id = bytes_vocab_.find(word);
    if (id >= 0) {
      out.push_back(id);
      return;
    }
  }
  std::vector<std::int32_t> s;
  s.reserve(word.size());
  bool last_unk = false;
  for (const char c : word) {
    const std::int32_t id = byte_id_[static_cast<unsigned char>(c)];
    if (id >= 0) {
      s.push_back(id);
      last_unk = false;
    } else if (unk_id_) {  // a byte-level vocabulary missing a byte: HF's unk handling
      if (!(fuse_unk_ && last_unk)) s.push_back(*unk_id_);
      last_unk = true;
    }
  }
  // Merging never crosses an unk (no merge pairs contain it unless the vocab says so).
  if (s.size() <= 48) merge_small(s);
  else merge_large(s);
  out.insert(out.end(), s.begin(), s.end());
}

void BpeModel::encode_word(std::string_view word, std::vector<std::int32_t>& out) const {
  if (word.empty()) return;
  if (word.size() == 1) {  // a single byte is its own token
    const std::int32_t id = byte_id_[static_cast<unsigned char>(word[0])];
    if (id >= 0) {
      out.push_back(id);
      return;
    }
  }
  if (word.size() > WordCache::kMaxWordBytes) {
    encode_uncached(word, out);
    return;
  }
  const std::uint64_t h = WordCache::hash(word);
  if (cache_.lookup(word, h, out)) return;
  const std::size_t mark = out.size();
  encode_uncached(word, out);
  cache_.insert(word, h, out.data() + mark, out.size() - mark);
}

}  // namespace kvgate::tok
