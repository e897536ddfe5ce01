// Errors of `kvgate serve` in the OpenAI error shape, so SDKs raise their usual exceptions:
//   {"error": {"message": "...", "type": "invalid_request_error", "param": "temperature", "code": null}}
#pragma once
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

namespace kvgate::serve {

class ApiError : public std::runtime_error {
 public:
  ApiError(int status, const std::string& message, std::string param = "", std::string code = "")
      : std::runtime_error(message), status_(status), param_(std::move(param)), code_(std::move(code)) {}
  int status() const { return status_; }
  const std::string& param() const { return param_; }
  const std::string& code() const { return code_; }

 private:
  int status_;
  std::string param_, code_;
};

// 400 naming the parameter.
inline ApiError bad_param(const std::string& param, const std::string& what) {
  return ApiError(400, "\"" + param + "\" " + what, param);
}

// The OpenAI error object for `status`; type from the status (invalid_request_error for 4xx but
// 401/404/413/429, server_error for 5xx); `param` and `code` null when empty.
nlohmann::json error_body(int status, const std::string& message, const std::string& param = "",
                          const std::string& code = "");

}  // namespace kvgate::serve
