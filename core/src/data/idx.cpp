#include "npe/data/idx.h"

#include <zlib.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <sstream>

#include <torch/torch.h>

#include "npe/errors.h"

namespace npe {
namespace {

// IDX headers are big-endian.
uint32_t big_endian(const unsigned char* bytes) {
  return (uint32_t(bytes[0]) << 24) | (uint32_t(bytes[1]) << 16) | (uint32_t(bytes[2]) << 8) |
         uint32_t(bytes[3]);
}

[[noreturn]] void fail(const std::filesystem::path& path, const std::string& problem) {
  throw DataError("'" + path.string() + "': " + problem);
}

// gzread reads plain files unchanged, so one code path serves .gz and uncompressed files.
struct GzCloser {
  void operator()(gzFile_s* file) const { gzclose(file); }
};

size_t read_fully(gzFile file, void* buffer, size_t bytes) {
  size_t done = 0;
  auto* out = static_cast<unsigned char*>(buffer);
  while (done < bytes) {
    const auto chunk = static_cast<unsigned>(std::min<size_t>(bytes - done, 1u << 30));
    const int got = gzread(file, out + done, chunk);
    if (got <= 0) break;
    done += static_cast<size_t>(got);
  }
  return done;
}

}  // namespace

torch::Tensor read_idx_ubyte(const std::filesystem::path& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) fail(path, "no such file");
  std::unique_ptr<gzFile_s, GzCloser> file(gzopen(path.c_str(), "rb"));
  if (!file) fail(path, "cannot be opened");
  unsigned char magic[4];
  if (read_fully(file.get(), magic, 4) != 4) fail(path, "too short for an IDX header");
  if (magic[0] != 0 || magic[1] != 0) fail(path, "not an IDX file (wrong magic number)");
  if (magic[2] != 0x08) {
    std::ostringstream msg;
    msg << "IDX element type 0x" << std::hex << int(magic[2]) << " is not supported (only "
        << "unsigned bytes, 0x08)";
    fail(path, msg.str());
  }
  const int rank = magic[3];
  if (rank < 1 || rank > 4) fail(path, "IDX rank " + std::to_string(rank) + " is not 1..4");
  std::vector<int64_t> dims(rank);
  int64_t count = 1, nonzero_product = 1;
  for (int d = 0; d < rank; ++d) {
    unsigned char bytes[4];
    if (read_fully(file.get(), bytes, 4) != 4) fail(path, "truncated IDX header");
    dims[d] = big_endian(bytes);
    // Refuse absurd sizes before allocating (a corrupt header must not exhaust memory). Zero
    // dimensions do not excuse the others: libtorch refuses shapes whose product of non-zero
    // sizes overflows (found by fuzz_idx).
    if (dims[d] > (int64_t{1} << 31) ||
        (dims[d] > 0 && nonzero_product > (int64_t{1} << 34) / dims[d])) {
      fail(path, "IDX dimensions are implausibly large");
    }
    if (dims[d] > 0) nonzero_product *= dims[d];
    count *= dims[d];
  }
  // Read in chunks before allocating the whole array: a header that promises gigabytes must not
  // cost gigabytes when the file holds a few bytes (found by fuzz_idx).
  std::vector<uint8_t> bytes;
  constexpr size_t kChunk = size_t{16} << 20;
  size_t got = 0;
  while (got < static_cast<size_t>(count)) {
    const size_t want = std::min(kChunk, static_cast<size_t>(count) - got);
    bytes.resize(got + want);
    const auto read = read_fully(file.get(), bytes.data() + got, want);
    got += read;
    if (read < want) break;
  }
  if (got != static_cast<size_t>(count)) {
    fail(path, "truncated: the header promises " + std::to_string(count) +
                   " bytes of data, the "
                   "file has " +
                   std::to_string(got));
  }
  int errnum = 0;
  gzerror(file.get(), &errnum);
  if (errnum != Z_OK && errnum != Z_STREAM_END) fail(path, "corrupt compressed data");
  auto data = torch::empty(dims, torch::kUInt8);
  if (count > 0) std::memcpy(data.data_ptr<uint8_t>(), bytes.data(), static_cast<size_t>(count));
  return data;
}

ImageDataset read_mnist(const std::filesystem::path& images_path,
                        const std::filesystem::path& labels_path) {
  ImageDataset dataset;
  dataset.images = read_idx_ubyte(images_path);
  if (dataset.images.dim() != 3) {
    fail(images_path, "expected a 3-D IDX array of images [N, H, W], got " +
                          std::to_string(dataset.images.dim()) + "-D");
  }
  if (dataset.images.size(0) == 0 || dataset.images.size(1) == 0 || dataset.images.size(2) == 0) {
    fail(images_path, "contains no images");
  }
  if (!labels_path.empty()) {
    dataset.labels = read_idx_ubyte(labels_path);
    if (dataset.labels.dim() != 1) fail(labels_path, "expected a 1-D IDX array of labels");
    if (dataset.labels.size(0) != dataset.images.size(0)) {
      fail(labels_path, std::to_string(dataset.labels.size(0)) + " labels for " +
                            std::to_string(dataset.images.size(0)) + " images in '" +
                            images_path.string() + "'");
    }
  }
  return dataset;
}

}  // namespace npe
