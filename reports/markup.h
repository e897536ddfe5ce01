// A small writer of well-formed markup (HTML written as XHTML-compatible polyglot, and inline SVG):
// every element opened is closed, in order; every text and attribute value is escaped
// (html_escape.h). Trusted markup made by another Markup goes in with raw().
#pragma once
#include <cstddef>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

namespace kvgate::reports {

struct Attr {
  std::string_view name;
  std::string value;
};

class Markup {
 public:
  Markup& open(std::string_view tag, std::initializer_list<Attr> attrs = {});
  Markup& open(std::string_view tag, const std::vector<Attr>& attrs);
  Markup& close();                       // the innermost open element
  Markup& close_all_to(std::size_t depth);  // closes until `depth` elements stay open
  std::size_t depth() const { return stack_.size(); }
  Markup& text(std::string_view s);      // escaped
  Markup& raw(std::string_view s);       // trusted markup (another Markup's str())
  // <tag attrs>text</tag>
  Markup& element(std::string_view tag, std::string_view text, std::initializer_list<Attr> attrs = {});
  // <tag attrs/> (void HTML elements such as meta and br, and childless SVG shapes)
  Markup& empty(std::string_view tag, std::initializer_list<Attr> attrs = {});
  Markup& empty(std::string_view tag, const std::vector<Attr>& attrs);
  Markup& newline() { out_ += '\n'; return *this; }
  // The markup; throws std::logic_error if an element is still open (a bug in a writer).
  const std::string& str() const;

 private:
  void attrs_out(const Attr* begin, const Attr* end);
  std::string out_;
  std::vector<std::string> stack_;
};

// A number for an SVG coordinate: at most `decimals` decimals, trailing zeros dropped ("12.5", "3").
std::string num(double v, int decimals = 1);

}  // namespace kvgate::reports
