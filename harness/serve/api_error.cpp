#include "harness/serve/api_error.h"

namespace kvgate::serve {

nlohmann::json error_body(int status, const std::string& message, const std::string& param, const std::string& code) {
  std::string type = "invalid_request_error";
  if (status == 401) type = "authentication_error";
  else if (status == 404) type = "not_found_error";
  else if (status == 413) type = "request_too_large";
  else if (status == 429) type = "rate_limit_error";
  else if (status >= 500) type = "server_error";
  return {{"error",
           {{"message", message},
            {"type", type},
            {"param", param.empty() ? nlohmann::json(nullptr) : nlohmann::json(param)},
            {"code", code.empty() ? nlohmann::json(nullptr) : nlohmann::json(code)}}}};
}

}  // namespace kvgate::serve
