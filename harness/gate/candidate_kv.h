// A KV configuration of the gate, as --baseline-kv / --candidate-kv write it: a format plus its
// settings, comma separated. A token without '=' starts a new configuration (a format); KEY=VALUE
// tokens attach to the format before them:
//   fp8_e4m3                                  the format at its defaults (fp8: scale 1.0)
//   fp8_e4m3,scales=cal.json                  a scales file (kvgate calibrate's, or SGLang's layout)
//   fp8_e4m3,skip=0:27                        layers kept in bf16 (':' between layers; -1 is the last)
//   fp8_e4m3,switches={"q_fp8":true}          engine-kernel switches (a JSON object, or @FILE)
//   int4_per_token_head,params={"hadamard":false}   other format parameters (JSON object, or @FILE)
//   fp8_e4m3,label=mine                       the name in reports and under DIR/runs/
//   fp8_e4m3,int8_per_token_head              two configurations
// Commas inside {...}, [...] or "..." do not split. Labels say what was set: fp8_e4m3,
// fp8_e4m3+calibrated, fp8_e4m3+skip(0,27), fp8_e4m3+switches(q_fp8), fp8_e4m3+params(k_scale).
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kvgate::gate {

struct KvSettings {
  std::string format{};
  std::string scales{};                // path of a scales file; "" for none
  std::vector<int> skip_layers{};      // as given (negative counts from the end)
  nlohmann::json params = nlohmann::json::object();           // other format parameters
  nlohmann::json kernel_switches = nlohmann::json::object();  // {} = exact attention
  std::string label{};                 // label=NAME; "" = default_label()

  bool plain() const;                      // the format alone, nothing set
  std::string default_label() const;       // fp8_e4m3+calibrated+skip(0,27)
  std::string name() const;                // label, or default_label() when none was given
  nlohmann::json kv_params() const;        // params + "scales" + "skip_layers": the decoder's parameters
  nlohmann::json record() const;           // every setting, for gate.json and the reports (scales' sha256 included)
};

// Splits and parses the flag's values (each may hold several configurations). Errors name `flag`,
// the token and the fix: an unknown key, a key before any format, an empty token, a bad layer
// list, a scales file that cannot be read or is not JSON, switches or params that are not a JSON
// object, an unknown kernel switch.
std::vector<KvSettings> parse_kv_settings(const std::vector<std::string>& values, const std::string& flag);

// A setting an endpoint's format cannot take (the server holds its scales and layers): Error naming
// `flag` and the fix.
void check_endpoint_kv(const KvSettings& s, const std::string& flag);

// Splits "a,b={x,y},c" at the commas outside braces, brackets and double quotes.
std::vector<std::string> split_top_level(const std::string& text);

}  // namespace kvgate::gate
