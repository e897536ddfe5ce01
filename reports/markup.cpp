#include "reports/markup.h"

#include <cmath>
#include <cstdio>
#include <stdexcept>

#include "reports/html_escape.h"

namespace kvgate::reports {

void Markup::attrs_out(const Attr* begin, const Attr* end) {
  for (const Attr* a = begin; a != end; ++a) {
    out_ += ' ';
    out_ += a->name;
    out_ += "=\"";
    out_ += escape_html(a->value);
    out_ += '"';
  }
}

Markup& Markup::open(std::string_view tag, std::initializer_list<Attr> attrs) {
  out_ += '<';
  out_ += tag;
  attrs_out(attrs.begin(), attrs.end());
  out_ += '>';
  stack_.emplace_back(tag);
  return *this;
}

Markup& Markup::open(std::string_view tag, const std::vector<Attr>& attrs) {
  out_ += '<';
  out_ += tag;
  attrs_out(attrs.data(), attrs.data() + attrs.size());
  out_ += '>';
  stack_.emplace_back(tag);
  return *this;
}

Markup& Markup::close() {
  if (stack_.empty()) throw std::logic_error("Markup::close with no open element");
  out_ += "</" + stack_.back() + ">";
  stack_.pop_back();
  return *this;
}

Markup& Markup::close_all_to(std::size_t depth) {
  while (stack_.size() > depth) close();
  return *this;
}

Markup& Markup::text(std::string_view s) {
  out_ += escape_html(s);
  return *this;
}

Markup& Markup::raw(std::string_view s) {
  out_ += s;
  return *this;
}

Markup& Markup::element(std::string_view tag, std::string_view text, std::initializer_list<Attr> attrs) {
  open(tag, attrs);
  this->text(text);
  return close();
}

Markup& Markup::empty(std::string_view tag, std::initializer_list<Attr> attrs) {
  out_ += '<';
  out_ += tag;
  attrs_out(attrs.begin(), attrs.end());
  out_ += "/>";
  return *this;
}

Markup& Markup::empty(std::string_view tag, const std::vector<Attr>& attrs) {
  out_ += '<';
  out_ += tag;
  attrs_out(attrs.data(), attrs.data() + attrs.size());
  out_ += "/>";
  return *this;
}

const std::string& Markup::str() const {
  if (!stack_.empty()) throw std::logic_error("Markup: <" + stack_.back() + "> left open");
  return out_;
}

std::string num(double v, int decimals) {
  if (!std::isfinite(v)) v = 0.0;
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  std::string s = buf;
  if (s.find('.') != std::string::npos) {
    while (s.back() == '0') s.pop_back();
    if (s.back() == '.') s.pop_back();
  }
  if (s == "-0") s = "0";
  return s;
}

}  // namespace kvgate::reports
