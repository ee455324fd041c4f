// A test that dies of a signal says which test it was and where, in the log itself. Written for
// the lent GPU machines, which have no debugger: under PyTorch 2.11's libtorch the checkpoint
// tests died there with "segfault at 0 ip 0" (a call through a null function pointer) and nothing
// else. The sanitizer build has its own reports and is left alone, and so are child processes
// (the NetCDF-4 tests fork children that HDF5 crashes on purpose).

#include <execinfo.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <ucontext.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstring>

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define NPE_SANITIZER_REPORTS_CRASHES 1
#endif
#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define NPE_SANITIZER_REPORTS_CRASHES 1
#endif
#endif

namespace {

#ifndef NPE_SANITIZER_REPORTS_CRASHES

pid_t g_test_process = 0;

void say(const char* text) {
  if (::write(STDERR_FILENO, text, std::strlen(text)) < 0) return;
}

// The function a bad call jumped from: with the instruction pointer at 0 the unwinder has no frame
// to start from, but the call's return address is still on top of the stack.
void report_caller_of_null_jump(void* context) {
#if defined(__x86_64__) && defined(__linux__)
  const auto* machine = &static_cast<ucontext_t*>(context)->uc_mcontext;
  if (machine->gregs[REG_RIP] != 0) return;
  void* caller = *reinterpret_cast<void**>(machine->gregs[REG_RSP]);
  say("the instruction pointer is 0 (a call through a null pointer); the call came from:\n");
  backtrace_symbols_fd(&caller, 1, STDERR_FILENO);
#else
  (void)context;
#endif
}

void report_and_die(int signal_number, siginfo_t*, void* context) {
  if (::getpid() == g_test_process) {
    // Not async-signal-safe, but the process is ending anyway and the name is what matters.
    const auto* test = testing::UnitTest::GetInstance()->current_test_info();
    std::array<char, 512> line{};
    std::snprintf(line.data(), line.size(), "\n*** signal %d (%s) in %s.%s\n", signal_number,
                  strsignal(signal_number), test ? test->test_suite_name() : "(no test)",
                  test ? test->name() : "");
    say(line.data());
    report_caller_of_null_jump(context);
    std::array<void*, 64> frames{};
    const int depth = backtrace(frames.data(), static_cast<int>(frames.size()));
    backtrace_symbols_fd(frames.data(), depth, STDERR_FILENO);
  }
  // Die of the same signal, so that ctest and the shell see what they would have seen.
  ::signal(signal_number, SIG_DFL);
  ::raise(signal_number);
}

struct CrashReport {
  CrashReport() {
    g_test_process = ::getpid();
    // backtrace() loads libgcc on first use: do it now, not inside the handler.
    std::array<void*, 2> warm_up{};
    backtrace(warm_up.data(), static_cast<int>(warm_up.size()));
    struct sigaction action {};
    action.sa_sigaction = report_and_die;
    action.sa_flags = SA_SIGINFO;
    sigemptyset(&action.sa_mask);
    for (int signal_number : {SIGSEGV, SIGBUS, SIGILL, SIGFPE})
      sigaction(signal_number, &action, nullptr);
  }
};

const CrashReport g_crash_report;

#endif

}  // namespace
