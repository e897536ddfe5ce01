#include "harness/tokenizer/jinja/lexer.h"

#include <cerrno>
#include <cstdlib>

#include "harness/core/error.h"
#include "harness/tokenizer/utf8.h"

namespace kvgate::jinja {

bool py_isspace(char32_t c) {
  return (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x20) || c == 0x85 || c == 0xA0 || c == 0x1680 ||
         (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000;
}

namespace {

[[noreturn]] void fail(int line, const std::string& msg) {
  throw Error("chat template line " + std::to_string(line) + ": " + msg);
}

// Python's splitlines() + "\n".join(): every line break becomes "\n" and the final one goes
// (Jinja's keep_trailing_newline=False).
std::string normalize_source(std::string_view src) {
  std::string out;
  out.reserve(src.size());
  std::size_t i = 0;
  bool pending_break = false;
  while (i < src.size()) {
    const std::size_t at = i;
    const auto c0 = static_cast<unsigned char>(src[i]);
    char32_t c;
    if (tok::find_invalid_utf8(src.substr(i, tok::utf8_seq_len(c0))) != tok::kValidUtf8) {
      c = c0;  // leave stray bytes alone
      ++i;
    } else {
      c = tok::next_codepoint(src, i);
    }
    const bool brk = c == '\n' || c == '\r' || c == 0x0B || c == 0x0C || c == 0x1C || c == 0x1D || c == 0x1E ||
                     c == 0x85 || c == 0x2028 || c == 0x2029;
    if (pending_break) {
      out += '\n';
      pending_break = false;
    }
    if (brk) {
      if (c == '\r' && i < src.size() && src[i] == '\n') ++i;
      pending_break = true;
    } else {
      out.append(src, at, i - at);
    }
  }
  return out;
}

std::size_t count_lines(std::string_view s) {
  std::size_t n = 0;
  for (const char c : s) n += c == '\n';
  return n;
}

// Python str.rstrip().
std::string_view py_rstrip(std::string_view s) {
  std::size_t end = s.size();
  while (end > 0) {
    std::size_t j = end;
    if (!py_isspace(tok::prev_codepoint(s, j))) break;
    end = j;
  }
  return s.substr(0, end);
}

// Length of the run of Python whitespace at s[pos].
std::size_t py_space_run(std::string_view s, std::size_t pos) {
  std::size_t i = pos;
  while (i < s.size()) {
    std::size_t j = i;
    if (!py_isspace(tok::next_codepoint(s, j))) break;
    i = j;
  }
  return i - pos;
}

// Jinja's OptionalLStrip: text before a tag, adjusted by the tag's whitespace control.
std::string_view strip_before_tag(std::string_view text, char sign, bool is_variable, bool line_starting) {
  if (sign == '-') return py_rstrip(text);
  if (sign == '+' || is_variable) return text;
  const std::size_t nl = text.rfind('\n');
  const std::size_t l_pos = nl == std::string_view::npos ? 0 : nl + 1;
  if (l_pos > 0 || line_starting) {
    for (std::size_t k = l_pos; k < text.size(); ++k)
      if (text[k] != ' ' && text[k] != '\t') return text;
    return text.substr(0, l_pos);
  }
  return text;
}

void unescape_python(std::string_view raw, std::string& out, int line) {
  for (std::size_t i = 0; i < raw.size(); ++i) {
    const char c = raw[i];
    if (c != '\\' || i + 1 >= raw.size()) {
      out += c;
      continue;
    }
    const char e = raw[++i];
    auto hex = [&](std::size_t n) {
      if (i + n >= raw.size()) fail(line, "truncated \\x/\\u escape in a string literal");
      const std::string digits(raw.substr(i + 1, n));
      if (digits.size() != n || digits.find_first_not_of("0123456789abcdefABCDEF") != std::string::npos)
        fail(line, "bad \\x/\\u escape in a string literal");
      i += n;
      return static_cast<char32_t>(std::strtoul(digits.c_str(), nullptr, 16));
    };
    switch (e) {
      case '\n': break;
      case '\\': out += '\\'; break;
      case '\'': out += '\''; break;
      case '"': out += '"'; break;
      case 'a': out += '\a'; break;
      case 'b': out += '\b'; break;
      case 'f': out += '\f'; break;
      case 'n': out += '\n'; break;
      case 'r': out += '\r'; break;
      case 't': out += '\t'; break;
      case 'v': out += '\v'; break;
      case 'x': tok::append_utf8(out, hex(2)); break;
      case 'u': tok::append_utf8(out, hex(4)); break;
      case 'U': tok::append_utf8(out, hex(8)); break;
      default:
        if (e >= '0' && e <= '7') {
          int v = e - '0';
          for (int k = 0; k < 2 && i + 1 < raw.size() && raw[i + 1] >= '0' && raw[i + 1] <= '7'; ++k) v = v * 8 + (raw[++i] - '0');
          tok::append_utf8(out, static_cast<char32_t>(v));
        } else {
          out += '\\';
          out += e;
        }
    }
  }
}

bool is_name_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool is_name_char(char c) { return is_name_start(c) || (c >= '0' && c <= '9'); }
bool is_digit(char c) { return c >= '0' && c <= '9'; }

class Lexer {
 public:
  explicit Lexer(std::string src) : s_(std::move(src)) {}

  std::vector<Token> run() {
    bool line_starting = true;
    while (pos_ < s_.size()) {
      const std::size_t open = find_open(pos_);
      if (open == std::string::npos) {
        emit_text(std::string_view(s_).substr(pos_));
        pos_ = s_.size();
        break;
      }
      const char kind = s_[open + 1];  // '{', '%' or '#'
      char sign = 0;
      std::size_t after = open + 2;
      if (after < s_.size() && (s_[after] == '-' || s_[after] == '+')) sign = s_[after++];
      const std::string_view text = std::string_view(s_).substr(pos_, open - pos_);
      // {% raw %} ... {% endraw %}
      std::size_t raw_end = 0;
      if (kind == '%' && match_keyword_tag(after, "raw", &raw_end)) {
        emit_text(strip_before_tag(text, sign, false, line_starting));
        advance_lines(open);
        pos_ = raw_end;
        line_starting = lex_raw();
        continue;
      }
      emit_text(strip_before_tag(text, sign, kind == '{', line_starting));
      advance_lines(open);
      pos_ = after;
      if (kind == '#') {
        line_starting = lex_comment();
      } else {
        line_starting = lex_tag(kind == '{');
      }
    }
    Token end;
    end.type = Tok::End;
    end.line = line_;
    tokens_.push_back(end);
    return std::move(tokens_);
  }

 private:
  std::size_t find_open(std::size_t from) const {
    for (std::size_t i = s_.find('{', from); i != std::string::npos; i = s_.find('{', i + 1))
      if (i + 1 < s_.size() && (s_[i + 1] == '{' || s_[i + 1] == '%' || s_[i + 1] == '#')) return i;
    return std::string::npos;
  }

  void advance_lines(std::size_t to) {
    line_ += static_cast<int>(count_lines(std::string_view(s_).substr(line_pos_, to - line_pos_)));
    line_pos_ = to;
  }

  void emit_text(std::string_view t) {
    if (t.empty()) return;
    Token tk;
    tk.type = Tok::Text;
    tk.value = std::string(t);
    tk.line = line_;
    tokens_.push_back(std::move(tk));
  }

  // At `p` (after "{%" and its sign): \s* KEYWORD \s* ("-%}" \s* | "%}"); *end is past it.
  bool match_keyword_tag(std::size_t p, std::string_view kw, std::size_t* end, bool trim_newline = false) const {
    p += py_space_run(s_, p);
    if (s_.compare(p, kw.size(), kw) != 0) return false;
    p += kw.size();
    p += py_space_run(s_, p);
    if (s_.compare(p, 3, "-%}") == 0) {
      p += 3;
      p += py_space_run(s_, p);
    } else if (s_.compare(p, 2, "%}") == 0) {
      p += 2;
      if (trim_newline && p < s_.size() && s_[p] == '\n') ++p;
    } else {
      return false;
    }
    *end = p;
    return true;
  }

  bool lex_raw() {
    // The first "{%[-+]? endraw ..." ends it.
    for (std::size_t i = s_.find("{%", pos_); i != std::string::npos; i = s_.find("{%", i + 1)) {
      std::size_t after = i + 2;
      char sign = 0;
      if (after < s_.size() && (s_[after] == '-' || s_[after] == '+')) sign = s_[after++];
      std::size_t end = 0;
      if (match_keyword_tag(after, "endraw", &end, true)) {
        emit_text(strip_before_tag(std::string_view(s_).substr(pos_, i - pos_), sign, false, false));
        advance_lines(end);
        pos_ = end;
        return s_[end - 1] == '\n';
      }
    }
    fail(line_, "missing end of raw directive ({% endraw %})");
  }

  bool lex_comment() {
    for (std::size_t i = s_.find("#}", pos_); i != std::string::npos; i = s_.find("#}", i + 1)) {
      std::size_t end = i + 2;
      if (i > pos_ && s_[i - 1] == '-') {
        end += py_space_run(s_, end);
      } else if (i > pos_ && s_[i - 1] == '+') {
      } else if (end < s_.size() && s_[end] == '\n') {
        ++end;
      }
      advance_lines(end);
      pos_ = end;
      return s_[end - 1] == '\n';
    }
    fail(line_, "missing end of comment tag (#})");
  }

  // Tokens of one {{ }} or {% %}; returns whether the end tag's match ended with a newline.
  bool lex_tag(bool variable) {
    Token begin;
    begin.type = variable ? Tok::VarBegin : Tok::BlockBegin;
    begin.line = line_;
    tokens_.push_back(begin);
    std::vector<char> balance;
    for (;;) {
      if (pos_ >= s_.size()) fail(line_, std::string("unexpected end of template: missing ") + (variable ? "}}" : "%}"));
      if (balance.empty()) {
        std::size_t end = 0;
        if (variable) {
          if (s_.compare(pos_, 3, "-}}") == 0) end = pos_ + 3 + py_space_run(s_, pos_ + 3);
          else if (s_.compare(pos_, 2, "}}") == 0) end = pos_ + 2;
        } else {
          if (s_.compare(pos_, 3, "-%}") == 0) end = pos_ + 3 + py_space_run(s_, pos_ + 3);
          else if (s_.compare(pos_, 3, "+%}") == 0) end = pos_ + 3;
          else if (s_.compare(pos_, 2, "%}") == 0) end = pos_ + 2 + (pos_ + 2 < s_.size() && s_[pos_ + 2] == '\n');
        }
        if (end) {
          Token tk;
          tk.type = variable ? Tok::VarEnd : Tok::BlockEnd;
          tk.line = line_;
          tokens_.push_back(tk);
          advance_lines(end);
          pos_ = end;
          return s_[end - 1] == '\n';
        }
      }
      const char c = s_[pos_];
      if (const std::size_t ws = py_space_run(s_, pos_)) {
        advance_lines(pos_ + ws);
        pos_ += ws;
        continue;
      }
      Token tk;
      tk.line = line_;
      if (is_digit(c)) {
        lex_number(tk);
      } else if (is_name_start(c)) {
        std::size_t e = pos_;
        while (e < s_.size() && is_name_char(s_[e])) ++e;
        tk.type = Tok::Name;
        tk.value = s_.substr(pos_, e - pos_);
        pos_ = e;
      } else if (c == '\'' || c == '"') {
        std::size_t e = pos_ + 1;
        while (e < s_.size() && s_[e] != c) e += s_[e] == '\\' ? 2 : 1;
        if (e >= s_.size()) fail(line_, "unterminated string literal");
        tk.type = Tok::String;
        unescape_python(std::string_view(s_).substr(pos_ + 1, e - pos_ - 1), tk.value, line_);
        advance_lines(e + 1);
        pos_ = e + 1;
      } else {
        static const char* const kTwo[] = {"//", "**", "==", "!=", ">=", "<="};
        tk.type = Tok::Op;
        for (const char* op : kTwo)
          if (s_.compare(pos_, 2, op) == 0) tk.value = op;
        if (tk.value.empty()) {
          if (std::string_view("+-/*%~[](){}><=.:|,;").find(c) == std::string_view::npos)
            fail(line_, std::string("unexpected character '") + c + "' in a tag");
          tk.value = std::string(1, c);
        }
        pos_ += tk.value.size();
        if (c == '(' || c == '[' || c == '{') {
          balance.push_back(c == '(' ? ')' : c == '[' ? ']' : '}');
        } else if (c == ')' || c == ']' || c == '}') {
          if (balance.empty()) fail(line_, std::string("unexpected '") + c + "'");
          if (balance.back() != c) fail(line_, std::string("unexpected '") + c + "', expected '" + balance.back() + "'");
          balance.pop_back();
        }
      }
      tokens_.push_back(std::move(tk));
    }
  }

  void lex_number(Token& tk) {
    std::size_t e = pos_;
    auto digits = [&] {
      while (e < s_.size() && (is_digit(s_[e]) || (s_[e] == '_' && e + 1 < s_.size() && is_digit(s_[e + 1])))) ++e;
    };
    digits();
    bool is_float = false;
    const bool after_dot = !tokens_.empty() && tokens_.back().type == Tok::Op && tokens_.back().value == ".";
    if (!after_dot && e + 1 < s_.size() && s_[e] == '.' && is_digit(s_[e + 1])) {
      is_float = true;
      ++e;
      digits();
    }
    if (!after_dot && e < s_.size() && (s_[e] == 'e' || s_[e] == 'E')) {
      std::size_t k = e + 1;
      if (k < s_.size() && (s_[k] == '+' || s_[k] == '-')) ++k;
      if (k < s_.size() && is_digit(s_[k])) {
        is_float = true;
        e = k;
        digits();
      }
    }
    std::string text;
    for (std::size_t k = pos_; k < e; ++k)
      if (s_[k] != '_') text += s_[k];
    pos_ = e;
    if (is_float) {
      tk.type = Tok::Float;
      tk.fval = std::strtod(text.c_str(), nullptr);
    } else {
      tk.type = Tok::Int;
      errno = 0;
      tk.ival = std::strtoll(text.c_str(), nullptr, 10);
      if (errno == ERANGE) fail(tk.line, "integer literal out of range");
    }
    tk.value = text;
  }

  std::string s_;
  std::size_t pos_ = 0;
  std::size_t line_pos_ = 0;
  int line_ = 1;
  std::vector<Token> tokens_;
};

}  // namespace

std::vector<Token> lex(std::string_view source) { return Lexer(normalize_source(source)).run(); }

}  // namespace kvgate::jinja
