// The text of generated MRCR conversations: the asks ("write a poem about tapirs") and the
// assistant replies, written by kvgate from word lists and sentence templates with a seeded Rng.
// Replies to identical asks differ (each has its own stream), so asking for "the 2nd poem about
// tapirs" has one right answer.
#pragma once
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "harness/core/rng.h"

namespace kvgate::mrcr {

// The writing formats ("poem", "short story", ...) and topics ("tapirs", ...) asks are made of.
const std::vector<std::string>& formats();
const std::vector<std::string>& topics();

// "write a poem about tapirs" / "write an essay about owls".
std::string ask_text(std::string_view format, std::string_view topic);
// "1st", "2nd", "3rd", "4th", ..., "11th", "12th", "13th", "21st".
std::string ordinal(int n);

struct ReplyLength {
  int min_words = 0, max_words = 0;
};
// The usual length of a reply in each format (a poem is shorter than an essay).
ReplyLength reply_length(std::size_t format);

// A reply of about `words` words (whole sentences or lines; at least one) in format `format`
// (an index into formats()) about `topic`.
std::string write_reply(std::size_t format, std::string_view topic, int words, Rng& rng);

}  // namespace kvgate::mrcr
