// The frame every HTML report shares: one self-contained XHTML-compatible file (well-formed XML, so
// it parses with any XML parser), inline CSS with system fonts and print rules, no script and no
// external resource. Helpers for the pieces the pages repeat (badges, tables, number cells).
#pragma once
#include <string>
#include <vector>

#include "harness/compare/comparison.h"
#include "reports/markup.h"

namespace kvgate::reports {

struct PageOptions {
  std::string title{};        // <title> and the heading
  std::string subtitle{};
  std::string generated_at{};
  std::string footer{};       // a line of provenance (kvgate version, options)
};

// The page's Content-Security-Policy (a <meta> in its head): inline styles and data: images only.
extern const char* const kContentSecurityPolicy;

// <!DOCTYPE html><html>...<body><main>{body}</main></body></html>
std::string html_page(const PageOptions& o, const std::string& body);

const char* verdict_class(compare::Verdict v);  // "pass", "fail", "inconclusive"
void badge(Markup& m, compare::Verdict v);
void badge(Markup& m, const std::string& text, const std::string& css_class);

// An id attribute for a name: [a-z0-9-] only, prefixed, with `index` to keep it unique.
std::string anchor(const std::string& prefix, const std::string& name, std::size_t index);

struct Column {
  std::string head{};
  bool numeric = false;
  std::string title{};  // a tooltip explaining the column
};
void table_head(Markup& m, const std::vector<Column>& cols);  // opens <table>, writes <thead>, opens <tbody>
void table_end(Markup& m);                                     // closes <tbody> and <table>
void cell(Markup& m, const std::string& text, bool numeric = false, const std::string& css_class = "");

// <pre class="text"> with the (hostile) text escaped and cut in the middle when long.
void text_block(Markup& m, const std::string& text, std::size_t head = 900, std::size_t tail = 300);

}  // namespace kvgate::reports
