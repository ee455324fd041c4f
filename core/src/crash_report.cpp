#include "npe/crash_report.h"

#include <execinfo.h>
#include <signal.h>
#include <ucontext.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cstring>

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define NPE_SANITIZER_REPORTS_CRASHES 1
#endif
#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define NPE_SANITIZER_REPORTS_CRASHES 1
#endif
#endif

namespace npe {
namespace {

std::atomic<const char*> g_program{"npe"};
std::atomic<const char*> g_phase{nullptr};

void say(const char* text) {
  size_t left = std::strlen(text);
  while (left > 0) {
    const ssize_t written = ::write(STDERR_FILENO, text, left);
    if (written <= 0) return;
    text += written;
    left -= static_cast<size_t>(written);
  }
}

// strsignal() may allocate (it formats unknown numbers): the five handled ones by name.
const char* signal_name(int signal_number) {
  switch (signal_number) {
    case SIGSEGV:
      return "SIGSEGV (invalid memory access)";
    case SIGBUS:
      return "SIGBUS (bus error)";
    case SIGILL:
      return "SIGILL (illegal instruction)";
    case SIGFPE:
      return "SIGFPE (arithmetic exception)";
    case SIGABRT:
      return "SIGABRT (aborted: glibc's heap checks and std::terminate end this way)";
    default:
      return "a fatal signal";
  }
}

void report_and_die(int signal_number, siginfo_t*, void* context) {
  say("\n*** ");
  say(g_program.load());
  say(" died of ");
  say(signal_name(signal_number));
  if (const char* phase = g_phase.load()) {
    say(" while ");
    say(phase);
  }
  say("; its stack:\n");
  write_crash_backtrace(context);
  // Die of the same signal, so that the shell, ctest and the training tab see what they would
  // have seen without the report.
  ::signal(signal_number, SIG_DFL);
  ::raise(signal_number);
}

}  // namespace

bool sanitizer_reports_crashes() {
#ifdef NPE_SANITIZER_REPORTS_CRASHES
  return true;
#else
  return false;
#endif
}

void write_crash_backtrace(void* context) {
#if defined(__x86_64__) && defined(__linux__)
  // A call through a null pointer leaves the unwinder no frame to start from, but the call's
  // return address is still on top of the stack.
  if (context) {
    const auto* machine = &static_cast<ucontext_t*>(context)->uc_mcontext;
    if (machine->gregs[REG_RIP] == 0) {
      void* caller = *reinterpret_cast<void**>(machine->gregs[REG_RSP]);
      say("the instruction pointer is 0 (a call through a null pointer); the call came from:\n");
      backtrace_symbols_fd(&caller, 1, STDERR_FILENO);
    }
  }
#else
  (void)context;
#endif
  std::array<void*, 64> frames{};
  const int depth = backtrace(frames.data(), static_cast<int>(frames.size()));
  backtrace_symbols_fd(frames.data(), depth, STDERR_FILENO);
}

void set_crash_phase(const char* phase) {
  g_phase.store(phase);
}

void install_crash_report(const char* program) {
  if (sanitizer_reports_crashes()) return;
  g_program.store(program);
  // backtrace() loads libgcc's unwinder on first use: do it now, not inside the handler.
  std::array<void*, 2> warm_up{};
  backtrace(warm_up.data(), static_cast<int>(warm_up.size()));
  struct sigaction action {};
  action.sa_sigaction = report_and_die;
  // SA_ONSTACK: a stack overflow still gets its report where an alternate stack is set up.
  action.sa_flags = SA_SIGINFO | SA_ONSTACK;
  sigemptyset(&action.sa_mask);
  for (int signal_number : {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT})
    ::sigaction(signal_number, &action, nullptr);
}

}  // namespace npe
