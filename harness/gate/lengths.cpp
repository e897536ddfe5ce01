#include "harness/gate/lengths.h"

#include <algorithm>

#include "harness/core/error.h"

namespace kvgate::gate {

ResolvedLengths resolve_lengths(const LengthSpec& spec, std::int64_t max_context, int reserve, const std::string& where,
                                const std::string& source, const std::function<std::string(std::int64_t)>& advice) {
  const std::string from = source.empty() ? "" : ": " + source;
  const auto how = [&](std::int64_t wanted) {
    const std::string a = advice ? advice(wanted) : "";
    return a.empty() ? "" : "; or " + a;
  };
  ResolvedLengths r;
  if (max_context > 0) {
    r.limit = max_context - reserve;
    if (r.limit < 1)
      throw Error(where + ": the model's context (" + std::to_string(max_context) + " tokens" + from +
                  ") leaves no room for a prompt after " + std::to_string(reserve) + " generated tokens: lower the task's max_tokens" +
                  how(spec.ladder() ? spec.from + reserve : (spec.list.empty() ? 0 : spec.list.front() + reserve)));
  }
  if (!spec.ladder()) {
    for (std::int64_t b : spec.list) (r.limit == 0 || b <= r.limit ? r.buckets : r.dropped).push_back(b);
    if (r.buckets.empty())
      throw Error(where + ": every bucket is beyond the model's context (" + std::to_string(max_context) + " tokens" + from +
                  "; less " + std::to_string(reserve) + " generated): give smaller lengths" +
                  how(*std::max_element(spec.list.begin(), spec.list.end()) + reserve));
    return r;
  }
  if (spec.to == 0 && r.limit == 0)
    throw Error(where + ": lengths go up to the model's maximum context, which neither the server (/v1/models max_model_len) nor "
                        "the checkpoint told: pass --max-context N");
  std::int64_t top = r.limit;
  if (spec.to != 0) top = r.limit == 0 ? spec.to : std::min(spec.to, r.limit);
  if (spec.from > top)
    throw Error(where + ": lengths start at " + std::to_string(spec.from) + " tokens, beyond the model's usable context of " +
                std::to_string(top) + " tokens" + from + ": lower `from`" + how(spec.from + reserve));
  for (std::int64_t b = spec.from; b <= top; b *= 2) r.buckets.push_back(b);
  const std::int64_t rounded = top / 1024 * 1024;
  if (rounded * 10 >= r.buckets.back() * 11) r.buckets.push_back(rounded);
  return r;
}

}  // namespace kvgate::gate
