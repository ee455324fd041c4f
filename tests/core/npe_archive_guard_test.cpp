// The guard in front of libtorch's archive reader: a record whose zip directory states sizes the
// file cannot hold is refused before libtorch allocates them (CI's fuzz_checkpoint_archive found
// a 120 KB checkpoint that made it allocate 3.8 GB).

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

#include "models/archive_guard.h"
#include "npe/errors.h"
#include "npe/models/checkpoint.h"
#include "npe/models/model_registry.h"
#include "test_support.h"

namespace npe {
namespace {

namespace fs = std::filesystem;
using testing::tiny_config;

// Offsets of the fields this suite rewrites, in a zip's central directory entry and in a
// record's local header (PKWARE APPNOTE 4.3.7 and 4.3.12).
constexpr size_t kCentralMethod = 10, kCentralUncompressed = 24, kCentralNameLength = 28,
                 kCentralLocalOffset = 42, kCentralName = 46;
constexpr size_t kLocalMethod = 8, kLocalUncompressed = 22;

void put_le(std::string& bytes, size_t at, uint32_t value, int width) {
  for (int i = 0; i < width; ++i) bytes[at + i] = static_cast<char>((value >> (8 * i)) & 0xff);
}
uint32_t get_le(const std::string& bytes, size_t at, int width) {
  uint32_t value = 0;
  for (int i = width - 1; i >= 0; --i) value = value << 8 | static_cast<uint8_t>(bytes[at + i]);
  return value;
}

class ArchiveGuard : public testing::TemporaryFolderTest {
 protected:
  void SetUp() override {
    TemporaryFolderTest::SetUp();
    path = dir / "cnp.pt";
    auto model = make_model(tiny_config("cnp"));
    CheckpointMetadata metadata;
    metadata.model = model->config();
    save_checkpoint(path, *model, metadata);
    std::ifstream in(path, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }

  // Rewrites a field of the record whose name ends with `suffix`, in the central directory and
  // (when local_at is given) in its local header too, then writes the file back.
  void rewrite(const std::string& suffix, size_t central_at, size_t local_at, uint32_t value,
               int width) {
    bool found = false;
    for (size_t at = bytes.find("PK\x01\x02"); at != std::string::npos;
         at = bytes.find("PK\x01\x02", at + 4)) {
      const auto name = bytes.substr(at + kCentralName, get_le(bytes, at + kCentralNameLength, 2));
      if (name.size() < suffix.size() ||
          name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0)
        continue;
      put_le(bytes, at + central_at, value, width);
      if (local_at)
        put_le(bytes, get_le(bytes, at + kCentralLocalOffset, 4) + local_at, value, width);
      found = true;
    }
    ASSERT_TRUE(found) << "no record named *" << suffix;
    std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
  }

  fs::path path;
  std::string bytes;
};

TEST_F(ArchiveGuard, ACheckpointAsSavedPasses) {
  EXPECT_EQ(find_implausible_record_size(path), std::nullopt);
  EXPECT_EQ(find_archive_problem(path), std::nullopt);
  EXPECT_NO_THROW(load_checkpoint(path));
}

TEST_F(ArchiveGuard, ADeflatedRecordClaimingGigabytesIsRefusedBeforeLoading) {
  // The shape of CI's finding: a deflated record whose inflated size reads 0xF4000000.
  rewrite("data.pkl", kCentralMethod, kLocalMethod, 8, 2);
  rewrite("data.pkl", kCentralUncompressed, kLocalUncompressed, 0xF4000000u, 4);
  const auto problem = find_implausible_record_size(path);
  ASSERT_TRUE(problem.has_value());
  EXPECT_NE(problem->find("data.pkl"), std::string::npos) << *problem;
  EXPECT_NE(problem->find("4093640704 bytes"), std::string::npos) << *problem;
  NPE_EXPECT_THROW_WITH(load_checkpoint(path), CheckpointError, "more than deflate can expand");
}

TEST_F(ArchiveGuard, ADeflatedRecordWithinDeflatesRatioIsNotRefused) {
  // 1000:1 is possible for deflate (a run of zeros): the guard must not refuse it.
  rewrite("version", kCentralMethod, 0, 8, 2);
  // The version record is 2 bytes stored; claim 1000 times that, deflated.
  rewrite("version", kCentralUncompressed, 0, 2000, 4);
  EXPECT_EQ(find_implausible_record_size(path), std::nullopt);
}

TEST_F(ArchiveGuard, AStoredRecordWhoseSizesDisagreeIsRefused) {
  rewrite("data.pkl", kCentralUncompressed, 0, 0x7fffffffu, 4);
  NPE_EXPECT_THROW_WITH(load_checkpoint(path), CheckpointError, "whose two sizes differ");
}

TEST_F(ArchiveGuard, ACompressionMethodLibtorchCannotReadIsRefused) {
  rewrite("data.pkl", kCentralMethod, kLocalMethod, 12, 2);  // bzip2
  NPE_EXPECT_THROW_WITH(load_checkpoint(path), CheckpointError, "method libtorch cannot read (12)");
}

TEST_F(ArchiveGuard, AFileWithoutAZipDirectoryIsRefused) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes.substr(0, bytes.size() / 2);
  const auto problem = find_implausible_record_size(path);
  ASSERT_TRUE(problem.has_value());
  EXPECT_NE(problem->find("zip directory"), std::string::npos) << *problem;
  NPE_EXPECT_THROW_WITH(load_checkpoint(path), CheckpointError, "corrupt or truncated");
}

}  // namespace
}  // namespace npe
