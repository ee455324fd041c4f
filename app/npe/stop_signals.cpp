#include "stop_signals.h"

#include <pthread.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <mutex>
#include <thread>

namespace npe::cli {
namespace {

std::atomic<void (*)(int)> g_handler{nullptr};

sigset_t stop_signals() {
  sigset_t set;
  sigemptyset(&set);
  for (int signal_number : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&set, signal_number);
  return set;
}

}  // namespace

void receive_stop_signals_on_their_own_thread() {
  static std::once_flag started;
  std::call_once(started, [] {
    const sigset_t set = stop_signals();
    pthread_sigmask(SIG_BLOCK, &set, nullptr);
    // Detached: it waits for the whole life of the process and ends with it.
    std::thread([set] {
      for (;;) {
        int received = 0;
        if (sigwait(&set, &received) != 0) continue;
        if (auto* handler = g_handler.load()) {
          handler(received);
        } else {
          die_of_signal(received);
        }
      }
    }).detach();
  });
}

void set_stop_signal_handler(void (*on_signal)(int)) {
  g_handler.store(on_signal);
}

void die_of_signal(int signal_number) {
  std::signal(signal_number, SIG_DFL);
  sigset_t just_this;
  sigemptyset(&just_this);
  sigaddset(&just_this, signal_number);
  pthread_sigmask(SIG_UNBLOCK, &just_this, nullptr);
  // Sent to this thread, which no longer blocks it: the default action ends the process.
  ::raise(signal_number);
  ::_exit(128 + signal_number);
}

}  // namespace npe::cli
