#include "harness/runner/backend_factory.h"

#include "harness/core/error.h"

namespace kvgate::runner {

std::unique_ptr<Backend> make_backend(const BackendOptions& o) {
  if (o.kind == "openai") return std::make_unique<HttpBackend>(o.http);
  if (o.kind == "reference") return make_reference_backend(o.reference);
  throw Error("--backend " + o.kind + ": must be openai or reference");
}

}  // namespace kvgate::runner
