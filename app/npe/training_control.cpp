#include "training_control.h"

#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <string>
#include <thread>

#include "stop_signals.h"

namespace npe::cli {
namespace {

std::atomic<bool> g_signalled{false};

// On the signal thread (stop_signals.h), never on a thread that computes.
void on_stop_signal(int signal) {
  // A second Ctrl-C ends the program at once (the last checkpoint is kept).
  if (g_signalled.exchange(true)) die_of_signal(signal);
}

}  // namespace

TrainingControl::TrainingControl(bool read_commands) {
  // main() has started the signal thread before any other thread existed; this call only makes
  // sure of it where TrainingControl is used without npe's main().
  receive_stop_signals_on_their_own_thread();
  // SIGINT, SIGTERM and SIGHUP: a training run on another computer over ssh loses its terminal
  // or its connection as a hang-up, or as a pipe with nobody reading it: both end it after a
  // final checkpoint, never in the middle of writing one (SIGPIPE would end it at the next event
  // line, wherever it is).
  set_stop_signal_handler(on_stop_signal);
  std::signal(SIGPIPE, SIG_IGN);
  if (read_commands) {
    // Detached: it blocks in read() until a command or end of input, and the process may end
    // while it waits. It holds the state, not this object.
    std::thread([state = m_state] { TrainingControl::read_commands(state); }).detach();
  }
}

void TrainingControl::read_commands(const std::shared_ptr<State>& state) {
  std::string line;
  char buffer[256];
  for (;;) {
    const auto n = ::read(STDIN_FILENO, buffer, sizeof buffer);
    // A signal (SIGSTOP/SIGCONT, SIGTERM) may interrupt the read: that is not end of input.
    if (n < 0 && errno == EINTR) continue;
    // End of input (a closed pipe, /dev/null) is not a command: a running training goes on,
    // a paused one stops (proceed).
    if (n <= 0) {
      {
        std::lock_guard lock(state->mutex);
        state->input_ended = true;
      }
      state->changed.notify_all();
      return;
    }
    for (ssize_t i = 0; i < n; ++i) {
      if (buffer[i] == '\n') {
        state->command(line.c_str());
        line.clear();
      } else if (line.size() < 64) {
        line += buffer[i];
      }
    }
  }
}

void TrainingControl::State::command(const char* text) {
  std::string word(text);
  while (!word.empty() && (word.back() == '\r' || word.back() == ' ')) word.pop_back();
  {
    std::lock_guard lock(mutex);
    if (word == "pause")
      paused = true;
    else if (word == "resume")
      paused = false;
    else if (word == "stop")
      stop = true;
    else
      return;
  }
  changed.notify_all();
}

void TrainingControl::output_lost() {
  g_signalled = true;
}

bool TrainingControl::stop_requested() const {
  return m_state->stop || g_signalled;
}

bool TrainingControl::proceed(const std::function<void(bool)>& on_pause) {
  auto& state = *m_state;
  std::unique_lock lock(state.mutex);
  if (state.paused && !stop_requested() && !state.input_ended) {
    on_pause(true);
    // Signals cannot notify a condition variable: poll for them while paused.
    while (state.paused && !stop_requested() && !state.input_ended) {
      state.changed.wait_for(lock, std::chrono::milliseconds(200));
    }
    on_pause(false);
  }
  if (state.paused && state.input_ended) state.stop = true;
  return !stop_requested();
}

}  // namespace npe::cli
