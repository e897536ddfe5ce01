#include "reports/report_writer.h"

#include "harness/compare/comparison_json.h"
#include <filesystem>
#include <tuple>

#include "harness/core/atomic_file.h"
#include "harness/core/error.h"
#include "harness/core/manifest.h"
#include "reports/html_report.h"
#include "reports/junit_report.h"
#include "reports/markdown_report.h"

namespace kvgate::reports {

const char* to_string(ReportFormat f) {
  switch (f) {
    case ReportFormat::json: return "json";
    case ReportFormat::markdown: return "markdown";
    case ReportFormat::html: return "html";
    case ReportFormat::junit: return "junit";
  }
  return "?";
}

std::string generated_at(const ReportContext& ctx) { return ctx.generated_at.empty() ? utc_now_rfc3339() : ctx.generated_at; }

namespace {

class JsonWriter final : public ReportWriter {
 public:
  ReportFormat format() const override { return ReportFormat::json; }
  std::string render(const compare::Comparison& c, const ReportContext& ctx) const override {
    return compare::to_json(c, {.trial_pairs = ctx.json_trial_pairs}).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  }
};

class MarkdownWriter final : public ReportWriter {
 public:
  ReportFormat format() const override { return ReportFormat::markdown; }
  std::string render(const compare::Comparison& c, const ReportContext& ctx) const override { return render_markdown(c, ctx); }
};

class HtmlWriter final : public ReportWriter {
 public:
  ReportFormat format() const override { return ReportFormat::html; }
  std::string render(const compare::Comparison& c, const ReportContext& ctx) const override { return render_html(c, ctx); }
};

class JunitWriter final : public ReportWriter {
 public:
  ReportFormat format() const override { return ReportFormat::junit; }
  std::string render(const compare::Comparison& c, const ReportContext& ctx) const override { return render_junit(c, ctx); }
};

}  // namespace

std::unique_ptr<ReportWriter> make_report_writer(ReportFormat f) {
  switch (f) {
    case ReportFormat::json: return std::make_unique<JsonWriter>();
    case ReportFormat::markdown: return std::make_unique<MarkdownWriter>();
    case ReportFormat::html: return std::make_unique<HtmlWriter>();
    case ReportFormat::junit: return std::make_unique<JunitWriter>();
  }
  return nullptr;
}

void check_output_path(const std::string& path, const std::string& flag) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path p(path);
  if (path.empty() || fs::is_directory(p, ec))
    throw Error(flag + " " + path + ": not a file name: name the file to write, e.g. " + flag + " report.out");
  const fs::path dir = p.has_parent_path() ? p.parent_path() : fs::path(".");
  if (!fs::is_directory(dir, ec))
    throw Error(flag + " " + path + ": the directory " + dir.string() + " does not exist: create it first, or write elsewhere");
}

ReportFiles ReportFiles::in_directory(const std::string& dir) {
  const std::filesystem::path d(dir);
  return {.json = (d / "compare.json").string(), .markdown = (d / "report.md").string(), .html = (d / "report.html").string(),
          .junit = (d / "junit.xml").string()};
}

namespace {
std::vector<std::tuple<const std::string*, const char*, ReportFormat>> named(const ReportFiles& f) {
  return {{&f.json, "--json", ReportFormat::json}, {&f.markdown, "--markdown", ReportFormat::markdown},
          {&f.html, "--html", ReportFormat::html}, {&f.junit, "--junit", ReportFormat::junit}};
}
}  // namespace

void check_output_paths(const ReportFiles& files) {
  for (const auto& [path, flag, format] : named(files))
    if (!path->empty()) check_output_path(*path, flag);
}

void write_reports(const ReportFiles& files, const compare::Comparison& c, const ReportContext& ctx) {
  for (const auto& [path, flag, format] : named(files))
    if (!path->empty()) write_report(*path, format, c, ctx);
}

void write_report(const std::string& path, ReportFormat f, const compare::Comparison& c, const ReportContext& ctx) {
  write_file_atomic(path, make_report_writer(f)->render(c, ctx));
}

}  // namespace kvgate::reports
