// Needle depths, Kamradt style (LLMTest_NeedleInAHaystack): percents of the haystack from 0 (start)
// to 100 (end), on a linear grid or a sigmoid one that crowds the ends.
#pragma once
#include <string>
#include <vector>

namespace kvgate {

enum class DepthSpacing { linear, sigmoid };

DepthSpacing parse_depth_spacing(const std::string& text, const std::string& flag);

// n depths from 0 to 100. Linear: round(linspace(0, 100, n)) to whole percents. Sigmoid: each
// linspace point x becomes round(100 / (1 + exp(0.1 (x - 50))), 3), except 0 and 100, sorted
// ascending. An Error names `flag` when n < 1.
std::vector<double> depth_grid(int n, DepthSpacing spacing, const std::string& flag = "--depth-grid");

// "0,10,50.5,100" -> percents; each in [0, 100]. An Error names `flag` otherwise.
std::vector<double> parse_depths(const std::string& text, const std::string& flag);

}  // namespace kvgate
