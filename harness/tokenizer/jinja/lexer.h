// Jinja's lexer as transformers configures it (trim_blocks, lstrip_blocks, no trailing newline):
// template text, {{ }}, {% %} and {# #} with -/+ whitespace control, {% raw %}; inside tags: names,
// numbers, strings (Python escapes) and operators.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kvgate::jinja {

enum class Tok { Text, VarBegin, VarEnd, BlockBegin, BlockEnd, Name, String, Int, Float, Op, End };

struct Token {
  Tok type = Tok::End;
  std::string value;  // text, name, unescaped string, operator
  std::int64_t ival = 0;
  double fval = 0;
  int line = 1;
};

// Throws kvgate::Error ("chat template line N: ...") on unterminated tags, comments or strings.
std::vector<Token> lex(std::string_view source);

// Python's str.isspace for one code point.
bool py_isspace(char32_t c);

}  // namespace kvgate::jinja
