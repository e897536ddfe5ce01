// Placeholder for kvgate's reference decoder backend (issue #13 replaces this file).
#include "core/error.h"
#include "runner/backend_factory.h"

namespace kvgate::runner {

std::unique_ptr<Backend> make_reference_backend(const ReferenceBackendOptions&) {
  throw Error(
      "--backend reference: the reference decoder is not built yet (issue #13); run against a server with "
      "--endpoint URL --model NAME instead");
}

}  // namespace kvgate::runner
