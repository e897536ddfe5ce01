// Removing a reasoning model's thinking from its answer before grading. Backends that return the
// reasoning separately (reasoning_content) already keep it out of the answer; models served without
// a reasoning parser put it inline as <think>...</think>, and chat templates that open the block in
// the prompt leave only the closing tag in the output.
#pragma once
#include <string>
#include <string_view>

namespace kvgate {

struct ThinkingSplit {
  std::string answer{};    // the text outside thinking blocks, leading whitespace removed
  std::string thinking{};  // the text of the blocks, concatenated
  bool found = false;        // a <think> or </think> tag was present
  bool unterminated = false;  // a <think> block never closed (the model ran out of tokens while thinking)
};

// Removes every <think>...</think> block; a </think> with no opening tag before it drops everything up
// to it (the template opened the block); an unclosed <think> drops everything after it.
ThinkingSplit split_thinking(std::string_view text);
std::string strip_thinking(std::string_view text);

}  // namespace kvgate
