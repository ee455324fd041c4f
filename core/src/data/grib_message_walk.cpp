#include "grib_message_walk.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <vector>

namespace npe {
namespace {

// The tags ecCodes' GRIB reader starts a message at. The last three are ECMWF's pseudo-GRIB
// records (budget, diagnostic and tide values), which hold no grid.
constexpr std::array<const char*, 4> kTags = {"GRIB", "BUDG", "DIAG", "TIDE"};
constexpr std::uint64_t kTagBytes = 4;

// The smallest message the walk lets through: the 8- or 16-byte indicator section and the
// "7777" end section, with a little to spare. ecCodes copies the header bytes it has read into a
// buffer of the message's claimed length, so a claim below the header overflows that buffer.
constexpr std::uint64_t kSmallestMessage = 20;

// GRIB 1 lengths are 24 bits. ECMWF encodes messages over 8 MB by setting the top bit and, when
// section 4 claims fewer than 120 bytes, counting the length in 120-byte units corrected by
// section 4's length; ecCodes follows that convention (its "large GRIB" reading).
constexpr std::uint64_t kLargeGrib1Flag = 0x800000;
constexpr std::uint64_t kLargeGrib1Unit = 120;

struct WalkRefused {
  std::string reason;
};

struct Tag {
  std::uint64_t offset;
  const char* name;
};

class MessageWalk {
 public:
  MessageWalk(std::istream& in, std::uint64_t size) : m_in(in), m_size(size) {}

  void walk() {
    std::uint64_t offset = 0;
    while (const auto tag = next_tag(offset)) {
      m_message = tag->offset;
      if (std::strcmp(tag->name, "GRIB") != 0) {
        refuse(std::string("is an ECMWF pseudo-GRIB record ('") + tag->name +
               "'), which holds no gridded field");
      }
      const auto extent = grib_extent();
      if (!extent) {
        // An edition ecCodes does not read: it refuses the message (the program then refuses
        // the file) and would look for the next one 4 bytes on.
        offset = m_message + kTagBytes;
        continue;
      }
      if (extent->length < std::max(extent->header, kSmallestMessage)) {
        refuse("claims " + std::to_string(extent->length) + " bytes, less than a GRIB header");
      }
      const std::uint64_t left = m_size - m_message;
      if (extent->length > left) {
        refuse("claims " + std::to_string(extent->length) + " bytes but the file has " +
               std::to_string(left) + " left (truncated or corrupt)");
      }
      offset = m_message + extent->length;
    }
  }

 private:
  struct Extent {
    std::uint64_t length;  // of the whole message, as ecCodes will allocate it
    std::uint64_t header;  // the bytes ecCodes reads before it allocates
  };

  [[noreturn]] void refuse(const std::string& reason) const {
    throw WalkRefused{"the message at byte " + std::to_string(m_message) + " " + reason};
  }

  /// The next tag at or after `from`, at any byte, as ecCodes' rolling match finds it.
  std::optional<Tag> next_tag(std::uint64_t from) {
    constexpr std::uint64_t kBlock = 1 << 14;
    std::vector<char> block;
    while (from + kTagBytes <= m_size) {
      block.resize(static_cast<size_t>(std::min(kBlock, m_size - from)));
      read_at(from, block.data(), block.size());
      for (size_t i = 0; i + kTagBytes <= block.size(); ++i) {
        for (const char* tag : kTags) {
          if (std::memcmp(block.data() + i, tag, kTagBytes) == 0) return Tag{from + i, tag};
        }
      }
      // The next block overlaps this one by a tag less a byte, so that a straddling tag is seen.
      from += block.size() - (kTagBytes - 1);
    }
    return std::nullopt;
  }

  /// The length and header size ecCodes reads for the GRIB message at m_message, or nothing
  /// for an edition it does not read.
  std::optional<Extent> grib_extent() {
    const int edition = static_cast<int>(field(7, 1));
    switch (edition) {
      case 1: {
        const std::uint64_t coded = field(4, 3);
        if (coded & kLargeGrib1Flag) return large_grib1_extent(coded);
        return Extent{coded, 8};
      }
      case 2:
      case 3:  // ecCodes reads an edition 3 header as an edition 2 one: a 64-bit length
        return Extent{field(8, 8), 16};
      default:
        return std::nullopt;
    }
  }

  /// A GRIB 1 message with the large-message flag: ecCodes reads the lengths of sections 1 to 4
  /// (and the bytes of sections 1 to 3) before it allocates. A section shorter than its own
  /// length field would make it read "length - 3" bytes, an unsigned wrap, into its buffer.
  Extent large_grib1_extent(std::uint64_t coded) {
    std::uint64_t at = 8;  // section 1 follows the 8-byte indicator
    const std::uint64_t section1 = field(at, 3);
    // ecCodes reads section 1's length, then 5 one-byte fields, then the remaining
    // "length - 8" bytes.
    if (section1 < 8) refuse("has a section 1 of " + std::to_string(section1) + " bytes");
    const std::uint64_t flags = field(at + 7, 1);
    at += section1;
    for (const auto& [flag, name] : {std::pair{0x80u, "2"}, std::pair{0x40u, "3"}}) {
      if (!(flags & flag)) continue;
      const std::uint64_t section = field(at, 3);
      if (section < 3) {
        refuse(std::string("has a section ") + name + " of " + std::to_string(section) + " bytes");
      }
      at += section;
    }
    const std::uint64_t section4 = field(at, 3);
    at += 3;
    if (section4 >= kLargeGrib1Unit) return Extent{coded, at};
    const std::uint64_t units = (coded & ~kLargeGrib1Flag) * kLargeGrib1Unit + 4;
    // Fewer units than section 4's length: ecCodes' unsigned subtraction would wrap.
    return Extent{units > section4 ? units - section4 : 0, at};
  }

  /// The big-endian unsigned number of `bytes` bytes at `offset` from the message's start.
  std::uint64_t field(std::uint64_t offset, std::uint64_t bytes) {
    if (offset + bytes > m_size - m_message)
      refuse("ends inside its header (truncated or corrupt)");
    std::array<unsigned char, 8> raw{};
    read_at(m_message + offset, raw.data(), static_cast<size_t>(bytes));
    std::uint64_t value = 0;
    for (std::uint64_t i = 0; i < bytes; ++i) value = value << 8 | raw[i];
    return value;
  }

  void read_at(std::uint64_t offset, void* out, size_t bytes) {
    m_in.clear();
    m_in.seekg(static_cast<std::streamoff>(offset));
    m_in.read(static_cast<char*>(out), static_cast<std::streamsize>(bytes));
    if (!m_in) {
      throw WalkRefused{"cannot read " + std::to_string(bytes) + " bytes at byte " +
                        std::to_string(offset)};
    }
  }

  std::istream& m_in;
  std::uint64_t m_size;
  std::uint64_t m_message = 0;
};

}  // namespace

std::optional<std::string> grib_message_problem(std::istream& file, std::uint64_t file_size) {
  try {
    MessageWalk(file, file_size).walk();
  } catch (const WalkRefused& refused) {
    return refused.reason;
  }
  return std::nullopt;
}

}  // namespace npe
