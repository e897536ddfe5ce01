#include "reports/html_escape.h"
#include "reports/html_page.h"
#include "reports/markup.h"
#include "reports/report_section.h"

namespace kvgate::reports {

void html_sections(Markup& m, const std::vector<ReportSection>& sections) {
  for (const ReportSection& s : sections) {
    m.open("section", {{"id", s.id}});
    m.element("h2", s.title);
    std::vector<Column> cols;
    for (const std::string& c : s.columns) cols.push_back({c});
    table_head(m, cols);
    for (const std::vector<std::string>& row : s.rows) {
      m.open("tr");
      for (const std::string& c : row) cell(m, c.empty() ? "\u2013" : c);
      m.close();
    }
    table_end(m);
    if (!s.conclusion.empty()) m.element("p", s.conclusion, {{"class", "conclusion"}});
    m.close().newline();
  }
}

std::string markdown_sections(const std::vector<ReportSection>& sections) {
  std::string out;
  for (const ReportSection& s : sections) {
    out += "\n#### " + escape_markdown(s.title) + "\n\n|";
    for (const std::string& c : s.columns) out += " " + escape_markdown(c) + " |";
    out += "\n|";
    for (std::size_t i = 0; i < s.columns.size(); ++i) out += " --- |";
    out += "\n";
    for (const std::vector<std::string>& row : s.rows) {
      out += "|";
      for (const std::string& c : row) out += " " + (c.empty() ? std::string("\u2013") : escape_markdown(c)) + " |";
      out += "\n";
    }
    if (!s.conclusion.empty()) out += "\n**" + escape_markdown(s.conclusion) + "**\n";
  }
  return out;
}

}  // namespace kvgate::reports
