// The charts of the reports, as inline SVG: no script, no external resource, every chart with a
// <title>, an x axis and a y axis (<g class="axis x-axis"> / "y-axis"), tick labels and axis titles,
// so each one reads on paper and to a screen reader. Colours are fixed here (restrained palette);
// the page's CSS sets only fonts.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kvgate::reports {

struct Tick {
  double value = 0.0;
  std::string text{};
};

struct Axis {
  std::string title{};
  double min = 0.0, max = 1.0;
  bool log2 = false;           // positions by log2(value) (context lengths)
  std::vector<Tick> ticks{};   // empty: about five round ticks between min and max
};

// Colour of series i: 0 is the baseline (dark grey), 1.. the candidates.
const char* series_colour(int index);

struct Series {
  std::string name{};
  int colour = 0;
  std::vector<double> x{}, y{};
  std::vector<double> lo{}, hi{};           // a confidence band; empty: none
  std::vector<std::string> point_titles{};  // a tooltip per point (optional)
  bool dashed = false;
  bool connect = true;                      // draw the line through the points
};

struct HLine {  // a horizontal reference (the margin)
  double y = 0.0;
  std::string label{};
};

struct VMarker {  // a vertical marker (the night a regression entered)
  double x = 0.0;
  std::string label{};
};

struct LineChart {
  std::string title{};
  Axis x{}, y{};
  std::vector<Series> series{};
  std::vector<HLine> hlines{};
  std::vector<VMarker> markers{};
  int width = 640, height = 300;
};
std::string render_svg(const LineChart& chart);

enum class HeatScale { accuracy, difference };  // 0..1 (low = red), or -1..1 (loss red, gain blue)

struct Heatmap {
  std::string title{};
  std::string x_title{}, y_title{};
  std::vector<std::string> columns{}, rows{};   // rows from top to bottom
  std::vector<std::optional<double>> values{};  // rows.size() * columns.size(), row-major; empty: no trials
  std::vector<std::string> cell_titles{};       // tooltips, same layout (optional)
  HeatScale scale = HeatScale::accuracy;
  int cell_width = 52, cell_height = 22;
};
std::string render_svg(const Heatmap& map);

struct ForestRow {
  std::string label{};
  double estimate = 0.0;
  double lo = 0.0;
  std::optional<double> hi{};  // empty: unbounded above
  std::string verdict{};       // "PASS", "FAIL", "INCONCLUSIVE": colours the interval
};

// Ratios with their one-sided bounds against the margin, one row per task.
struct ForestPlot {
  std::string title{};
  std::string x_title{};
  double margin = 0.95;
  std::vector<ForestRow> rows{};
  int width = 640;
};
std::string render_svg(const ForestPlot& plot);

enum class Outcome : std::uint8_t { both_pass, both_fail, lost, gained };

// One square per paired trial (GSM8K problems), `columns` to a row, flips in colour.
struct OutcomeGrid {
  std::string title{};
  std::vector<Outcome> cells{};
  std::vector<std::string> titles{};  // a tooltip per cell ("" for none)
  int columns = 50;
};
std::string render_svg(const OutcomeGrid& grid);

// Context lengths as the reports write them: 4096 -> "4k", 1048576 -> "1M", 0 -> "-".
std::string token_label(std::int64_t tokens);

}  // namespace kvgate::reports
