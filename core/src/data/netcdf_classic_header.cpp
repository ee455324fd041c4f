#include "netcdf_classic_header.h"

#include <array>
#include <limits>

namespace npe {
namespace {

// The grammar is the one of "The NetCDF Classic Format Specification" (Unidata): big-endian,
// every item padded to 4 bytes; CDF-5 widens counts, lengths and sizes to 8 bytes.
constexpr std::uint32_t kDimensionTag = 0x0A, kVariableTag = 0x0B, kAttributeTag = 0x0C;

struct HeaderRefused {
  std::string reason;
};

std::uint64_t padded(std::uint64_t bytes) {
  return (bytes + 3) / 4 * 4;
}

class HeaderWalk {
 public:
  HeaderWalk(std::istream& in, std::uint64_t size, int version)
      : m_in(in), m_size(size), m_wide(version == 5), m_offset_bytes(version == 1 ? 4 : 8) {}

  void walk() {
    skip(4, "the magic number");
    skip(wide_bytes(), "the record count");
    m_dimensions = list(kDimensionTag, "dimensions", 2 * wide_bytes(), [this] { dimension(); });
    list(kAttributeTag, "global attributes", 2 * wide_bytes() + 4, [this] { attribute(); });
    // name, dimension count, attribute tag and count, type, vsize, begin.
    const std::uint64_t smallest_variable = 4 * wide_bytes() + 8 + 4;
    list(kVariableTag, "variables", smallest_variable, [this] { variable(); });
  }

 private:
  std::uint64_t wide_bytes() const { return m_wide ? 8 : 4; }
  std::uint64_t remaining() const { return m_size - m_position; }

  [[noreturn]] void refuse(const std::string& reason) const {
    throw HeaderRefused{"corrupt classic-format header at byte " + std::to_string(m_position) +
                        ": " + reason};
  }

  void need(std::uint64_t bytes, const char* what) const {
    if (bytes > remaining())
      refuse(std::string(what) + " needs " + std::to_string(bytes) + " bytes but the file has " +
             std::to_string(remaining()) + " left");
  }

  std::uint64_t big_endian(std::uint64_t bytes, const char* what) {
    need(bytes, what);
    std::array<unsigned char, 8> raw{};
    m_in.read(reinterpret_cast<char*>(raw.data()), static_cast<std::streamsize>(bytes));
    if (!m_in) refuse(std::string("cannot read ") + what);
    m_position += bytes;
    std::uint64_t value = 0;
    for (std::uint64_t i = 0; i < bytes; ++i) value = value << 8 | raw[i];
    return value;
  }

  void skip(std::uint64_t bytes, const char* what) {
    need(bytes, what);
    m_in.seekg(static_cast<std::streamoff>(bytes), std::ios::cur);
    if (!m_in) refuse(std::string("cannot read ") + what);
    m_position += bytes;
  }

  // A count of items that each take at least `smallest_item` bytes of what follows.
  std::uint64_t count(const char* what, std::uint64_t smallest_item) {
    const std::uint64_t n = big_endian(wide_bytes(), what);
    if (m_wide && n > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
      refuse(std::string("negative count of ") + what);
    if (smallest_item > 0 && n > remaining() / smallest_item)
      refuse("it claims " + std::to_string(n) + " " + what + " but only " +
             std::to_string(remaining()) + " bytes follow");
    return n;
  }

  template <typename Item>
  std::uint64_t list(std::uint32_t tag, const char* what, std::uint64_t smallest_item, Item item) {
    const auto found = static_cast<std::uint32_t>(big_endian(4, "a list tag"));
    const std::uint64_t n = count(what, smallest_item);
    if (found == 0) {  // ABSENT
      if (n != 0) refuse(std::string("an absent list of ") + what + " with a nonzero count");
      return 0;
    }
    if (found != tag) refuse(std::string("expected the tag of the ") + what);
    for (std::uint64_t i = 0; i < n; ++i) item();
    return n;
  }

  void name() { skip(padded(count("name bytes", 1)), "a name"); }

  void dimension() {
    name();
    skip(wide_bytes(), "a dimension length");
  }

  void attribute() {
    name();
    const std::uint64_t element = element_bytes(big_endian(4, "an attribute type"));
    const std::uint64_t n = count("attribute values", element);
    skip(padded(n * element), "attribute values");
  }

  void variable() {
    name();
    const std::uint64_t rank = count("dimension ids", wide_bytes());
    for (std::uint64_t i = 0; i < rank; ++i)
      if (big_endian(wide_bytes(), "a dimension id") >= m_dimensions)
        refuse("a variable names a dimension that does not exist");
    list(kAttributeTag, "variable attributes", 2 * wide_bytes() + 4, [this] { attribute(); });
    element_bytes(big_endian(4, "a variable type"));
    skip(wide_bytes(), "a variable size");
    skip(m_offset_bytes, "a variable offset");
  }

  std::uint64_t element_bytes(std::uint64_t type) const {
    // NC_BYTE, NC_CHAR, NC_SHORT, NC_INT, NC_FLOAT, NC_DOUBLE; CDF-5 adds NC_UBYTE, NC_USHORT,
    // NC_UINT, NC_INT64, NC_UINT64.
    constexpr std::array<std::uint64_t, 12> bytes{0, 1, 1, 2, 4, 4, 8, 1, 2, 4, 8, 8};
    const std::uint64_t last = m_wide ? 11 : 6;
    if (type < 1 || type > last) refuse("unknown type " + std::to_string(type));
    return bytes[type];
  }

  std::istream& m_in;
  std::uint64_t m_size;
  std::uint64_t m_position = 0;
  bool m_wide;
  std::uint64_t m_offset_bytes;
  std::uint64_t m_dimensions = 0;
};

}  // namespace

std::optional<std::string> classic_header_problem(std::istream& file, std::uint64_t file_size) {
  std::array<char, 4> magic{};
  file.read(magic.data(), magic.size());
  if (!file || magic[0] != 'C' || magic[1] != 'D' || magic[2] != 'F') return std::nullopt;
  const int version = magic[3];
  if (version != 1 && version != 2 && version != 5) return std::nullopt;  // libnetcdf refuses
  file.seekg(0);
  try {
    HeaderWalk(file, file_size, version).walk();
  } catch (const HeaderRefused& refused) {
    return refused.reason;
  }
  return std::nullopt;
}

}  // namespace npe
