#include "archive_guard.h"

#include <unzip.h>

#include <caffe2/serialize/inline_container.h>
#include <caffe2/serialize/versions.h>

#include <cctype>
#include <cstdint>
#include <memory>
#include <set>
#include <string_view>
#include <system_error>

#include "archive_code.h"
#include "models/ends_with.h"
#include "pickle_guard.h"

namespace npe {
namespace {

constexpr unsigned long kStored = 0;
constexpr unsigned long kDeflated = 8;  // Z_DEFLATED, the only other method libtorch reads
// Deflate cannot expand more than about 1032:1 (a 258-byte match costs at least 2 bits), so a
// deflated record that claims more is lying about one of its sizes.
constexpr uint64_t kMaxDeflateRatio = 1033;

struct ZipCloser {
  void operator()(void* zip) const { unzClose(zip); }
};

std::string record_label(const char* name) {
  return "record '" + std::string(name) + "'";
}

std::string lower_case(std::string_view text) {
  std::string lower(text);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return lower;
}

// The MS-DOS folder bit of a zip record's external attributes, which miniz reads as "a folder".
constexpr uLong kDosFolderAttribute = 0x10;

// A version record holds a decimal number and a newline; anything longer is not one.
constexpr uint64_t kMaxVersionRecord = 32;

// Reads the current record of `zip` whole (at most kMaxVersionRecord bytes), checking its CRC.
std::optional<std::string> read_small_record(unzFile zip) {
  unz_file_info64 info{};
  if (unzGetCurrentFileInfo64(zip, &info, nullptr, 0, nullptr, 0, nullptr, 0) != UNZ_OK ||
      info.uncompressed_size > kMaxVersionRecord || unzOpenCurrentFile(zip) != UNZ_OK)
    return std::nullopt;
  std::string text(info.uncompressed_size, '\0');
  const int got = unzReadCurrentFile(zip, text.data(), static_cast<unsigned>(text.size()));
  // unzCloseCurrentFile compares the CRC once the whole record has been read.
  const int closed = unzCloseCurrentFile(zip);
  if (got != static_cast<int>(text.size()) || closed != UNZ_OK) return std::nullopt;
  return text;
}

// The format version as written: digits, then at most white space.
std::optional<uint64_t> parse_version(const std::string& text) {
  size_t end = 0;
  uint64_t version = 0;
  for (; end < text.size() && std::isdigit(static_cast<unsigned char>(text[end])); ++end) {
    if (__builtin_mul_overflow(version, uint64_t{10}, &version) ||
        __builtin_add_overflow(version, static_cast<uint64_t>(text[end] - '0'), &version))
      return std::nullopt;
  }
  if (end == 0) return std::nullopt;
  for (; end < text.size(); ++end)
    if (!std::isspace(static_cast<unsigned char>(text[end]))) return std::nullopt;
  return version;
}

}  // namespace

std::optional<std::string> find_implausible_record_size(const std::filesystem::path& archive) {
  std::error_code ec;
  const uint64_t file_size = std::filesystem::file_size(archive, ec);
  if (ec) return "a file whose size cannot be read (" + ec.message() + ")";
  std::unique_ptr<void, ZipCloser> zip(unzOpen64(archive.c_str()));
  if (!zip) return std::string("no zip directory that can be read");
  unz_global_info64 global{};
  if (unzGetGlobalInfo64(zip.get(), &global) != UNZ_OK)
    return std::string("no zip directory that can be read");
  if (global.number_entry == 0) return std::nullopt;  // libtorch reports the missing records
  if (unzGoToFirstFile(zip.get()) != UNZ_OK)
    return std::string("a zip directory whose first record cannot be read");
  for (uint64_t index = 0; index < global.number_entry; ++index) {
    unz_file_info64 info{};
    char name[512] = {};
    if (unzGetCurrentFileInfo64(zip.get(), &info, name, sizeof name - 1, nullptr, 0, nullptr, 0) !=
        UNZ_OK) {
      return "a zip directory whose record " + std::to_string(index) + " cannot be read";
    }
    const std::string stated = " (" + std::to_string(info.uncompressed_size) + " bytes from " +
                               std::to_string(info.compressed_size) + " compressed)";
    if (info.compressed_size > file_size) {
      return "a " + record_label(name) + " that claims more bytes than the file holds" + stated;
    }
    if (info.compression_method == kStored) {
      if (info.uncompressed_size != info.compressed_size)
        return "a stored " + record_label(name) + " whose two sizes differ" + stated;
    } else if (info.compression_method == kDeflated) {
      // Compared by division: a multiplication could wrap for a corrupt 64-bit size.
      if (info.uncompressed_size / kMaxDeflateRatio > info.compressed_size)
        return "a " + record_label(name) + " that claims more than deflate can expand to" + stated;
    } else {
      return "a " + record_label(name) + " compressed by a method libtorch cannot read (" +
             std::to_string(info.compression_method) + ")";
    }
    const int next = unzGoToNextFile(zip.get());
    if (next == UNZ_END_OF_LIST_OF_FILE) break;
    if (next != UNZ_OK)
      return "a zip directory that ends after " + std::to_string(index + 1) + " of its " +
             std::to_string(global.number_entry) + " records";
  }
  return std::nullopt;
}

std::optional<std::string> find_unsupported_layout(const std::filesystem::path& archive) {
  std::unique_ptr<void, ZipCloser> zip(unzOpen64(archive.c_str()));
  if (!zip) return std::string("no zip directory that can be read");
  char first[512] = {};
  if (unzGoToFirstFile(zip.get()) != UNZ_OK ||
      unzGetCurrentFileInfo64(zip.get(), nullptr, first, sizeof first - 1, nullptr, 0, nullptr,
                              0) != UNZ_OK)
    return std::string("no records");
  // miniz (libtorch's zip reader) "extracts" a record marked as a folder as nothing, and libtorch
  // then hands out its stated size of uninitialised memory as the record's bytes (a fuzzed
  // version record with external attributes "uilt" read as garbage, and leaked; see above).
  // miniz finds a record by name ignoring case, so two names that differ only in case (or not at
  // all) leave which record libtorch reads to the order of its search.
  std::set<std::string> folded_names;
  for (int more = UNZ_OK; more == UNZ_OK; more = unzGoToNextFile(zip.get())) {
    unz_file_info64 info{};
    char name[512] = {};
    if (unzGetCurrentFileInfo64(zip.get(), &info, name, sizeof name - 1, nullptr, 0, nullptr, 0) !=
        UNZ_OK)
      return std::string("a zip directory whose records cannot be read");
    const std::string_view record(name);
    if ((info.external_fa & kDosFolderAttribute) || (!record.empty() && record.back() == '/'))
      return "a record '" + std::string(record) + "' marked as a folder";
    if (!folded_names.insert(lower_case(record)).second)
      return "two records named '" + std::string(record) + "'";
  }
  const std::string first_name = first;
  const auto slash = first_name.find('/');
  if (slash == std::string::npos || slash == 0)
    return "a first record '" + first_name + "' outside the archive's folder";
  const std::string folder = first_name.substr(0, slash + 1);
  // libtorch looks for ".data/version" first, then "version", as miniz does: ignoring case.
  constexpr int kIgnoreCase = 2;
  const std::string candidates[] = {folder + ".data/version", folder + "version"};
  const std::string* found = nullptr;
  for (const auto& name : candidates) {
    if (unzLocateFile(zip.get(), name.c_str(), kIgnoreCase) == UNZ_OK) {
      found = &name;
      break;
    }
  }
  if (!found) return "no record " + candidates[1];
  const auto text = read_small_record(zip.get());
  if (!text) return "a record " + *found + " that is not a version number that can be read";
  const auto version = parse_version(*text);
  if (!version) return "a record " + *found + " that is not a version number that can be read";
  using caffe2::serialize::kMaxSupportedFileFormatVersion;
  using caffe2::serialize::kMinSupportedFileFormatVersion;
  if (*version < kMinSupportedFileFormatVersion || *version > kMaxSupportedFileFormatVersion) {
    return "format version " + std::to_string(*version) + ", which this libtorch reads from " +
           std::to_string(kMinSupportedFileFormatVersion) + " to " +
           std::to_string(kMaxSupportedFileFormatVersion);
  }
  return std::nullopt;
}

bool archive_defines_forward(const std::filesystem::path& archive) {
  // Only sizes minizip can trust: a program whose version record this libtorch cannot read is
  // still one, and its loader says why it cannot run it.
  if (find_implausible_record_size(archive)) return false;
  std::unique_ptr<void, ZipCloser> zip(unzOpen64(archive.c_str()));
  if (!zip) return false;
  // A code record is the source of a few classes; a megabyte is far beyond any scripted NP's.
  constexpr uint64_t kMaxCodeRecord = uint64_t{1} << 20;
  for (int more = unzGoToFirstFile(zip.get()); more == UNZ_OK; more = unzGoToNextFile(zip.get())) {
    unz_file_info64 info{};
    char name[512] = {};
    if (unzGetCurrentFileInfo64(zip.get(), &info, name, sizeof name - 1, nullptr, 0, nullptr, 0) !=
        UNZ_OK)
      return false;
    const std::string_view record(name);
    const auto slash = record.find('/');
    if (slash == std::string_view::npos || record.compare(slash, 6, "/code/") != 0 ||
        !ends_with(record, ".py") || info.uncompressed_size > kMaxCodeRecord)
      continue;
    if (unzOpenCurrentFile(zip.get()) != UNZ_OK) return false;
    std::string source(info.uncompressed_size, '\0');
    const int got = source.empty() ? 0
                                   : unzReadCurrentFile(zip.get(), source.data(),
                                                        static_cast<unsigned>(source.size()));
    const int closed = unzCloseCurrentFile(zip.get());
    if (got != static_cast<int>(source.size()) || closed != UNZ_OK) return false;
    // libtorch prints methods of a class indented by two spaces: "  def forward(self: ...".
    for (size_t at = source.find("def forward("); at != std::string::npos;
         at = source.find("def forward(", at + 1)) {
      const auto line_start = source.rfind('\n', at);
      const auto indent = at - (line_start == std::string::npos ? 0 : line_start + 1);
      if (indent == 2) return true;
    }
  }
  return false;
}

std::optional<std::string> find_archive_problem(const std::filesystem::path& archive,
                                                ArchiveCode allowed_code) {
  if (auto problem = find_implausible_record_size(archive)) return problem;
  if (auto problem = find_unsupported_layout(archive)) return problem;
  caffe2::serialize::PyTorchStreamReader reader(archive.string());
  for (const auto& name : reader.getAllRecords()) {
    if (ends_with(name, ".py") && name.compare(0, 5, "code/") == 0) {
      const auto [data, size] = reader.getRecord(name);
      const std::string_view source(static_cast<const char*>(data.get()), size);
      if (auto problem = find_disallowed_code(source, allowed_code))
        return "a record " + name + " holding " + *problem;
      continue;
    }
    if (!ends_with(name, "pkl")) continue;
    const auto [data, size] = reader.getRecord(name);
    if (auto problem = find_malformed_pickle(static_cast<const uint8_t*>(data.get()), size)) {
      return "a record " + name + " holding " + *problem;
    }
  }
  return std::nullopt;
}

std::optional<std::string> find_view_beyond_storage(const at::Tensor& tensor) {
  if (!tensor.defined()) return std::string("an undefined tensor");
  if (tensor.numel() == 0) return std::nullopt;
  if (!tensor.has_storage()) return std::string("a tensor without stored data");
  // The last element's index in the storage: offset + sum of (size - 1) * stride. Strides and
  // the offset come from the file, so every step is checked for overflow.
  int64_t last = tensor.storage_offset();
  if (last < 0) return "a tensor at a negative offset (" + std::to_string(last) + ")";
  for (int64_t d = 0; d < tensor.dim(); ++d) {
    int64_t step = 0;
    if (tensor.stride(d) < 0 ||
        __builtin_mul_overflow(tensor.size(d) - 1, tensor.stride(d), &step) ||
        __builtin_add_overflow(last, step, &last)) {
      return std::string("a tensor whose strides reach outside any storage");
    }
  }
  int64_t bytes = 0;
  if (__builtin_add_overflow(last, int64_t{1}, &last) ||
      __builtin_mul_overflow(last, static_cast<int64_t>(tensor.element_size()), &bytes) ||
      tensor.storage().data() == nullptr ||
      static_cast<uint64_t>(bytes) > tensor.storage().nbytes()) {
    return "a tensor that reaches " + std::to_string(bytes) + " bytes into a stored record of " +
           std::to_string(tensor.storage().nbytes());
  }
  return std::nullopt;
}

}  // namespace npe
