// A section a command adds to its reports beside the comparison (the gate's calibration ladder):
// a titled table and a closing sentence, rendered by the HTML writer under the verdict and by the
// Markdown writer after its summary (report_sections.cpp).
#pragma once
#include <string>
#include <vector>

namespace kvgate::reports {

struct ReportSection {
  std::string id{};       // the HTML anchor
  std::string title{};
  std::vector<std::string> columns{};
  std::vector<std::vector<std::string>> rows{};  // each as many cells as columns
  std::string conclusion{};  // shown in bold under the table; "" for none
};

class Markup;
void html_sections(Markup& m, const std::vector<ReportSection>& sections);
std::string markdown_sections(const std::vector<ReportSection>& sections);

}  // namespace kvgate::reports
