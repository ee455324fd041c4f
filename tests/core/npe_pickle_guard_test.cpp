// The guard in front of libtorch's unpickler: a length larger than the rest of the pickle is
// refused before libtorch reserves memory for it (fuzz_checkpoint_archive found a 4 GB one), and
// so is a memo index beyond the pickle's size (libtorch grows its memo table to the index).

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "models/checkpoint/pickle_guard.h"

namespace npe {
namespace {

std::optional<std::string> walk(const std::vector<uint8_t>& pickle) {
  return find_malformed_pickle(pickle.data(), pickle.size());
}

// PROTO 2, BINUNICODE "ab" (length 2), BININT1 7, TUPLE2, STOP.
const std::vector<uint8_t> kValid = {0x80, 2, 'X', 2, 0, 0, 0, 'a', 'b', 'K', 7, 0x86, '.'};

TEST(PickleGuard, AcceptsAWellFormedPickle) {
  EXPECT_FALSE(walk(kValid).has_value());
}

TEST(PickleGuard, RefusesAStringLongerThanTheRest) {
  auto corrupt = kValid;
  corrupt[3] = 0xf4;  // BINUNICODE length 0xfffffff4 little-endian
  corrupt[4] = corrupt[5] = corrupt[6] = 0xff;
  const auto problem = walk(corrupt);
  ASSERT_TRUE(problem.has_value());
  EXPECT_NE(problem->find("4294967284 bytes"), std::string::npos) << *problem;
}

TEST(PickleGuard, RefusesCutOffLengthsAndArguments) {
  EXPECT_TRUE(walk({0x80, 2, 'X', 2, 0}).has_value());           // length cut off
  EXPECT_TRUE(walk({0x80, 2, 'G', 0, 0, 0}).has_value());        // BINFLOAT needs 8 bytes
  EXPECT_TRUE(walk({0x80, 2, 'c', 'm', 'o', 'd'}).has_value());  // GLOBAL without newline
}

TEST(PickleGuard, RefusesAMemoIndexNoPickleOfThisSizeCanReach) {
  // BINUNICODE "ab", then LONG_BINPUT: index 1 is what a writer would use, 0x6e696c2e (what
  // fuzz_checkpoint_archive found: libtorch grew its memo to 29.6 GB for it) is not.
  std::vector<uint8_t> pickle = {0x80, 2, 'X', 2, 0, 0, 0, 'a', 'b', 'r', 1, 0, 0, 0, '.'};
  EXPECT_FALSE(walk(pickle).has_value());
  pickle[10] = 0x2e, pickle[11] = 0x6c, pickle[12] = 0x69, pickle[13] = 0x6e;
  const auto problem = walk(pickle);
  ASSERT_TRUE(problem.has_value());
  EXPECT_NE(problem->find("memo index of 1852402734"), std::string::npos) << *problem;
  // BINPUT's one-byte index: 200 in a 12-byte pickle.
  EXPECT_TRUE(walk({0x80, 2, 'X', 2, 0, 0, 0, 'a', 'b', 'q', 200, '.'}).has_value());
  EXPECT_FALSE(walk({0x80, 2, 'X', 2, 0, 0, 0, 'a', 'b', 'q', 0, '.'}).has_value());
}

TEST(PickleGuard, WalksThroughEveryOpcodeLibtorchReads) {
  // fuzz_checkpoint_archive: a LIST opcode ('l') used to end the walk, and a LONG_BINPUT after
  // it made libtorch grow its memo table to 2,306,081,099 entries (36.9 GB).
  std::vector<uint8_t> pickle = {0x80, 2, '(', 'l', 'r', 0x4b, 0x01, 0x74, 0x89, '.'};
  auto problem = walk(pickle);
  ASSERT_TRUE(problem.has_value());
  EXPECT_NE(problem->find("memo index of 2306081099"), std::string::npos) << *problem;
  // The same after DICT, OBJ, NEWOBJ_EX, STACK_GLOBAL and EXT1, and after protocol 0's text
  // opcodes (INT, GLOBAL's two lines), each given the stack items it takes.
  for (const std::vector<uint8_t>& prefix : {std::vector<uint8_t>{'(', 'd'},
                                             {'(', 'N', 'o'},
                                             {'N', 'N', 'N', 0x92},
                                             {'N', 'N', 0x93},
                                             {0x82, 7},
                                             {'I', '1', '2', '\n'},
                                             {'c', 'm', '\n', 'n', '\n'}}) {
    std::vector<uint8_t> p = {0x80, 2};
    p.insert(p.end(), prefix.begin(), prefix.end());
    p.insert(p.end(), {'r', 0x4b, 0x01, 0x74, 0x89, '.'});
    const auto found = walk(p);
    ASSERT_TRUE(found.has_value()) << "after opcode " << int(prefix.back());
    EXPECT_NE(found->find("memo index"), std::string::npos) << *found;
  }
  // PUT's decimal index is held to the same bound; an unterminated one is refused.
  EXPECT_TRUE(walk({0x80, 2, 'N', 'p', '9', '9', '9', '\n', '.'}).has_value());
  EXPECT_FALSE(walk({0x80, 2, 'N', 'p', '0', '\n', '.'}).has_value());
  EXPECT_TRUE(walk({0x80, 2, 'N', 'p', '0'}).has_value());
}

TEST(PickleGuard, RefusesPopsTheStackCannotServe) {
  // fuzz_checkpoint_archive: BUILD as the first opcode (GLOBAL's 'c' changed to 'b') made
  // libtorch 1.13 read before the start of its empty stack and crash.
  const auto build_first = walk({0x80, 2, 'b', 'N', '.'});
  ASSERT_TRUE(build_first.has_value());
  EXPECT_NE(build_first->find("opcode 0x62 at byte 2 that takes more items"), std::string::npos)
      << *build_first;
  EXPECT_TRUE(walk({0x80, 2, 't', '.'}).has_value());                 // TUPLE without a MARK
  EXPECT_TRUE(walk({0x80, 2, 'N', '(', '0', 'l', '.'}).has_value());  // POP across a MARK
  EXPECT_TRUE(walk({0x80, 2, '(', 'N', 'e', '.'}).has_value());       // APPENDS with no list
  EXPECT_TRUE(walk({0x80, 2, 'N', 'N', 0x87, '.'}).has_value());      // TUPLE3 of two
  EXPECT_TRUE(walk({0x80, 2, '.'}).has_value());                      // STOP on an empty stack
  // What libtorch writes: a list extended by APPENDS, a dict by SETITEMS, an object BUILT.
  EXPECT_FALSE(walk({0x80, 2,   ']', '(',  'N', 'N',  'e', '}',  '(', 'N', 'N',  'u',
                     0x86, 'c', 'm', '\n', 'C', '\n', ')', 0x81, 'N', 'b', 0x86, '.'})
                   .has_value());
}

TEST(PickleGuard, LeavesUnknownOpcodesToLibtorch) {
  // An opcode the walk does not know ends it without a verdict, even if garbage follows.
  EXPECT_FALSE(walk({0x80, 2, 'Z', 'X', 0xff, 0xff, 0xff, 0xff}).has_value());
}

}  // namespace
}  // namespace npe
