// The NIAH depth x length grid: mean score per (needle depth, context length) cell of each run,
// from the `grade.details.depth` (percent, 0..100) that niah results carry. A handful of fixed depths
// (a Kamradt grid) gives one row per depth; random depths are binned into tenths.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "harness/core/run_dir.h"

namespace kvgate::reports {

struct DepthGrid {
  std::vector<std::int64_t> buckets{};      // columns, ascending
  std::vector<std::string> row_labels{};    // rows, shallow (0%) at the top
  struct Cells {
    std::vector<std::optional<double>> mean{};  // rows x buckets, row-major; empty: no result in the cell
    std::vector<std::size_t> results{};
  };
  std::vector<Cells> runs{};  // one per run passed, same order
  bool empty() const { return row_labels.empty(); }
};

// Over every result of `task` in each run (repeats included; a result with an error scores 0).
// Rows come from the depths of all runs together, so the panels line up. No result with a depth:
// an empty grid.
DepthGrid depth_grid(const std::vector<const RunDir*>& runs, const std::string& task);

// The depth a result records, if any.
std::optional<double> result_depth(const ResultRecord& r);

}  // namespace kvgate::reports
