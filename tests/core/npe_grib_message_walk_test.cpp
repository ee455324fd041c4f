// The GRIB message walk in front of ecCodes: messages ecCodes itself writes pass, and every
// header that would make its file reader overrun a buffer is refused first.

#include <eccodes.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "data/grib_message_walk.h"
#include "npe/data/gridded_field.h"
#include "npe/errors.h"
#include "test_support.h"

namespace npe {
namespace {

namespace fs = std::filesystem;

std::optional<std::string> grib_walk(const std::string& bytes) {
  std::istringstream in(bytes);
  return grib_message_problem(in, bytes.size());
}

void expect_refused(const std::string& bytes, const std::string& fragment) {
  const auto problem = grib_walk(bytes);
  ASSERT_TRUE(problem.has_value()) << "expected a refusal naming: " << fragment;
  EXPECT_NE(problem->find(fragment), std::string::npos) << *problem;
}

/// One message of ecCodes' own sample, as ecCodes writes it.
std::string sample_message(const char* sample) {
  codes_handle* h = codes_grib_handle_new_from_samples(nullptr, sample);
  if (!h) return {};
  const void* message = nullptr;
  size_t size = 0;
  codes_get_message(h, &message, &size);
  std::string bytes(static_cast<const char*>(message), size);
  codes_handle_delete(h);
  return bytes;
}

std::string big_endian(std::uint64_t value, int bytes) {
  std::string out(static_cast<size_t>(bytes), '\0');
  for (int i = bytes - 1; i >= 0; --i, value >>= 8)
    out[static_cast<size_t>(i)] = char(value & 0xff);
  return out;
}

class GribMessageWalk : public ::testing::Test {
 protected:
  void SetUp() override {
    grib1 = sample_message("regular_ll_sfc_grib1");
    grib2 = sample_message("regular_ll_sfc_grib2");
    if (grib1.empty() || grib2.empty()) GTEST_SKIP() << "ecCodes' samples are not installed";
  }
  fs::path scratch(const std::string& name, const std::string& bytes) {
    const auto dir =
        fs::temp_directory_path() / ("npe-grib-walk-test-" + std::to_string(::getpid()));
    fs::create_directories(dir);
    const auto path = dir / name;
    std::ofstream(path, std::ios::binary) << bytes;
    return path;
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(fs::temp_directory_path() / ("npe-grib-walk-test-" + std::to_string(::getpid())),
                   ec);
  }
  std::string grib1, grib2;
};

TEST_F(GribMessageWalk, MessagesEcCodesWritesPassWithBytesBetweenThem) {
  EXPECT_FALSE(grib_walk(grib1).has_value());
  EXPECT_FALSE(grib_walk(grib2).has_value());
  // ecCodes skips bytes between messages (padding, or a text header), and so does the walk.
  EXPECT_FALSE(
      grib_walk("padding" + grib1 + std::string(40, '\0') + grib2 + "trailer").has_value());
  // Not a GRIB file at all: nothing for ecCodes to read, nothing to refuse.
  EXPECT_FALSE(grib_walk("").has_value());
  EXPECT_FALSE(grib_walk("no messages in here").has_value());
}

TEST_F(GribMessageWalk, AnEdition3HeaderIsReadAsEcCodesReadsIt) {
  // ecCodes reads an edition 3 header's 64-bit length as edition 2's. The walk used to skip
  // such a header, and ecCodes allocated the 1 byte one claimed and copied its 16-byte header
  // into it (found by fuzz_gridded_field in session 21).
  const std::string edition3 = std::string("GRIB\0\0\0\3", 8) + big_endian(1, 8);
  expect_refused(grib2 + edition3 + std::string(100, '\0'),
                 "the message at byte " + std::to_string(grib2.size()) +
                     " claims 1 bytes, less than a GRIB header");
  // A whole edition 3 message passes the walk (ecCodes then refuses what it cannot decode).
  std::string whole =
      std::string("GRIB\0\0\0\3", 8) + big_endian(24, 8) + std::string(4, '\0') + "7777";
  EXPECT_FALSE(grib_walk(whole).has_value());
  expect_refused(whole.substr(0, 12), "ends inside its header");
}

TEST_F(GribMessageWalk, AClaimShorterThanTheHeaderOrLongerThanTheFileIsRefused) {
  std::string short_claim = grib2;
  short_claim.replace(8, 8, big_endian(8, 8));
  expect_refused(short_claim, "claims 8 bytes, less than a GRIB header");
  std::string long_claim = grib1;
  long_claim.replace(4, 3, big_endian(grib1.size() + 1, 3));
  expect_refused(long_claim, "claims " + std::to_string(grib1.size() + 1) +
                                 " bytes but the file has " + std::to_string(grib1.size()));
  expect_refused(grib2.substr(0, 12), "the message at byte 0 ends inside its header");
  // An edition ecCodes does not read is not a message it allocates for: the walk moves on.
  EXPECT_FALSE(grib_walk(std::string("GRIB\0\0\0\x09", 8) + grib1).has_value());
}

TEST_F(GribMessageWalk, PseudoGribRecordsAreRefused) {
  // ecCodes reads ECMWF's pseudo-GRIB records (BUDG, DIAG, TIDE) with GRIB files; their
  // section 1 goes into a 32-byte stack buffer for "length - 3" bytes, so a length under 3
  // wraps and the rest of the file overruns the stack ("stack smashing detected" in the
  // program's reader child). None holds a gridded field.
  for (const char* tag : {"BUDG", "DIAG", "TIDE"}) {
    expect_refused(grib2 + tag + std::string(3, '\0') + std::string(200, 'A'),
                   "the message at byte " + std::to_string(grib2.size()) +
                       " is an ECMWF pseudo-GRIB record ('" + tag + "')");
  }
}

TEST_F(GribMessageWalk, LargeGrib1MessagesAreMeasuredAsEcCodesMeasuresThem) {
  // GRIB 1 messages over 8 MB set the top bit of the 24-bit length; with a section 4 shorter
  // than 120 bytes, the rest counts 120-byte units: 1 unit, section 4 of 12 bytes, so
  // 120 - 12 + 4 = 112 bytes. Section 1 is 28 bytes with no sections 2 and 3.
  std::string section1 = big_endian(28, 3) + std::string(25, '\0');
  std::string large =
      std::string("GRIB") + big_endian(0x800000 | 1, 3) + "\1" + section1 + big_endian(12, 3);
  large += std::string(112 - 4 - large.size(), '\0') + "7777";
  ASSERT_EQ(large.size(), 112u);
  EXPECT_FALSE(grib_walk(large).has_value());
  expect_refused(large.substr(0, 111), "claims 112 bytes but the file has 111 left");
  // ecCodes' own reader measures them so too: it finds two such messages with bytes between
  // them, each ending in "7777" where that length puts the end.
  const std::string two = large + "xx" + large;
  EXPECT_FALSE(grib_walk(two).has_value());
  int count = 0;
  EXPECT_EQ(codes_count_in_filename(nullptr, scratch("large.grib", two).c_str(), &count), 0);
  EXPECT_EQ(count, 2);
  // No units at all: ecCodes' unsigned arithmetic would wrap below the bytes it has read.
  std::string no_units = large;
  no_units.replace(4, 3, big_endian(0x800000, 3));
  expect_refused(no_units, "claims 0 bytes, less than a GRIB header");
  // A section shorter than its own length field: ecCodes would read "length - 3" bytes, an
  // unsigned wrap, into its buffer.
  std::string short_section1 = large;
  short_section1.replace(8, 3, big_endian(5, 3));
  expect_refused(short_section1, "has a section 1 of 5 bytes");
  std::string short_section2 = large;
  short_section2[15] = '\x80';                          // section 1's flags: a section 2 follows
  short_section2.replace(8 + 28, 3, big_endian(2, 3));  // where section 4's length was
  expect_refused(short_section2, "has a section 2 of 2 bytes");
}

TEST_F(GribMessageWalk, TheReaderRefusesTheFuzzersEdition3Message) {
  // fuzz_gridded_field's input: ten GRIB 1 messages of 108 bytes, and at byte 1226 an edition 3
  // header claiming 1 byte (AddressSanitizer: a 16-byte write into a 1-byte heap block inside
  // libeccodes' file reader).
  const fs::path finding = fs::path(NPE_FUZZ_REGRESSIONS_DIR) / "gridded_field" /
                           "fuzz_gridded_field-crash-edition-3-length-eccodes-"
                           "57a0f82206ccdb99c9a48a23a96ead7fe4dffd87";
  NPE_EXPECT_THROW_WITH(read_gridded_field(finding), DataError,
                        "the message at byte 1226 claims 1 bytes, less than a GRIB header");
  // The pseudo-GRIB case through the reader: a clear refusal, not a reader child that died.
  const auto tide =
      scratch("tide.grib", grib2 + "TIDE" + std::string(3, '\0') + std::string(200, 'A'));
  NPE_EXPECT_THROW_WITH(read_gridded_field(tide), DataError, "pseudo-GRIB record ('TIDE')");
}

}  // namespace
}  // namespace npe
