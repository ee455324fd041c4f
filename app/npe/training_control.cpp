#include "training_control.h"

#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstring>
#include <string>
#include <thread>

namespace npe::cli {
namespace {

volatile std::sig_atomic_t g_signalled = 0;

extern "C" void on_stop_signal(int signal) {
  // A second Ctrl-C ends the program at once (the last checkpoint is kept).
  if (g_signalled) {
    std::signal(signal, SIG_DFL);
    std::raise(signal);
  }
  g_signalled = 1;
}

}  // namespace

TrainingControl::TrainingControl(bool read_commands) {
  std::signal(SIGINT, on_stop_signal);
  std::signal(SIGTERM, on_stop_signal);
  if (read_commands) {
    // Detached: it blocks in read() until a command or end of input, and the process may end
    // while it waits.
    std::thread([this] { this->read_commands(); }).detach();
  }
}

void TrainingControl::read_commands() {
  std::string line;
  char buffer[256];
  for (;;) {
    const auto n = ::read(STDIN_FILENO, buffer, sizeof buffer);
    // End of input (a closed pipe, /dev/null) is not a command: training goes on.
    if (n <= 0) return;
    for (ssize_t i = 0; i < n; ++i) {
      if (buffer[i] == '\n') {
        command(line.c_str());
        line.clear();
      } else if (line.size() < 64) {
        line += buffer[i];
      }
    }
  }
}

void TrainingControl::command(const char* text) {
  std::string word(text);
  while (!word.empty() && (word.back() == '\r' || word.back() == ' ')) word.pop_back();
  {
    std::lock_guard lock(m_mutex);
    if (word == "pause")
      m_paused = true;
    else if (word == "resume")
      m_paused = false;
    else if (word == "stop")
      m_stop = true;
    else
      return;
  }
  m_changed.notify_all();
}

bool TrainingControl::stop_requested() const {
  return m_stop || g_signalled;
}

bool TrainingControl::proceed(const std::function<void(bool)>& on_pause) {
  std::unique_lock lock(m_mutex);
  if (m_paused && !stop_requested()) {
    on_pause(true);
    // Signals cannot notify a condition variable: poll for them while paused.
    while (m_paused && !stop_requested()) {
      m_changed.wait_for(lock, std::chrono::milliseconds(200));
    }
    on_pause(false);
  }
  return !stop_requested();
}

}  // namespace npe::cli
