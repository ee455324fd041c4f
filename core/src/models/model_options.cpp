#include "npe/models/model_options.h"

namespace npe {
namespace {

const char* const kOptionsWhat = "model configuration";

// The visitors that only read take the options by const reference; visiting is one interface
// for reading and writing, so they visit a copy.
FieldVisit visit_copy(const ModelOptions& options) {
  std::shared_ptr<ModelOptions> copy = options.clone();
  return [copy](OptionVisitor& visitor) { copy->visit(visitor); };
}

}  // namespace

nlohmann::json options_to_json(const ModelOptions& options) {
  return fields_to_json(visit_copy(options));
}

void options_from_json(ModelOptions& options, const nlohmann::json& json) {
  fields_from_json([&](OptionVisitor& visitor) { options.visit(visitor); }, json, kOptionsWhat);
}

void check_option_ranges(const ModelOptions& options) {
  check_field_ranges(visit_copy(options), kOptionsWhat);
}

std::vector<OptionDescription> describe_options(const ModelOptions& options) {
  return describe_fields(visit_copy(options));
}

}  // namespace npe
