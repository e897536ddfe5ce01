// Tokenizer throughput, single thread: the GSM8K train text as one string and as its 7,473
// documents encoded one by one, and a ~128K-token haystack (GSM8K test text with a needle at half
// depth). Reports MB/s and tokens/s of encode (cold: a fresh tokenizer with an empty word cache;
// warm: best of N), the time to count (what exact-length generators do many times), and the load
// time. scripts/bench/tokenizer_vs_hf.py runs this and HF
// tokenizers on the same texts in the same run and prints the ratio.
//   tokenizer_bench [--tokenizer PATH] [--data DIR] [--repeats N] [--write-texts DIR] [--json]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/tokenizer/tokenizer.h"

namespace {
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// GSM8K problems as documents: question, newline, answer.
std::vector<std::string> gsm8k_docs(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + path + ": pass --data DIR (a folder holding gsm8k/, e.g. tests/data)");
  std::vector<std::string> docs;
  std::string line;
  while (std::getline(in, line)) {
    const auto row = nlohmann::json::parse(line);
    docs.push_back(row["question"].get<std::string>() + "\n" + row["answer"].get<std::string>());
  }
  return docs;
}

std::string join_docs(const std::vector<std::string>& docs) {
  std::string out;
  for (const auto& d : docs) out += d + "\n\n";
  return out;
}

struct Corpus {
  std::string name;
  std::vector<std::string> docs;  // encoded one call each (a single one for whole texts)
  std::size_t bytes() const {
    std::size_t n = 0;
    for (const auto& d : docs) n += d.size();
    return n;
  }
};

void fnv1a(std::uint64_t& h, const std::vector<std::int32_t>& ids) {
  for (const std::int32_t id : ids) {
    h ^= static_cast<std::uint32_t>(id);
    h *= 1099511628211ULL;
  }
}
}  // namespace

int main(int argc, char** argv) {
  std::string tokenizer_path = "tests/data/tokenizers/qwen3/tokenizer.json", data = "tests/data", write_dir;
  int repeats = 5;
  bool json_out = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) throw std::runtime_error(a + " needs a value");
      return argv[++i];
    };
    if (a == "--tokenizer") tokenizer_path = next();
    else if (a == "--data") data = next();
    else if (a == "--repeats") repeats = std::stoi(next());
    else if (a == "--write-texts") write_dir = next();
    else if (a == "--json") json_out = true;
    else {
      std::cerr << "usage: tokenizer_bench [--tokenizer PATH] [--data DIR] [--repeats N] [--write-texts DIR] [--json]\n";
      return 2;
    }
  }
  try {
    auto t0 = Clock::now();
    const kvgate::Tokenizer tok = kvgate::Tokenizer::load(tokenizer_path);
    const double load_s = seconds_since(t0);

    std::vector<Corpus> corpora;
    const std::vector<std::string> train = gsm8k_docs(data + "/gsm8k/train.jsonl");
    corpora.push_back({"gsm8k_train", {join_docs(train)}});
    corpora.push_back({"gsm8k_docs", train});
    // ~128K tokens of GSM8K test text with a needle at half depth, cut at a line end.
    std::string hay = join_docs(gsm8k_docs(data + "/gsm8k/test.jsonl"));
    std::size_t cut = hay.size();
    while (tok.count(std::string_view(hay).substr(0, cut)) > 131072) cut = hay.rfind('\n', cut * 9 / 10);
    std::size_t lo = cut, hi = hay.size();
    while (hi - lo > 64) {  // largest line-aligned prefix within 128K (131072) tokens
      const std::size_t mid = hay.rfind('\n', lo + (hi - lo) / 2);
      if (mid <= lo) break;
      if (tok.count(std::string_view(hay).substr(0, mid)) <= 131072) lo = mid;
      else hi = mid;
    }
    hay.resize(lo);
    const std::size_t mid = hay.find('\n', hay.size() / 2);
    hay.insert(mid + 1, "The access code for Juniper-42 is 605908. Remember it.\n");
    corpora.push_back({"haystack_128k", {hay}});

    if (!write_dir.empty())
      for (const auto& c : corpora) {  // one JSON string per line: the documents
        std::ofstream out(write_dir + "/" + c.name + ".jsonl", std::ios::binary);
        for (const auto& d : c.docs) out << nlohmann::json(d).dump() << "\n";
      }

    nlohmann::ordered_json report;
    report["tokenizer"] = tokenizer_path;
    report["load_seconds"] = load_s;
    report["repeats"] = repeats;
    for (const auto& c : corpora) {
      // Cold: a fresh tokenizer, its word cache empty.
      const kvgate::Tokenizer fresh = kvgate::Tokenizer::load(tokenizer_path);
      std::uint64_t hash = 1469598103934665603ULL;
      t0 = Clock::now();
      for (const auto& d : c.docs) fnv1a(hash, fresh.encode(d));
      const double cold = seconds_since(t0);
      double best = 1e30, best_count = 1e30;
      std::size_t n = 0;
      for (int r = 0; r < repeats; ++r) {
        std::uint64_t again = 1469598103934665603ULL;
        t0 = Clock::now();
        for (const auto& d : c.docs) fnv1a(again, fresh.encode(d));
        best = std::min(best, seconds_since(t0));
        if (again != hash) throw std::runtime_error("encode is not deterministic");
        t0 = Clock::now();
        n = 0;
        for (const auto& d : c.docs) n += fresh.count(d);
        best_count = std::min(best_count, seconds_since(t0));
      }
      const double mb = static_cast<double>(c.bytes()) / 1e6;
      nlohmann::ordered_json row;
      row["documents"] = c.docs.size();
      row["bytes"] = c.bytes();
      row["tokens"] = n;
      row["ids_fnv1a"] = hash;
      row["cold_seconds"] = cold;
      row["warm_seconds"] = best;
      row["count_seconds"] = best_count;
      row["cold_mb_per_s"] = mb / cold;
      row["warm_mb_per_s"] = mb / best;
      row["warm_tokens_per_s"] = static_cast<double>(n) / best;
      report["corpora"][c.name] = row;
    }
    if (json_out) {
      std::cout << report.dump(2) << "\n";
    } else {
      std::printf("kvgate tokenizer, single thread (%s)\nload: %.3f s\n", tokenizer_path.c_str(), load_s);
      for (const auto& [name, row] : report["corpora"].items())
        std::printf("%-14s %9zu bytes %8zu tokens  cold %7.1f MB/s  warm %7.1f MB/s (%5.1f ms)  count %5.1f ms\n", name.c_str(),
                    row["bytes"].get<std::size_t>(), row["tokens"].get<std::size_t>(), row["cold_mb_per_s"].get<double>(),
                    row["warm_mb_per_s"].get<double>(), row["warm_seconds"].get<double>() * 1e3,
                    row["count_seconds"].get<double>() * 1e3);
    }
  } catch (const std::exception& e) {
    std::cerr << "tokenizer_bench: " << e.what() << "\n";
    return 2;
  }
  return 0;
}
