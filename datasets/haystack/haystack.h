// Haystacks of a chosen size in bytes, with needles (any inserted sentences) at chosen depths.
// The size is what length fitting (datasets/common/length_fit.h) searches over: select() takes a
// byte budget and returns the longest prefix of the sentence stream within it, topped up with at
// most three sentences from a pool of short and ordinary ones, so the rendered size tracks the
// budget to within a few bytes.
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "datasets/haystack/sentence_source.h"

namespace kvgate::haystack {

struct HaystackSelection {
  std::size_t sentences = 0;         // the first n sentences of the stream
  std::vector<std::size_t> fillers;  // top-up sentences appended after them (indices into the builder's pool)
  std::int64_t bytes = 0;            // rendered size without insertions
};

// A sentence to insert at a depth: the fraction (0..1) of the haystack's bytes before it.
struct Insertion {
  double depth = 0;
  std::string_view text;
};

// Where an insertion went: its byte offset in the output string, and the depth it actually got
// (inserted at the sentence boundary nearest the asked depth).
struct PlacedInsertion {
  std::size_t offset = 0;
  double depth = 0;
};

class HaystackBuilder {
 public:
  // Draws the top-up pool from the source first: `short_fills` short sentences and `ordinary_fills`
  // ordinary ones (so any gap up to a long sentence can be closed).
  explicit HaystackBuilder(SentenceSource& source, std::size_t short_fills = 24, std::size_t ordinary_fills = 24);

  HaystackSelection select(std::int64_t budget_bytes);

  // The selection of the first `sentences` of the stream (already drawn) and the pool's `fillers`
  // after them, with its size: for fitting steps finer than a byte budget (haystack_fine_step.h).
  HaystackSelection compose(std::size_t sentences, std::vector<std::size_t> fillers) const;

  // Appends the selected haystack, with the insertions at sentence boundaries, to `out`. Sentences
  // within a paragraph are joined by a space, paragraphs by a blank line; an insertion at a paragraph
  // boundary ends the paragraph before it. Returns one placement per insertion, in their order.
  std::vector<PlacedInsertion> render(const HaystackSelection& selection, std::span<const Insertion> insertions,
                                      std::string& out) const;

  // The stream so far (for tests and meta).
  const std::vector<Sentence>& stream() const { return stream_; }
  const std::vector<std::string>& fill_sentences() const { return fills_; }
  // Ordinary sentences the pool took from the source before the stream began.
  std::size_t sentences_before_stream() const { return ordinary_fills_; }

 private:
  void draw_until(std::int64_t bytes);
  std::int64_t separator(std::size_t index) const;  // bytes before stream sentence `index`

  SentenceSource& source_;
  std::vector<Sentence> stream_;
  std::vector<std::int64_t> cum_{0};  // cum_[k]: rendered bytes of the first k sentences
  std::vector<std::string> fills_;    // sorted by size, then by draw order
  std::size_t ordinary_fills_ = 0;
};

}  // namespace kvgate::haystack
