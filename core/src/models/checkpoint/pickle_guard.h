#pragma once
// A guard in front of libtorch's unpickler, which reserves memory for a string or byte
// sequence from the length written in the file before checking that so many bytes follow: a
// corrupt checkpoint of a few kilobytes made it allocate and touch 4 GB (found by
// fuzz_checkpoint_archive). It also grows its memo table to whatever index a PUT names (29.6 GB
// for another corrupt file), and pops its stack without checking that the items are there (a
// BUILD as the first opcode crashed it). The walk below reads the opcodes of a pickle (protocols
// 2-4, as libtorch writes them) and checks every length against the bytes that remain, every
// memo index against the pickle's size, and the depth of the stack and its marks.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace npe {

/// Walks the pickle in `data` up to its STOP opcode. Returns a description of the first length
/// that exceeds the remaining bytes, memo index above the size or pop from a stack (or above a
/// mark) that does not hold the items, or nothing when there is none (it knows every opcode of
/// libtorch's PickleOpCode; any other byte ends it, and libtorch refuses that byte as well).
std::optional<std::string> find_malformed_pickle(const uint8_t* data, size_t size);

}  // namespace npe
