#pragma once

namespace kvgate {
const char* version();     // semantic version of this build
const char* git_commit();  // short commit hash, "-dirty" when built from modified sources
}  // namespace kvgate
