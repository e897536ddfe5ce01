// Levenshtein distance between two texts counted in Unicode code points (invalid UTF-8 bytes count one
// each), with the bit-parallel algorithm of Myers (1999) in Hyyrö's block form: O(n * m / 64), so
// two 30,000-character outputs compare in milliseconds.
#pragma once
#include <cstddef>
#include <string_view>

namespace kvgate {

std::size_t levenshtein_distance(std::string_view a, std::string_view b);
// distance / max(length a, length b) in code points: 0 identical, 1 nothing in common; 0 for two empty texts.
double normalized_edit_distance(std::string_view a, std::string_view b);

}  // namespace kvgate
