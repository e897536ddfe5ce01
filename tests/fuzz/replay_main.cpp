// Runs a fuzz target without libFuzzer, so CI exercises it on every build: each file of the seed
// corpus, then deterministic mutations of them (bit flips, truncations, splices, byte insertions).
// A target must handle any input: expected rejections are caught inside it; a crash, a sanitizer
// report or an escaped exception fails the test.
//   replay <corpus_dir> [mutations=2000] [seed=1]
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "harness/core/rng.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s CORPUS_DIR [MUTATIONS] [SEED]\n", argv[0]);
    return 2;
  }
  const long mutations = argc > 2 ? std::stol(argv[2]) : 2000;
  kvgate::Rng rng(argc > 3 ? std::stoull(argv[3]) : 1);
  std::vector<std::string> corpus;
  for (const auto& e : std::filesystem::directory_iterator(argv[1])) {
    std::ifstream in(e.path(), std::ios::binary);
    corpus.emplace_back(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  if (corpus.empty()) {
    std::fprintf(stderr, "%s: empty corpus\n", argv[1]);
    return 2;
  }
  auto run = [](const std::string& s) { LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(s.data()), s.size()); };
  for (const auto& s : corpus) run(s);
  for (long i = 0; i < mutations; ++i) {
    std::string s = corpus[rng.below(corpus.size())];
    const int edits = 1 + static_cast<int>(rng.below(4));
    for (int k = 0; k < edits; ++k) {
      switch (rng.below(5)) {
        case 0:
          if (!s.empty()) s[rng.below(s.size())] ^= static_cast<char>(1u << rng.below(8));
          break;
        case 1:
          if (!s.empty()) s.resize(rng.below(s.size()));
          break;
        case 2: {
          const std::string& o = corpus[rng.below(corpus.size())];
          if (!o.empty() && !s.empty()) s = s.substr(0, rng.below(s.size())) + o.substr(rng.below(o.size()));
          break;
        }
        case 3:
          s.insert(s.begin() + static_cast<long>(rng.below(s.size() + 1)), static_cast<char>(rng.below(256)));
          break;
        default:
          if (!s.empty()) s[rng.below(s.size())] = "{}[]\",:0\\\n\xff"[rng.below(11)];
      }
    }
    run(s);
  }
  std::printf("%zu corpus inputs and %ld mutations ran without a crash\n", corpus.size(), mutations);
  return 0;
}
