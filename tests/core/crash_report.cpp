// A test that dies of a signal says which test it was and where, in the log itself. Written for
// the lent GPU machines, which have no debugger: under PyTorch 2.11's libtorch the checkpoint
// tests died there with "segfault at 0 ip 0" (a call through a null function pointer) and nothing
// else. The sanitizer build has its own reports and is left alone, and so are child processes
// (the NetCDF-4 tests fork children that HDF5 crashes on purpose).

#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstring>

#include "npe/crash_report.h"

namespace {

pid_t g_test_process = 0;

void report_and_die(int signal_number, siginfo_t*, void* context) {
  if (::getpid() == g_test_process) {
    // Not async-signal-safe, but the process is ending anyway and the name is what matters.
    const auto* test = testing::UnitTest::GetInstance()->current_test_info();
    std::array<char, 512> line{};
    std::snprintf(line.data(), line.size(), "\n*** signal %d (%s) in %s.%s\n", signal_number,
                  strsignal(signal_number), test ? test->test_suite_name() : "(no test)",
                  test ? test->name() : "");
    if (::write(STDERR_FILENO, line.data(), std::strlen(line.data())) < 0) return;
    npe::write_crash_backtrace(context);
  }
  // Die of the same signal, so that ctest and the shell see what they would have seen.
  ::signal(signal_number, SIG_DFL);
  ::raise(signal_number);
}

struct CrashReport {
  CrashReport() {
    if (npe::sanitizer_reports_crashes()) return;
    g_test_process = ::getpid();
    // The programs' own report (npe/crash_report.h) warms the unwinder up and names the program;
    // here the test's name is what matters, so this handler replaces it.
    npe::install_crash_report("the test suite");
    struct sigaction action {};
    action.sa_sigaction = report_and_die;
    action.sa_flags = SA_SIGINFO;
    sigemptyset(&action.sa_mask);
    for (int signal_number : {SIGSEGV, SIGBUS, SIGILL, SIGFPE})
      sigaction(signal_number, &action, nullptr);
    // SIGABRT keeps the default: death tests of aborts expect it.
    ::signal(SIGABRT, SIG_DFL);
  }
};

const CrashReport g_crash_report;

}  // namespace
