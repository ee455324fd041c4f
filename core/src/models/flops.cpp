#include "npe/models/flops.h"

#include "npe/models/model_registry.h"

namespace npe {

double forward_flops(const ModelConfig& c, const BatchShape& s) {
  return model_spec(c.kind).flops_per_task(c, s) * double(s.batch);
}

}  // namespace npe
