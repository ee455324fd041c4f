#pragma once
// Progress bar for long-running commands: redrawn in place on a terminal; otherwise a line every
// 10% of the work, and one at least every few minutes in between (logs stay short, yet a run of
// many hours shows in its log that it is alive and how fast it goes).

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>

namespace npe::cli {

class TerminalProgress {
 public:
  /// `label` prefixes every line; output goes to `out`. Work resumed part-way starts at
  /// `already_done` (rates count only what this run does). Off a terminal, no more than
  /// `quiet_limit` passes between two lines while updates come.
  TerminalProgress(std::string label, int64_t total, int64_t already_done = 0,
                   std::FILE* out = stderr,
                   std::chrono::seconds quiet_limit = std::chrono::minutes(5));
  /// Reports `done` units; `details` is appended (e.g. "loss 0.53").
  void update(int64_t done, const std::string& details = {});
  /// Ends the bar with a newline (on a terminal).
  void finish();

 private:
  std::string m_label;
  int64_t m_total;
  int64_t m_already_done;
  std::FILE* m_out;
  std::chrono::seconds m_quiet_limit;
  bool m_interactive;
  int m_last_decile = -1;
  std::chrono::steady_clock::time_point m_start = std::chrono::steady_clock::now();
  std::chrono::steady_clock::time_point m_last_draw{};  // last redraw, or last line off a terminal
};

/// "1h02m", "3m05s", "12s".
std::string format_duration(double seconds);

}  // namespace npe::cli
