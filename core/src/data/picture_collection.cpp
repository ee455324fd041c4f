#include "npe/data/picture_collection.h"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <system_error>
#include <thread>

#include <torch/torch.h>

#include "npe/data/idx.h"
#include "npe/data/jpeg_image.h"
#include "npe/data/png_image.h"
#include "npe/errors.h"

namespace npe {
namespace fs = std::filesystem;

namespace {

constexpr int64_t kCifarSide = 32;
constexpr int64_t kCifarRecord = 1 + 3 * kCifarSide * kCifarSide;
constexpr int64_t kDefaultSize = 32;
// Pictures square and at most this large keep their size under size=0 (MNIST's 28, CIFAR's 32,
// 64 x 64 icons); larger ones (photographs) are brought to kDefaultSize.
constexpr int64_t kLargestOwnSize = 64;
constexpr double kLargestCollectionBytes = 16.0 * (1 << 30);

// A file's extension in lower case (".JPG" -> ".jpg").
std::string extension_of(const fs::path& path) {
  auto text = path.extension().string();
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

std::string first_bytes(const fs::path& path, size_t n) {
  std::ifstream in(path, std::ios::binary);
  std::string bytes(n, '\0');
  in.read(bytes.data(), static_cast<std::streamsize>(n));
  bytes.resize(static_cast<size_t>(std::max<std::streamsize>(0, in.gcount())));
  return bytes;
}

bool is_picture_file(const fs::path& path) {
  const auto ext = extension_of(path);
  return ext == ".png" || ext == ".jpg" || ext == ".jpeg";
}

// A PNG or a JPEG as uint8 [H, W, C], told apart by their first bytes (not by the name: a .jpg
// may be a PNG).
torch::Tensor read_picture(const fs::path& path, int channels) {
  const auto head = first_bytes(path, 4);
  if (head.size() >= 4 && head.compare(0, 4, "\x89PNG") == 0) return read_png_bytes(path, channels);
  if (head.size() >= 3 && static_cast<unsigned char>(head[0]) == 0xFF &&
      static_cast<unsigned char>(head[1]) == 0xD8 && static_cast<unsigned char>(head[2]) == 0xFF) {
    return read_jpeg_bytes(path, channels);
  }
  throw DataError("'" + path.string() + "' is neither a PNG nor a JPEG");
}

// uint8 [H, W, C] -> [size, size, C] uint8: the centre square (of the shorter side) scaled to
// `size` (area averaging when shrinking, which does not alias; bilinear when enlarging). A
// picture of the size already is returned as it is.
torch::Tensor to_square(const torch::Tensor& picture, int64_t size) {
  namespace F = torch::nn::functional;
  const int64_t h = picture.size(0), w = picture.size(1);
  if (h == size && w == size) return picture;
  // The centre square first, in the picture's own pixels (a long strip is never scaled whole).
  const int64_t side = std::min(h, w);
  const int64_t top = (h - side) / 2, left = (w - side) / 2;
  auto chw = picture.slice(0, top, top + side)
                 .slice(1, left, left + side)
                 .permute({2, 0, 1})
                 .unsqueeze(0)
                 .to(torch::kFloat32);
  if (side != size) {
    auto options = F::InterpolateFuncOptions().size(std::vector<int64_t>{size, size});
    if (side > size) {
      options.mode(torch::kArea);
    } else {
      options.mode(torch::kBilinear).align_corners(false);
    }
    chw = F::interpolate(chw, options);
  }
  return chw[0].permute({1, 2, 0}).round().clamp_(0, 255).to(torch::kUInt8).contiguous();
}

// Grey where no picture has colour (colour=auto): one channel is what the pictures hold.
torch::Tensor grey_unless_coloured(const torch::Tensor& pictures) {
  if (pictures.size(3) != 3) return pictures;
  if (torch::equal(pictures.select(3, 0), pictures.select(3, 1)) &&
      torch::equal(pictures.select(3, 0), pictures.select(3, 2))) {
    return pictures.slice(3, 0, 1).contiguous();
  }
  return pictures;
}

// uint8 [N, H, W, C] with C in {1, 3} -> the channels asked for.
torch::Tensor with_channels(const torch::Tensor& pictures, PictureColour colour) {
  const auto c = pictures.size(3);
  if (colour == PictureColour::Grey && c == 3) {
    // ITU-R BT.601 luminance, as libjpeg converts colour to grey.
    auto f = pictures.to(torch::kFloat32);
    auto grey = f.select(3, 0) * 0.299 + f.select(3, 1) * 0.587 + f.select(3, 2) * 0.114;
    return grey.round_().clamp_(0, 255).to(torch::kUInt8).unsqueeze(3).contiguous();
  }
  if (colour == PictureColour::Rgb && c == 1) return pictures.expand({-1, -1, -1, 3}).contiguous();
  return pictures;
}

// Batches of equal-size pictures [N, H, W, C] uint8 to [N, size, size, C].
torch::Tensor batch_to_square(const torch::Tensor& pictures, int64_t size) {
  if (pictures.size(1) == size && pictures.size(2) == size) return pictures;
  auto out = torch::empty({pictures.size(0), size, size, pictures.size(3)}, torch::kUInt8);
  for (int64_t i = 0; i < pictures.size(0); ++i) out[i].copy_(to_square(pictures[i], size));
  return out;
}

// The side pictures are brought to: `size`, else their own where square and small enough to
// be a task (a canvas of twice the side), else kDefaultSize.
int64_t own_size(int64_t h, int64_t w, int64_t size) {
  if (size > 0) return size;
  return h == w && h <= kLargestOwnSize ? h : kDefaultSize;
}

// Refuses a collection that would not fit in memory before anything is decoded.
void check_memory(const fs::path& path, int64_t count, int64_t side, int64_t channels) {
  const double bytes = static_cast<double>(count) * side * side * channels;
  if (bytes > kLargestCollectionBytes) {
    throw DataError("'" + path.string() + "': " + std::to_string(count) + " pictures of " +
                    std::to_string(side) + " x " + std::to_string(side) + " would take " +
                    std::to_string(static_cast<int64_t>(bytes / (1 << 30))) +
                    " GiB; choose a smaller size (the task option size=N)");
  }
}

PictureCollection read_folder(const fs::path& root, int64_t size, PictureColour colour) {
  std::vector<fs::path> files;
  std::error_code ec;
  fs::recursive_directory_iterator it(root, fs::directory_options::skip_permission_denied, ec);
  if (ec) throw DataError("'" + root.string() + "' cannot be listed: " + ec.message());
  for (; it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (ec) throw DataError("'" + root.string() + "' cannot be listed: " + ec.message());
    const auto name = it->path().filename().string();
    if (!name.empty() && name[0] == '.') {
      if (it->is_directory(ec)) it.disable_recursion_pending();
      continue;
    }
    if (it->is_regular_file(ec) && is_picture_file(it->path())) files.push_back(it->path());
  }
  if (files.empty()) {
    throw DataError("'" + root.string() +
                    "' holds no PNG or JPEG pictures (*.png, *.jpg, *.jpeg, in sub-folders too), "
                    "no CIFAR-10 batches (data_batch_1.bin) and is no IDX file");
  }
  std::sort(files.begin(), files.end());

  // The first readable picture, decoded alone: its size is the tentative side.
  const int channels = colour == PictureColour::Grey ? 1 : 3;
  const auto n = static_cast<int64_t>(files.size());
  std::vector<torch::Tensor> squares(files.size());
  std::vector<std::string> errors(files.size());
  std::vector<std::pair<int64_t, int64_t>> sizes(files.size(), {0, 0});
  int64_t first = 0;
  torch::Tensor first_picture;
  for (; first < n && !first_picture.defined(); ++first) {
    try {
      first_picture = read_picture(files[static_cast<size_t>(first)], channels);
    } catch (const std::exception& e) {
      errors[static_cast<size_t>(first)] = e.what();
    }
  }
  if (!first_picture.defined()) {
    throw DataError("none of the " + std::to_string(n) + " pictures in '" + root.string() +
                    "' could be read; the first: " + errors.front());
  }
  --first;
  // Tentatively the first picture's side; once every size is known, size=0 may choose another
  // (pictures of several sizes: kDefaultSize), and then they are decoded again.
  int64_t side = own_size(first_picture.size(0), first_picture.size(1), size);
  check_memory(root, n, side, channels);
  first_picture = torch::Tensor();

  // Decoded and brought to the side on every core, one picture at a time, so that only the
  // small squares stay (50,000 pictures in seconds; large photographs never pile up).
  const int threads =
      static_cast<int>(std::clamp<unsigned>(std::thread::hardware_concurrency(), 1u, 8u));
  auto decode_all = [&] {
    // Pictures are handed out one at a time; this thread works too, so a thread that cannot be
    // started (a container's limit) only means fewer helpers.
    std::atomic<int64_t> next{first};
    auto work = [&] {
      for (int64_t i = next++; i < n; i = next++) {
        const auto k = static_cast<size_t>(i);
        try {
          const auto picture = read_picture(files[k], channels);
          sizes[k] = {picture.size(0), picture.size(1)};
          squares[k] = to_square(picture, side);
          errors[k].clear();
        } catch (const std::exception& e) {
          errors[k] = e.what();
        }
      }
    };
    std::vector<std::thread> helpers;
    try {
      for (int t = 1; t < threads; ++t) helpers.emplace_back(work);
    } catch (const std::system_error&) {
    }
    work();
    for (auto& h : helpers) h.join();
  };
  decode_all();
  PictureCollection out;
  out.format = "PNG/JPEG folder";
  bool several_sizes = false;
  for (int64_t i = first; i < n; ++i) {
    const auto k = static_cast<size_t>(i);
    if (errors[k].empty() && sizes[k] != sizes[static_cast<size_t>(first)]) several_sizes = true;
  }
  if (size == 0 && several_sizes && side != kDefaultSize) {
    side = kDefaultSize;
    check_memory(root, n, side, channels);
    decode_all();
  }
  if (size == 0 && side == kDefaultSize &&
      (several_sizes || sizes[static_cast<size_t>(first)] !=
                            std::pair<int64_t, int64_t>{kDefaultSize, kDefaultSize})) {
    out.notes.push_back("the pictures are not all of one square size up to " +
                        std::to_string(kLargestOwnSize) + " pixels: brought to " +
                        std::to_string(side) + " x " + std::to_string(side) +
                        " (the task option size=N chooses another)");
  }
  std::vector<torch::Tensor> kept;
  for (int64_t i = 0; i < n; ++i) {
    const auto& file = files[static_cast<size_t>(i)];
    if (!errors[static_cast<size_t>(i)].empty()) {
      if (out.unreadable++ == 0) out.first_unreadable = errors[static_cast<size_t>(i)];
      continue;
    }
    if (sizes[static_cast<size_t>(i)] != std::pair<int64_t, int64_t>{side, side}) ++out.resized;
    kept.push_back(squares[static_cast<size_t>(i)]);
    out.names.push_back(file.lexically_relative(root).generic_string());
    out.dataset_test.push_back(false);
  }
  out.pictures = torch::stack(kept);
  if (colour == PictureColour::Auto) out.pictures = grey_unless_coloured(out.pictures);
  return out;
}

bool is_cifar_batch(const fs::path& path) {
  std::error_code ec;
  const auto bytes = fs::file_size(path, ec);
  return !ec && bytes > 0 && bytes % kCifarRecord == 0 && extension_of(path) == ".bin";
}

void append_cifar_batch(const fs::path& path, bool test, std::vector<torch::Tensor>& parts,
                        PictureCollection& out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw DataError("'" + path.string() + "' cannot be opened");
  std::error_code ec;
  const auto bytes = static_cast<int64_t>(fs::file_size(path, ec));
  if (ec || bytes % kCifarRecord != 0 || bytes == 0) {
    throw DataError("'" + path.string() + "' is not a CIFAR-10 binary batch (" +
                    std::to_string(bytes) + " bytes, not a multiple of 3,073)");
  }
  auto raw = torch::empty({bytes / kCifarRecord, kCifarRecord}, torch::kUInt8);
  in.read(reinterpret_cast<char*>(raw.data_ptr<uint8_t>()), bytes);
  if (in.gcount() != bytes) throw DataError("'" + path.string() + "' could not be read whole");
  // Each record: a label byte, then the red, green and blue planes of 32 x 32, row-major.
  parts.push_back(raw.slice(1, 1, kCifarRecord)
                      .reshape({-1, 3, kCifarSide, kCifarSide})
                      .permute({0, 2, 3, 1})
                      .contiguous());
  const auto name = path.filename().string();
  for (int64_t i = 0; i < raw.size(0); ++i) {
    out.names.push_back(name + "#" + std::to_string(i));
    out.dataset_test.push_back(test);
  }
}

// `own_test_split`: test_batch.bin is the test split (a folder of batches); a batch read alone
// is split like any pictures.
PictureCollection read_cifar(const std::vector<fs::path>& batches, int64_t size,
                             PictureColour colour, bool own_test_split) {
  PictureCollection out;
  out.format = "CIFAR-10 binary";
  std::vector<torch::Tensor> parts;
  for (const auto& batch : batches) {
    append_cifar_batch(batch, own_test_split && batch.filename() == "test_batch.bin", parts, out);
  }
  auto pictures = torch::cat(parts);
  parts.clear();
  const int64_t side = size > 0 ? size : kCifarSide;
  check_memory(batches.front(), pictures.size(0), side, 3);
  if (side != kCifarSide) out.resized = pictures.size(0);
  pictures = batch_to_square(pictures, side);
  out.pictures = colour == PictureColour::Auto ? grey_unless_coloured(pictures)
                                               : with_channels(pictures, colour);
  return out;
}

PictureCollection read_idx_pictures(const fs::path& path, int64_t size, PictureColour colour) {
  auto data = read_idx_ubyte(path);
  if (data.dim() == 3) data = data.unsqueeze(3);
  if (data.dim() != 4 || (data.size(3) != 1 && data.size(3) != 3) || data.size(0) < 1 ||
      data.size(1) < 1 || data.size(2) < 1) {
    std::string shape;
    for (const auto d : data.sizes()) shape += (shape.empty() ? "" : ", ") + std::to_string(d);
    throw DataError("'" + path.string() + "' holds an IDX array of [" + shape +
                    "]; pictures are [count, height, width] or [count, height, width, 1 or 3], "
                    "none of them 0");
  }
  PictureCollection out;
  out.format = "IDX";
  const int64_t side = own_size(data.size(1), data.size(2), size);
  check_memory(path, data.size(0), side, data.size(3));
  if (side != data.size(1) || side != data.size(2)) out.resized = data.size(0);
  if (size == 0 && data.size(1) != data.size(2)) {
    out.notes.push_back("the pictures are not square: brought to " + std::to_string(side) + " x " +
                        std::to_string(side) + " (the task option size=N chooses another)");
  }
  const auto name = path.filename().string();
  for (int64_t i = 0; i < data.size(0); ++i) {
    out.names.push_back(name + "#" + std::to_string(i));
    out.dataset_test.push_back(false);
  }
  auto pictures = batch_to_square(data, side);
  out.pictures = colour == PictureColour::Auto ? grey_unless_coloured(pictures)
                                               : with_channels(pictures, colour);
  return out;
}

}  // namespace

PictureColour picture_colour_from_string(const std::string& text) {
  if (text == "auto") return PictureColour::Auto;
  if (text == "grey" || text == "gray") return PictureColour::Grey;
  if (text == "rgb" || text == "colour" || text == "color") return PictureColour::Rgb;
  throw ConfigError("colour must be auto, grey or rgb, not '" + text + "'");
}

std::string to_string(PictureColour colour) {
  switch (colour) {
    case PictureColour::Auto:
      return "auto";
    case PictureColour::Grey:
      return "grey";
    case PictureColour::Rgb:
      return "rgb";
  }
  return "auto";
}

std::string PictureCollection::describe() const {
  std::ostringstream text;
  text << count() << " pictures (" << format << "), " << (channels() == 3 ? "colour" : "grey")
       << ", " << size() << " x " << size() << " pixels";
  if (resized > 0) text << "; " << resized << " brought to that size";
  if (unreadable > 0) {
    text << "; " << unreadable
         << " files could not be read and are left out (the first: " << first_unreadable << ")";
  }
  for (const auto& note : notes) text << "; " << note;
  return text.str();
}

PictureCollection read_picture_collection(const fs::path& path, int64_t size,
                                          PictureColour colour) {
  if (size < 0 || size > kLargestPictureSize) {
    throw ConfigError("size must be 0 (the pictures' own) or 1.." +
                      std::to_string(kLargestPictureSize));
  }
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    if (fs::exists(path / "data_batch_1.bin", ec)) {
      std::vector<fs::path> batches;
      for (int i = 1; i <= 5; ++i) {
        const auto batch = path / ("data_batch_" + std::to_string(i) + ".bin");
        if (fs::exists(batch, ec)) batches.push_back(batch);
      }
      if (fs::exists(path / "test_batch.bin", ec)) batches.push_back(path / "test_batch.bin");
      return read_cifar(batches, size, colour, /*own_test_split=*/true);
    }
    return read_folder(path, size, colour);
  }
  if (!fs::exists(path, ec)) throw DataError("'" + path.string() + "' does not exist");
  const auto head = first_bytes(path, 4);
  const bool gz = head.size() >= 2 && static_cast<unsigned char>(head[0]) == 0x1F &&
                  static_cast<unsigned char>(head[1]) == 0x8B;
  // A .bin of 3,073-byte records first: its first record may start as IDX does (label 0 and
  // two dark red pixels).
  if (is_cifar_batch(path)) return read_cifar({path}, size, colour, /*own_test_split=*/false);
  if (gz || (head.size() == 4 && head[0] == 0 && head[1] == 0 && head[2] == 0x08)) {
    return read_idx_pictures(path, size, colour);
  }
  if (is_picture_file(path)) {
    throw DataError("'" + path.string() +
                    "' is one picture: the pictures task trains on a folder of them (choose the "
                    "folder)");
  }
  throw DataError("'" + path.string() +
                  "' is not a folder of pictures, an IDX file or a CIFAR-10 binary batch");
}

}  // namespace npe
