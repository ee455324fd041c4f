#include "npe/data/masked_picture.h"

#include <string>

#include <torch/torch.h>

#include "npe/data/image_tasks.h"
#include "npe/errors.h"

namespace npe {

MaskedPicture masked_picture_task(const torch::Tensor& picture, const torch::Tensor& mask) {
  if (picture.dim() != 3 || (mask.dim() != 2 && !(mask.dim() == 3 && mask.size(2) == 1))) {
    throw InvalidInputError("a picture is [height, width, channels] and its mask [height, width]");
  }
  const int64_t height = picture.size(0), width = picture.size(1);
  if (mask.size(0) != height || mask.size(1) != width) {
    throw InvalidInputError("the mask is " + std::to_string(mask.size(1)) + " x " +
                            std::to_string(mask.size(0)) + " pixels, the picture " +
                            std::to_string(width) + " x " + std::to_string(height) +
                            ": the mask must match the picture");
  }
  MaskedPicture result;
  result.is_context = mask.reshape({-1}).ge(0.5);
  const auto context_index = result.is_context.nonzero().squeeze(1);
  if (context_index.numel() == 0) {
    throw InvalidInputError(
        "the mask marks no context pixel (white pixels, at least half grey, are context)");
  }
  const auto x = pixel_coordinates(height, width);
  result.values = picture.reshape({-1, picture.size(2)}).to(torch::kFloat32);
  result.task.xc = x.index_select(0, context_index).unsqueeze(0);
  result.task.yc = result.values.index_select(0, context_index).unsqueeze(0);
  result.task.xt = x.unsqueeze(0);
  return result;
}

}  // namespace npe
