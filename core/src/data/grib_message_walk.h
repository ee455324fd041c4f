#pragma once
// A walk over a GRIB file's messages, finding them as ecCodes' file reader does, before
// ecCodes reads any of them.
//
// ecCodes' reader trusts the lengths in a message's header: it allocates the length a header
// claims and copies the header bytes it has read into that buffer, and for ECMWF's pseudo-GRIB
// records (BUDG, DIAG, TIDE) it reads a section whose length comes from the file into a 32-byte
// stack buffer. So a 2^48-byte claim exhausts memory, a claim shorter than the header overflows
// the heap, and a pseudo-GRIB section length under 3 overruns the stack (each found by
// fuzz_gridded_field or by reading ecCodes' reader; tests/fuzz/regressions/gridded_field). This
// walk refuses every such message, so ecCodes only reads messages that lie whole in the file.

#include <cstdint>
#include <istream>
#include <optional>
#include <string>

namespace npe {

/// Walks the messages of `file` (`file_size` bytes in all) from its start, as ecCodes finds
/// them: a message starts at the next "GRIB" (or pseudo-GRIB "BUDG", "DIAG", "TIDE"), bytes
/// between messages are skipped. Returns a description of the first message ecCodes could not
/// read safely (its header cut short, its length shorter than its header or longer than the
/// bytes left, or a pseudo-GRIB record, which holds no gridded field), or nothing.
std::optional<std::string> grib_message_problem(std::istream& file, std::uint64_t file_size);

}  // namespace npe
