#include "reports/svg_charts.h"

#include <algorithm>
#include <cmath>

#include "reports/markup.h"

namespace kvgate::reports {

namespace {

constexpr double kCharWidth = 6.6;  // approximate advance of a 11-12 px system sans character
const char* const kInk = "#1f2937";
const char* const kMuted = "#6b7280";
const char* const kGrid = "#e5e7eb";
const char* const kRed = "#b91c1c";

struct Scale {
  double d0 = 0, d1 = 1, r0 = 0, r1 = 1;
  bool log2 = false;
  double t(double v) const { return log2 ? std::log2(std::max(v, 1e-300)) : v; }
  double operator()(double v) const {
    const double a = t(d0), b = t(d1);
    if (!(b > a)) return (r0 + r1) / 2;
    return r0 + (t(v) - a) / (b - a) * (r1 - r0);
  }
};

// About `target` round ticks covering [lo, hi].
std::vector<Tick> nice_ticks(double lo, double hi, int target = 5) {
  std::vector<Tick> ticks;
  if (!(hi > lo)) return {{lo, num(lo, 3)}};
  const double raw = (hi - lo) / target;
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  double step = mag;
  for (double m : {1.0, 2.0, 2.5, 5.0, 10.0})
    if (raw <= m * mag) {
      step = m * mag;
      break;
    }
  const int decimals = std::max(0, static_cast<int>(-std::floor(std::log10(step) + 1e-9)) + (step / mag == 2.5 ? 1 : 0));
  for (double v = std::ceil(lo / step - 1e-9) * step; v <= hi + step * 1e-9; v += step)
    ticks.push_back({std::abs(v) < step * 1e-9 ? 0.0 : v, num(std::abs(v) < step * 1e-9 ? 0.0 : v, decimals)});
  return ticks;
}

std::vector<Tick> ticks_of(const Axis& a) { return a.ticks.empty() ? nice_ticks(a.min, a.max) : a.ticks; }

double text_width(const std::string& s) {
  std::size_t cps = 0;
  for (char ch : s) cps += (static_cast<unsigned char>(ch) & 0xC0) != 0x80;
  return static_cast<double>(cps) * kCharWidth;
}

void open_svg(Markup& m, const std::string& title, double width, double height) {
  m.open("svg", {{"class", "chart"},
                 {"viewBox", "0 0 " + num(width) + " " + num(height)},
                 {"width", num(width)},
                 {"height", num(height)},
                 {"role", "img"},
                 {"aria-label", title}});
  m.element("title", title);
}

// x axis along the bottom of the plot area [x0, x1] at y = y1.
void x_axis(Markup& m, const Axis& a, const Scale& sx, double x0, double x1, double y1, const std::vector<Tick>& ticks) {
  m.open("g", {{"class", "axis x-axis"}});
  m.empty("line", {{"x1", num(x0)}, {"y1", num(y1)}, {"x2", num(x1)}, {"y2", num(y1)}, {"stroke", kInk}});
  for (const Tick& t : ticks) {
    const double x = sx(t.value);
    m.empty("line", {{"x1", num(x)}, {"y1", num(y1)}, {"x2", num(x)}, {"y2", num(y1 + 4)}, {"stroke", kInk}});
    m.element("text", t.text, {{"class", "tick"}, {"x", num(x)}, {"y", num(y1 + 16)}, {"text-anchor", "middle"}});
  }
  m.element("text", a.title, {{"class", "axis-title"}, {"x", num((x0 + x1) / 2)}, {"y", num(y1 + 34)}, {"text-anchor", "middle"}});
  m.close();
}

// y axis along the left of the plot area [y0, y1] at x = x0; gridlines across to x1.
void y_axis(Markup& m, const Axis& a, const Scale& sy, double x0, double x1, double y0, double y1, const std::vector<Tick>& ticks,
            bool grid, double title_x) {
  m.open("g", {{"class", "axis y-axis"}});
  for (const Tick& t : ticks) {
    const double y = sy(t.value);
    if (grid) m.empty("line", {{"class", "grid"}, {"x1", num(x0)}, {"y1", num(y)}, {"x2", num(x1)}, {"y2", num(y)}, {"stroke", kGrid}});
    m.empty("line", {{"x1", num(x0 - 4)}, {"y1", num(y)}, {"x2", num(x0)}, {"y2", num(y)}, {"stroke", kInk}});
    m.element("text", t.text, {{"class", "tick"}, {"x", num(x0 - 7)}, {"y", num(y + 4)}, {"text-anchor", "end"}});
  }
  m.empty("line", {{"x1", num(x0)}, {"y1", num(y0)}, {"x2", num(x0)}, {"y2", num(y1)}, {"stroke", kInk}});
  const double cy = (y0 + y1) / 2;
  m.element("text", a.title,
            {{"class", "axis-title"}, {"x", num(title_x)}, {"y", num(cy)}, {"text-anchor", "middle"},
             {"transform", "rotate(-90 " + num(title_x) + " " + num(cy) + ")"}});
  m.close();
}

struct LegendItem {
  std::string name;
  std::string colour;
  bool dashed = false;
  bool square = false;
};

// Lays the legend out in rows across `width` starting at x0; returns the rows used.
int legend_rows(const std::vector<LegendItem>& items, double x0, double width) {
  int rows = items.empty() ? 0 : 1;
  double x = x0;
  for (const LegendItem& it : items) {
    const double w = 26 + text_width(it.name) + 14;
    if (x + w > width && x > x0) ++rows, x = x0;
    x += w;
  }
  return rows;
}

void legend(Markup& m, const std::vector<LegendItem>& items, double x0, double y0, double width) {
  if (items.empty()) return;
  m.open("g", {{"class", "legend"}});
  double x = x0, y = y0;
  for (const LegendItem& it : items) {
    const double w = 26 + text_width(it.name) + 14;
    if (x + w > width && x > x0) x = x0, y += 16;
    if (it.square)
      m.empty("rect", {{"x", num(x)}, {"y", num(y - 9)}, {"width", "10"}, {"height", "10"}, {"fill", it.colour}});
    else
      m.empty("line", {{"x1", num(x)}, {"y1", num(y - 4)}, {"x2", num(x + 20)}, {"y2", num(y - 4)}, {"stroke", it.colour},
                       {"stroke-width", "2.5"}, {"stroke-dasharray", it.dashed ? "5 3" : "none"}});
    m.element("text", it.name, {{"x", num(x + (it.square ? 14 : 26))}, {"y", num(y)}});
    x += w;
  }
  m.close();
}

std::string hex2(int v) {
  static const char* h = "0123456789abcdef";
  v = std::clamp(v, 0, 255);
  return {h[v >> 4], h[v & 15]};
}

// Linear mix of two #rrggbb colours, t in [0, 1].
std::string mix(const char* a, const char* b, double t) {
  t = std::clamp(t, 0.0, 1.0);
  auto channel = [&](int i) {
    const int ca = std::stoi(std::string(a + 1 + 2 * i, 2), nullptr, 16), cb = std::stoi(std::string(b + 1 + 2 * i, 2), nullptr, 16);
    return static_cast<int>(std::lround(ca + (cb - ca) * t));
  };
  return "#" + hex2(channel(0)) + hex2(channel(1)) + hex2(channel(2));
}

const char* verdict_colour(const std::string& v) {
  if (v == "PASS") return "#15803d";
  if (v == "FAIL") return kRed;
  if (v == "INCONCLUSIVE") return "#b45309";
  return kInk;
}

}  // namespace

const char* series_colour(int index) {
  static const char* const palette[] = {"#4b5563", "#2563eb", "#ea580c", "#7c3aed", "#0d9488", "#db2777"};
  if (index <= 0) return palette[0];
  return palette[1 + (index - 1) % 5];
}

std::string token_label(std::int64_t b) {
  if (b == 0) return "-";
  if (b % (1024 * 1024) == 0) return std::to_string(b / (1024 * 1024)) + "M";
  if (b % 1024 == 0) return std::to_string(b / 1024) + "k";
  return std::to_string(b);
}

std::string render_svg(const LineChart& c) {
  const double width = c.width;
  std::vector<LegendItem> items;
  for (const Series& s : c.series) items.push_back({s.name, series_colour(s.colour), s.dashed, false});
  const double left = 62, right = 18;
  const int lrows = legend_rows(items, left, width - right);
  const double top = 14 + 16.0 * lrows + (c.markers.empty() ? 0 : 14), bottom = 46;
  const double height = c.height + 16.0 * lrows;
  const double x0 = left, x1 = width - right, y0 = top, y1 = height - bottom;
  Scale sx{c.x.min, c.x.max, x0 + 8, x1 - 8, c.x.log2};
  Scale sy{c.y.min, c.y.max, y1, y0, c.y.log2};

  Markup m;
  open_svg(m, c.title, width, height);
  legend(m, items, left, 14, width - right);
  y_axis(m, c.y, sy, x0, x1, y0, y1, ticks_of(c.y), true, 16);
  // Bands first, under every line.
  for (const Series& s : c.series) {
    if (s.lo.size() != s.x.size() || s.hi.size() != s.x.size() || s.x.empty()) continue;
    std::string d;
    if (!s.connect || s.x.size() == 1) {  // separate points: an error bar with caps at each
      for (std::size_t i = 0; i < s.x.size(); ++i) {
        const double x = sx(s.x[i]), top = sy(s.hi[i]), bottom = sy(s.lo[i]);
        m.empty("path", {{"class", "errorbar"},
                         {"d", "M" + num(x) + "," + num(top) + "V" + num(bottom) + "M" + num(x - 7) + "," + num(top) + "H" + num(x + 7) +
                                   "M" + num(x - 7) + "," + num(bottom) + "H" + num(x + 7)},
                         {"fill", "none"}, {"stroke", series_colour(s.colour)}, {"stroke-width", "2"}});
      }
      continue;
    } else {
      for (std::size_t i = 0; i < s.x.size(); ++i) d += (i == 0 ? "M" : "L") + num(sx(s.x[i])) + "," + num(sy(s.hi[i]));
      for (std::size_t i = s.x.size(); i-- > 0;) d += "L" + num(sx(s.x[i])) + "," + num(sy(s.lo[i]));
      d += "Z";
    }
    m.empty("path", {{"class", "band"}, {"d", d}, {"fill", series_colour(s.colour)}, {"fill-opacity", "0.14"}, {"stroke", "none"}});
  }
  for (const HLine& h : c.hlines) {
    const double y = sy(h.y);
    m.empty("line", {{"class", "reference"}, {"x1", num(x0)}, {"y1", num(y)}, {"x2", num(x1)}, {"y2", num(y)}, {"stroke", kInk},
                     {"stroke-dasharray", "2 3"}});
    m.element("text", h.label, {{"class", "note"}, {"x", num(x1 - 2)}, {"y", num(y - 4)}, {"text-anchor", "end"}});
  }
  for (const VMarker& v : c.markers) {
    const double x = sx(v.x);
    m.empty("line", {{"class", "marker"}, {"x1", num(x)}, {"y1", num(y0 - 4)}, {"x2", num(x)}, {"y2", num(y1)}, {"stroke", kRed},
                     {"stroke-width", "1.5"}, {"stroke-dasharray", "4 3"}});
    const bool near_right = x > (x0 + x1) / 2;
    m.element("text", v.label, {{"class", "note marker-label"}, {"x", num(near_right ? x - 4 : x + 4)}, {"y", num(y0 - 6)},
                                {"text-anchor", near_right ? "end" : "start"}, {"fill", kRed}});
  }
  // Lines and points: the baseline (colour 0) last, so it stays visible on top of a candidate.
  std::vector<const Series*> order;
  for (const Series& s : c.series)
    if (s.colour != 0) order.push_back(&s);
  for (const Series& s : c.series)
    if (s.colour == 0) order.push_back(&s);
  for (const Series* sp : order) {
    const Series& s = *sp;
    const char* col = series_colour(s.colour);
    if (s.connect && s.x.size() > 1) {
      std::string pts;
      for (std::size_t i = 0; i < s.x.size(); ++i) pts += (i ? " " : "") + num(sx(s.x[i])) + "," + num(sy(s.y[i]));
      m.empty("polyline", {{"class", "line"}, {"points", pts}, {"fill", "none"}, {"stroke", col}, {"stroke-width", "2"},
                           {"stroke-dasharray", s.dashed ? "6 4" : "none"}});
    }
    for (std::size_t i = 0; i < s.x.size(); ++i) {
      m.open("circle", {{"class", "point"}, {"cx", num(sx(s.x[i]))}, {"cy", num(sy(s.y[i]))}, {"r", s.connect ? "3.2" : "5"}, {"fill", col}});
      m.element("title", i < s.point_titles.size() ? s.point_titles[i] : s.name + ": " + num(s.y[i], 3));
      m.close();
    }
  }
  x_axis(m, c.x, sx, x0, x1, y1, ticks_of(c.x));
  m.close();
  return m.str();
}

std::string render_svg(const Heatmap& h) {
  double label_w = 0;
  for (const std::string& r : h.rows) label_w = std::max(label_w, text_width(r));
  const double x0 = 30 + label_w + 10, y0 = 30;
  const double x1 = x0 + h.cell_width * static_cast<double>(h.columns.size());
  const double y1 = y0 + h.cell_height * static_cast<double>(h.rows.size());
  const double width = std::max(x1 + 12, x0 + text_width(h.title) + 4), height = y1 + 44;
  Markup m;
  open_svg(m, h.title, width, height);
  m.element("text", h.title, {{"class", "chart-title"}, {"x", num(x0)}, {"y", "16"}});
  for (std::size_t r = 0; r < h.rows.size(); ++r)
    for (std::size_t col = 0; col < h.columns.size(); ++col) {
      const std::size_t i = r * h.columns.size() + col;
      const std::optional<double> v = i < h.values.size() ? h.values[i] : std::nullopt;
      const double x = x0 + h.cell_width * static_cast<double>(col), y = y0 + h.cell_height * static_cast<double>(r);
      std::string fill = "#f3f4f6", label = "", ink = kMuted;
      if (v) {
        double strength = 0;
        if (h.scale == HeatScale::accuracy) {
          strength = std::pow(1.0 - std::clamp(*v, 0.0, 1.0), 0.8);
          fill = mix("#f8fafc", "#b91c1c", strength);
          label = num(100 * *v, 0);
        } else {
          strength = std::min(1.0, std::abs(*v) / 0.5);
          fill = *v < 0 ? mix("#f8fafc", "#b91c1c", strength) : mix("#f8fafc", "#1d4ed8", strength);
          label = (*v > 0.0005 ? "+" : "") + num(100 * *v, 0);
          if (label == "-0" || label == "+0") label = "0";
        }
        ink = strength > 0.55 ? "#ffffff" : kInk;
      }
      m.open("g", {{"class", "cell"}});
      m.empty("rect", {{"x", num(x + 0.5)}, {"y", num(y + 0.5)}, {"width", num(h.cell_width - 1)}, {"height", num(h.cell_height - 1)},
                       {"fill", fill}});
      m.element("text", v ? label : "\u2013",
                {{"x", num(x + h.cell_width / 2.0)}, {"y", num(y + h.cell_height / 2.0 + 4)}, {"text-anchor", "middle"}, {"fill", ink},
                 {"class", "cell-value"}});
      if (i < h.cell_titles.size() && !h.cell_titles[i].empty()) m.element("title", h.cell_titles[i]);
      m.close();
    }
  m.open("g", {{"class", "axis x-axis"}});
  m.empty("line", {{"x1", num(x0)}, {"y1", num(y1)}, {"x2", num(x1)}, {"y2", num(y1)}, {"stroke", kInk}});
  for (std::size_t col = 0; col < h.columns.size(); ++col)
    m.element("text", h.columns[col],
              {{"class", "tick"}, {"x", num(x0 + h.cell_width * (col + 0.5))}, {"y", num(y1 + 15)}, {"text-anchor", "middle"}});
  m.element("text", h.x_title, {{"class", "axis-title"}, {"x", num((x0 + x1) / 2)}, {"y", num(y1 + 33)}, {"text-anchor", "middle"}});
  m.close();
  m.open("g", {{"class", "axis y-axis"}});
  m.empty("line", {{"x1", num(x0)}, {"y1", num(y0)}, {"x2", num(x0)}, {"y2", num(y1)}, {"stroke", kInk}});
  for (std::size_t r = 0; r < h.rows.size(); ++r)
    m.element("text", h.rows[r], {{"class", "tick"}, {"x", num(x0 - 6)}, {"y", num(y0 + h.cell_height * (r + 0.5) + 4)}, {"text-anchor", "end"}});
  const double cy = (y0 + y1) / 2;
  m.element("text", h.y_title, {{"class", "axis-title"}, {"x", "14"}, {"y", num(cy)}, {"text-anchor", "middle"},
                                {"transform", "rotate(-90 14 " + num(cy) + ")"}});
  m.close();
  m.close();
  return m.str();
}

std::string render_svg(const ForestPlot& p) {
  double label_w = 0;
  for (const ForestRow& r : p.rows) label_w = std::max(label_w, text_width(r.label));
  const double x0 = 34 + label_w + 10, x1 = p.width - 24, y0 = 30, row_h = 26;
  const double y1 = y0 + row_h * static_cast<double>(std::max<std::size_t>(p.rows.size(), 1));
  const double height = y1 + 46;
  double lo = std::min(p.margin, 1.0), hi = 1.0;
  for (const ForestRow& r : p.rows) {
    if (std::isfinite(r.lo)) lo = std::min(lo, r.lo);
    if (std::isfinite(r.estimate)) lo = std::min(lo, r.estimate), hi = std::max(hi, r.estimate);
    if (r.hi && std::isfinite(*r.hi)) hi = std::max(hi, *r.hi);
  }
  lo = std::max(0.0, lo - 0.02);
  hi = std::min(hi + 0.02, std::max(2.0, lo + 0.1));
  const Scale sx{lo, hi, x0 + 6, x1 - 6, false};
  Markup m;
  open_svg(m, p.title, p.width, height);
  std::vector<LegendItem> items = {{"PASS", verdict_colour("PASS"), false, true},
                                   {"FAIL", verdict_colour("FAIL"), false, true},
                                   {"INCONCLUSIVE", verdict_colour("INCONCLUSIVE"), false, true}};
  legend(m, items, x0, 16, p.width);
  const double xm = sx(p.margin), xone = sx(1.0);
  m.empty("line", {{"class", "reference"}, {"x1", num(xone)}, {"y1", num(y0)}, {"x2", num(xone)}, {"y2", num(y1)}, {"stroke", kGrid},
                   {"stroke-width", "1.5"}});
  m.empty("line", {{"class", "margin"}, {"x1", num(xm)}, {"y1", num(y0 - 4)}, {"x2", num(xm)}, {"y2", num(y1)}, {"stroke", kInk},
                   {"stroke-dasharray", "4 3"}});
  for (std::size_t i = 0; i < p.rows.size(); ++i) {
    const ForestRow& r = p.rows[i];
    const double y = y0 + row_h * (i + 0.5);
    const char* col = verdict_colour(r.verdict);
    const double a = sx(std::clamp(r.lo, lo, hi));
    const bool open_end = !r.hi || !std::isfinite(*r.hi) || *r.hi > hi;
    const double b = open_end ? x1 : sx(*r.hi);
    m.open("g", {{"class", "interval"}});
    m.element("title", r.label + ": ratio " + num(r.estimate, 4) + ", one-sided bounds [" + num(r.lo, 4) + ", " +
                           (r.hi ? num(*r.hi, 4) : std::string("unbounded")) + "], " + r.verdict);
    m.empty("line", {{"x1", num(a)}, {"y1", num(y)}, {"x2", num(b)}, {"y2", num(y)}, {"stroke", col}, {"stroke-width", "3"}});
    m.empty("line", {{"x1", num(a)}, {"y1", num(y - 6)}, {"x2", num(a)}, {"y2", num(y + 6)}, {"stroke", col}, {"stroke-width", "2"}});
    if (open_end)
      m.empty("path", {{"d", "M" + num(b - 7) + "," + num(y - 5) + "L" + num(b) + "," + num(y) + "L" + num(b - 7) + "," + num(y + 5)},
                       {"fill", "none"}, {"stroke", col}, {"stroke-width", "2"}});
    else
      m.empty("line", {{"x1", num(b)}, {"y1", num(y - 6)}, {"x2", num(b)}, {"y2", num(y + 6)}, {"stroke", col}, {"stroke-width", "2"}});
    if (std::isfinite(r.estimate) && r.estimate >= lo && r.estimate <= hi)
      m.empty("circle", {{"cx", num(sx(r.estimate))}, {"cy", num(y)}, {"r", "4.5"}, {"fill", "#ffffff"}, {"stroke", col}, {"stroke-width", "2"}});
    m.close();
  }
  m.element("text", "margin " + num(p.margin, 3), {{"class", "note"}, {"x", num(xm + 4)}, {"y", num(y0 - 6)}});
  // Axes: ratio along x, tasks along y.
  x_axis(m, {.title = p.x_title}, sx, x0, x1, y1, nice_ticks(lo, hi, 6));
  m.open("g", {{"class", "axis y-axis"}});
  m.empty("line", {{"x1", num(x0)}, {"y1", num(y0)}, {"x2", num(x0)}, {"y2", num(y1)}, {"stroke", kInk}});
  for (std::size_t i = 0; i < p.rows.size(); ++i)
    m.element("text", p.rows[i].label, {{"class", "tick"}, {"x", num(x0 - 6)}, {"y", num(y0 + row_h * (i + 0.5) + 4)}, {"text-anchor", "end"}});
  const double cy = (y0 + y1) / 2;
  m.element("text", "task", {{"class", "axis-title"}, {"x", "14"}, {"y", num(cy)}, {"text-anchor", "middle"},
                             {"transform", "rotate(-90 14 " + num(cy) + ")"}});
  m.close();
  m.close();
  return m.str();
}

std::string render_svg(const OutcomeGrid& g) {
  const int cols = std::max(1, g.columns);
  const int n = static_cast<int>(g.cells.size());
  const int rows = std::max(1, (n + cols - 1) / cols);
  const double cell = 11, x0 = 64, y0 = 34;
  const double x1 = x0 + cell * cols, y1 = y0 + cell * rows;
  const double width = std::max(x1 + 16, 560.0), height = y1 + 46;
  static const char* const fills[] = {"#d1d5db", "#6b7280", "#b91c1c", "#2563eb"};
  std::size_t counts[4] = {0, 0, 0, 0};
  for (Outcome o : g.cells) ++counts[static_cast<int>(o)];
  Markup m;
  open_svg(m, g.title, width, height);
  legend(m,
         {{"both pass (" + std::to_string(counts[0]) + ")", fills[0], false, true},
          {"both fail (" + std::to_string(counts[1]) + ")", fills[1], false, true},
          {"lost (" + std::to_string(counts[2]) + ")", fills[2], false, true},
          {"gained (" + std::to_string(counts[3]) + ")", fills[3], false, true}},
         x0, 16, width);
  m.open("g", {{"class", "cells"}});
  for (int i = 0; i < n; ++i) {
    const double x = x0 + cell * (i % cols), y = y0 + cell * (i / cols);
    const int k = static_cast<int>(g.cells[static_cast<std::size_t>(i)]);
    const bool titled = static_cast<std::size_t>(i) < g.titles.size() && !g.titles[static_cast<std::size_t>(i)].empty();
    const std::initializer_list<Attr> attrs = {{"x", num(x + 0.5)}, {"y", num(y + 0.5)}, {"width", num(cell - 1.5)},
                                               {"height", num(cell - 1.5)}, {"fill", fills[k]}};
    if (titled) {
      m.open("rect", attrs);
      m.element("title", g.titles[static_cast<std::size_t>(i)]);
      m.close();
    } else {
      m.empty("rect", attrs);
    }
  }
  m.close();
  m.open("g", {{"class", "axis x-axis"}});
  m.empty("line", {{"x1", num(x0)}, {"y1", num(y1 + 2)}, {"x2", num(x1)}, {"y2", num(y1 + 2)}, {"stroke", kInk}});
  const int step = cols >= 40 ? 10 : cols >= 10 ? 5 : 1;
  for (int c = 0; c < cols; c += step)
    m.element("text", "+" + std::to_string(c), {{"class", "tick"}, {"x", num(x0 + cell * (c + 0.5))}, {"y", num(y1 + 16)}, {"text-anchor", "middle"}});
  m.element("text", "trial (offset in the row)", {{"class", "axis-title"}, {"x", num((x0 + x1) / 2)}, {"y", num(y1 + 34)}, {"text-anchor", "middle"}});
  m.close();
  m.open("g", {{"class", "axis y-axis"}});
  m.empty("line", {{"x1", num(x0 - 2)}, {"y1", num(y0)}, {"x2", num(x0 - 2)}, {"y2", num(y1)}, {"stroke", kInk}});
  const int rstep = rows > 30 ? 5 : rows > 12 ? 2 : 1;
  for (int r = 0; r < rows; r += rstep)
    m.element("text", std::to_string(r * cols), {{"class", "tick"}, {"x", num(x0 - 6)}, {"y", num(y0 + cell * (r + 0.5) + 4)}, {"text-anchor", "end"}});
  const double cy = (y0 + y1) / 2;
  m.element("text", "trial", {{"class", "axis-title"}, {"x", "14"}, {"y", num(cy)}, {"text-anchor", "middle"},
                              {"transform", "rotate(-90 14 " + num(cy) + ")"}});
  m.close();
  m.close();
  return m.str();
}

}  // namespace kvgate::reports
