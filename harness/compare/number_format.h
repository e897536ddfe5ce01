// Numbers as the text table and verdict reasons print them (fixed decimals, no locale).
#pragma once
#include <string>

namespace kvgate::compare {

std::string fixed(double v, int decimals);  // fixed(0.95812, 3) = "0.958"; non-finite -> "inf" / "-inf" / "nan"
std::string percent(double v, int decimals);  // percent(0.0312, 1) = "3.1%"
std::string p_value(double p);  // 3 significant digits, "<1e-16" below that

}  // namespace kvgate::compare
