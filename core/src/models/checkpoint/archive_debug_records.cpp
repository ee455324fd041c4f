#include "archive_debug_records.h"

#include <caffe2/serialize/inline_container.h>

#include "models/ends_with.h"

namespace npe {
namespace {

// Records the writer makes itself from its own state: libtorch 1.13's writer asserts when a
// record is written twice, and writes its version record unconditionally.
bool written_by_the_writer(const std::string& name) {
  return name == "version" || name == ".data/version";
}

}  // namespace

std::string archive_without_debug_records(const std::filesystem::path& archive) {
  caffe2::serialize::PyTorchStreamReader reader(archive.string());
  std::string bytes;
  caffe2::serialize::PyTorchStreamWriter writer([&bytes](const void* data, size_t size) {
    bytes.append(static_cast<const char*>(data), size);
    return size;
  });
  // The same format version, so that libtorch reads the copy as it would read the original.
  writer.setMinVersion(reader.version());
  for (const auto& name : reader.getAllRecords()) {
    if (ends_with(name, ".debug_pkl") || written_by_the_writer(name)) continue;
    // Newer writers add records of their own (byteorder, serialization id) only when missing.
    if (writer.getAllWrittenRecords().count(name) != 0) continue;
    const auto [data, size] = reader.getRecord(name);
    writer.writeRecord(name, data.get(), size);
  }
  writer.writeEndOfFile();
  return bytes;
}

}  // namespace npe
