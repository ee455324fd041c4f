// Checkpoint metadata (the JSON record every checkpoint carries): parsing, validation and
// building the model it describes, which a hostile file must not turn into a crash or a huge
// allocation.

#include <cstddef>
#include <cstdint>

#include <nlohmann/json.hpp>

#include "npe/errors.h"
#include "npe/models/checkpoint.h"
#include "npe/models/model_registry.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto json = nlohmann::json::parse(data, data + size, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded()) return 0;
  try {
    const auto metadata = npe::CheckpointMetadata::from_json(json);
    (void)metadata.task_name();
    (void)metadata.to_json().dump();
    npe::make_model(metadata.model);
  } catch (const npe::Error&) {
    // A clear refusal is the expected outcome for malformed metadata.
  }
  return 0;
}
