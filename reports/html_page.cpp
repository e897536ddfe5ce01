#include "reports/html_page.h"

#include <cctype>

#include "reports/html_escape.h"

namespace kvgate::reports {

namespace {

// System fonts only; colours restrained; print rules keep figures and trials whole.
const char* const kCss = R"CSS(
:root { --ink: #1f2937; --muted: #6b7280; --line: #e5e7eb; --soft: #f9fafb;
  --pass: #15803d; --fail: #b91c1c; --inconclusive: #b45309; --info: #2563eb; }
* { box-sizing: border-box; }
html { -webkit-text-size-adjust: 100%; }
body { margin: 0; color: var(--ink); background: #ffffff;
  font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, "Noto Sans", "Liberation Sans", sans-serif; }
main { max-width: 1100px; margin: 0 auto; padding: 28px 32px 64px; }
header.page h1 { font-size: 23px; margin: 0; letter-spacing: -0.01em; }
header.page p { margin: 2px 0; color: var(--muted); }
h2 { font-size: 19px; margin: 44px 0 8px; padding-top: 14px; border-top: 1px solid var(--line); }
h3 { font-size: 15.5px; margin: 26px 0 6px; }
h4 { font-size: 14px; margin: 16px 0 4px; }
p { margin: 6px 0; }
.muted, .note { color: var(--muted); }
.note { font-size: 13px; }
code, .mono { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, "Liberation Mono", monospace; font-size: 0.92em; }
.banner { border-left: 8px solid var(--inconclusive); background: #fffbeb; padding: 16px 22px 14px; margin: 22px 0 10px; }
.banner.pass { border-color: var(--pass); background: #f0fdf4; }
.banner.fail { border-color: var(--fail); background: #fef2f2; }
.banner.neutral { border-color: #9ca3af; background: var(--soft); }
.banner.neutral .verdict { color: var(--ink); }
.banner .verdict { font-size: 32px; font-weight: 750; letter-spacing: 0.02em; margin: 0; line-height: 1.15; }
.banner.pass .verdict { color: var(--pass); }
.banner.fail .verdict { color: var(--fail); }
.banner.inconclusive .verdict { color: var(--inconclusive); }
.banner .headline { font-size: 17px; margin: 4px 0 8px; }
.banner ul { margin: 6px 0 0; padding-left: 20px; }
.banner li { margin: 3px 0; }
.badge { display: inline-block; padding: 0 8px; border-radius: 9px; font-size: 12px; font-weight: 650; color: #ffffff;
  background: var(--muted); vertical-align: 2px; letter-spacing: 0.02em; }
.badge.pass { background: var(--pass); }
.badge.fail { background: var(--fail); }
.badge.inconclusive { background: var(--inconclusive); }
.badge.warn { background: var(--inconclusive); }
.badge.info { background: var(--info); }
.badge.informative { background: #9ca3af; }
table { border-collapse: collapse; width: 100%; font-size: 13.5px; margin: 8px 0 14px; }
th, td { padding: 4px 8px; border-bottom: 1px solid var(--line); text-align: left; vertical-align: top; overflow-wrap: anywhere; }
th { font-weight: 600; color: #374151; border-bottom: 1.5px solid #d1d5db; font-size: 12.5px; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
tr.flagged td { background: #fef2f2; }
td.differs { background: #fffbeb; font-weight: 600; }
td.suspect { background: #fee2e2; font-weight: 600; }
td.better { color: var(--pass); font-weight: 600; }
td.worse { color: var(--fail); font-weight: 600; }
.kpis { display: flex; flex-wrap: wrap; gap: 10px 28px; margin: 10px 0; }
.kpi .value { font-size: 20px; font-weight: 650; font-variant-numeric: tabular-nums; }
.kpi .label { font-size: 12px; color: var(--muted); }
figure { margin: 12px 0 18px; }
figcaption { font-size: 13px; color: var(--muted); margin-top: 2px; max-width: 720px; }
.multiples { display: flex; flex-wrap: wrap; gap: 8px 22px; align-items: flex-start; }
svg.chart { max-width: 100%; height: auto; font-family: inherit; overflow: visible; }
svg .tick { font-size: 11px; fill: #4b5563; }
svg .axis-title { font-size: 12px; fill: #1f2937; }
svg .legend text { font-size: 12px; fill: #1f2937; }
svg .note { font-size: 11px; fill: #4b5563; }
svg .chart-title { font-size: 13px; font-weight: 600; fill: #1f2937; }
svg .cell-value { font-size: 10.5px; font-variant-numeric: tabular-nums; }
pre.text { white-space: pre-wrap; overflow-wrap: anywhere; margin: 4px 0 8px; padding: 8px 10px; background: var(--soft);
  border: 1px solid var(--line); border-radius: 4px; max-height: 24em; overflow: auto;
  font: 12px/1.45 ui-monospace, SFMono-Regular, Menlo, Consolas, "Liberation Mono", monospace; }
.side { display: grid; grid-template-columns: 1fr 1fr; gap: 12px; }
.side > div { min-width: 0; }
.trial { border: 1px solid var(--line); border-radius: 6px; padding: 8px 12px 4px; margin: 10px 0; }
.trial .head { font-weight: 600; }
.trial .label { font-size: 12px; font-weight: 600; color: #374151; margin-top: 4px; }
.callout { border: 1px solid #fde68a; background: #fffbeb; padding: 8px 12px; border-radius: 4px; margin: 10px 0; font-size: 14px; }
nav.toc { font-size: 13.5px; margin: 8px 0 0; }
nav.toc a { margin-right: 14px; color: var(--info); text-decoration: none; }
.placeholder { color: var(--muted); font-style: italic; }
footer.page { margin-top: 48px; padding-top: 10px; border-top: 1px solid var(--line); font-size: 12.5px; color: var(--muted); }
@media (max-width: 960px) { table { font-size: 12px; } th, td { padding: 3px 5px; } th.num { white-space: normal; } }
@media (max-width: 760px) { main { padding: 16px; } .side { grid-template-columns: 1fr; } }
@media print {
  body { font-size: 10.5pt; }
  main { max-width: none; padding: 0; }
  nav.toc { display: none; }
  h2, h3 { break-after: avoid; }
  figure, .trial, .banner, tr { break-inside: avoid; }
  pre.text { max-height: none; overflow: visible; }
  table { font-size: 8.5pt; } th, td { padding: 2px 4px; } th.num { white-space: normal; }
  .banner, .badge, td, svg { -webkit-print-color-adjust: exact; print-color-adjust: exact; }
}
@page { margin: 14mm 12mm; }
)CSS";

}  // namespace

const char* const kContentSecurityPolicy = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'";

std::string html_page(const PageOptions& o, const std::string& body) {
  Markup m;
  m.raw("<!DOCTYPE html>\n");
  m.open("html", {{"lang", "en"}});
  m.newline().open("head");
  m.empty("meta", {{"charset", "utf-8"}});
  // The browser itself refuses any script, font, image or request from elsewhere, should a string from
  // the data ever slip past the escaping: the page can only style itself.
  m.empty("meta", {{"http-equiv", "Content-Security-Policy"}, {"content", kContentSecurityPolicy}});
  m.empty("meta", {{"name", "viewport"}, {"content", "width=device-width, initial-scale=1"}});
  m.empty("meta", {{"name", "generator"}, {"content", "kvgate"}});
  m.element("title", o.title);
  m.open("style").raw(kCss).close();
  m.close().newline();
  m.open("body").open("main");
  m.open("header", {{"class", "page"}});
  m.element("h1", o.title);
  if (!o.subtitle.empty()) m.element("p", o.subtitle);
  if (!o.generated_at.empty()) m.element("p", "generated " + o.generated_at, {{"class", "note"}});
  m.close().newline();
  m.raw(body);
  m.open("footer", {{"class", "page"}});
  m.element("p", o.footer);
  m.close();
  m.close().close().close().newline();
  return m.str();
}

const char* verdict_class(compare::Verdict v) {
  switch (v) {
    case compare::Verdict::pass: return "pass";
    case compare::Verdict::fail: return "fail";
    case compare::Verdict::inconclusive: return "inconclusive";
  }
  return "inconclusive";
}

void badge(Markup& m, compare::Verdict v) { badge(m, compare::to_string(v), verdict_class(v)); }

void badge(Markup& m, const std::string& text, const std::string& css_class) {
  m.element("span", text, {{"class", "badge " + css_class}});
}

std::string anchor(const std::string& prefix, const std::string& name, std::size_t index) {
  std::string out = prefix + "-";
  for (char ch : name) {
    const unsigned char u = static_cast<unsigned char>(ch);
    if (std::isalnum(u) && u < 0x80) out += static_cast<char>(std::tolower(u));
    else if (out.back() != '-') out += '-';
  }
  return out + "-" + std::to_string(index);
}

void table_head(Markup& m, const std::vector<Column>& cols) {
  m.open("table").open("thead").open("tr");
  for (const Column& c : cols) {
    std::vector<Attr> attrs;
    if (c.numeric) attrs.push_back({"class", "num"});
    if (!c.title.empty()) attrs.push_back({"title", c.title});
    m.open("th", attrs).text(c.head).close();
  }
  m.close().close().open("tbody");
}

void table_end(Markup& m) { m.close().close().newline(); }

void cell(Markup& m, const std::string& text, bool numeric, const std::string& css_class) {
  std::string cls = numeric ? "num" : "";
  if (!css_class.empty()) cls += (cls.empty() ? "" : " ") + css_class;
  if (cls.empty()) m.open("td");
  else m.open("td", {{"class", cls}});
  m.text(text).close();
}

void text_block(Markup& m, const std::string& text, std::size_t head, std::size_t tail) {
  m.element("pre", truncate_middle(text, head, tail), {{"class", "text"}});
}

}  // namespace kvgate::reports
