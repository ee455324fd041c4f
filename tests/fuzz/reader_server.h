#pragma once
// fuzz_gridded_field's reader server. The program reads each NetCDF-4 and GRIB file in a child
// process of its own (child_process.cpp), so that a library crashing or hanging on a corrupt
// file becomes an error. Forking the fuzzer (a 400-800 MB AddressSanitizer process) for every
// input cost more than most reads (a third of the time in a profile, 155 executions a second),
// so this harness runs the readers in one long-lived process instead, forked from the fuzzer
// and forked again only when it ends:
// - the readers' work runs in that process (npe_fuzz_work_in_this_process), through the same
//   channel and result parsing as in a child;
// - a signal there (a library crashing on a corrupt file, which the program contains and
//   reports as "failed on this file") ends it and is not a finding; a stall of `limit` kills it;
// - a sanitizer report there, a fault in the project's code or another exception than the
//   loader's error stops the fuzzer, so that libFuzzer keeps the input as a crash, when a fresh
//   server reading that input alone makes it again: the libraries' state carries over between
//   the inputs one server reads, never between the programs' children;
// - its coverage counters are copied back after each input (before it dies, on a signal), so
//   that libFuzzer sees the branches of the readers it reached.
// It retires itself after a number of inputs or when it grows large, since the libraries keep
// memory on their error paths (lsan.supp).

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>

namespace npe::fuzz {

class ReaderServer {
 public:
  /// `work` is what the server does for each input (the harness has written it to a file).
  ReaderServer(std::function<void()> work, std::chrono::milliseconds limit);
  ReaderServer(const ReaderServer&) = delete;
  ReaderServer& operator=(const ReaderServer&) = delete;
  ~ReaderServer();

  /// Runs `work` once in the server, starting one first when there is none, and takes over the
  /// coverage it reached. On a finding, reads the input again in a fresh server, and aborts
  /// (libFuzzer keeps the input) when that one makes a finding too.
  void run();

 private:
  void start();
  [[noreturn]] void serve();
  /// Runs the input once; true when the server made a finding.
  bool serve_once();
  /// Reaps the server (killing it first when `killed`); true when it made a finding.
  bool ended(bool killed);
  void take_coverage();

  std::function<void()> m_work;
  std::chrono::milliseconds m_limit;
  uint8_t* m_shared = nullptr;  // a report flag, then the server's copy of the counters
  pid_t m_pid = -1;
  int m_socket = -1;  // the fuzzer's end
};

}  // namespace npe::fuzz
