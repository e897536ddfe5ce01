// Deterministic English prose for haystacks: paragraphs of 3 to 8 sentences about one setting
// (a harbor, a village, a farm, ...), with recurring characters, drawn from kvgate's own templates
// and vocabulary. The same seed gives the same text on every machine (kvgate::Rng only). No sentence
// repeats within one generator's stream, so no block of sentences does either; the text holds no
// digits, so numeric needles are the only numbers in it.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_set>

#include "harness/core/rng.h"
#include "datasets/haystack/sentence_source.h"

namespace kvgate::haystack {

class ProseGenerator final : public SentenceSource {
 public:
  explicit ProseGenerator(std::uint64_t seed);
  Sentence next() override;
  std::string next_short() override;

 private:
  struct Person {
    std::string_view name;
    std::string_view pronoun;     // "she", "he", "they"
    std::string_view possessive;  // "her", "his", "their"
  };

  void start_paragraph();
  Person random_named_person();
  Person random_person();
  std::string fill(std::string_view tmpl);
  std::string unique(std::string_view tmpl_set_name, bool short_sentence);

  Rng rng_;
  std::unordered_set<std::uint64_t> seen_;  // hashes of every sentence given out
  std::size_t domain_ = 0;
  Person protagonist_{}, second_{};
  int left_in_paragraph_ = 0;
  bool paragraph_first_ = true;  // the next sentence opens a paragraph
  bool started_ = false;
  // Per sentence: the current subject (for {pron}/{pos}) and what was used, to avoid "the harbor ... the harbor".
  Person subject_{};
  std::string_view place_;
};

}  // namespace kvgate::haystack
