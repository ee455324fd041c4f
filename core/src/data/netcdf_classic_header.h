#pragma once
// A plausibility check of a NetCDF classic-format header (CDF-1, CDF-2 and CDF-5) before
// libnetcdf reads it.
//
// libnetcdf allocates what a classic header's counts claim before it checks them against the
// file: a 324-byte file asked for 15 GB, and where such an allocation fails libnetcdf's error
// path dereferences NULL (both found by fuzz_gridded_field; tests/fuzz/regressions). This walk
// refuses any count that could not fit in the bytes that remain, so libnetcdf only ever sees
// headers whose allocations are bounded by the file's size.

#include <cstdint>
#include <istream>
#include <optional>
#include <string>

namespace npe {

/// Walks the header at the start of `file` (`file_size` bytes in all). Returns a description of
/// the first count, length or tag that cannot be right, or nothing when the header is plausible
/// or the file is not a classic-format file at all (NetCDF-4 files are HDF5; they are left to
/// libnetcdf).
std::optional<std::string> classic_header_problem(std::istream& file, std::uint64_t file_size);

}  // namespace npe
