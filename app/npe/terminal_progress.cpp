#include "terminal_progress.h"

#include <unistd.h>

#include <cmath>
#include <cstdio>

namespace npe::cli {

std::string format_duration(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "?";
  const auto total = static_cast<int64_t>(std::llround(seconds));
  char buffer[32];
  if (total >= 3600) {
    std::snprintf(buffer, sizeof buffer, "%lldh%02lldm", (long long)(total / 3600),
                  (long long)(total % 3600 / 60));
  } else if (total >= 60) {
    std::snprintf(buffer, sizeof buffer, "%lldm%02llds", (long long)(total / 60),
                  (long long)(total % 60));
  } else {
    std::snprintf(buffer, sizeof buffer, "%llds", (long long)total);
  }
  return buffer;
}

TerminalProgress::TerminalProgress(std::string label, int64_t total, int64_t already_done,
                                   std::FILE* out, std::chrono::seconds quiet_limit)
    : m_label(std::move(label)),
      m_total(std::max<int64_t>(total, 1)),
      m_already_done(already_done),
      m_out(out),
      m_quiet_limit(quiet_limit),
      m_interactive(isatty(fileno(out)) != 0) {}

void TerminalProgress::update(int64_t done, const std::string& details) {
  const auto now = std::chrono::steady_clock::now();
  const double elapsed = std::chrono::duration<double>(now - m_start).count();
  const double rate = elapsed > 0 ? double(done - m_already_done) / elapsed : 0.0;
  const double eta = rate > 0 ? (m_total - done) / rate : NAN;
  const double fraction = std::min(1.0, double(done) / double(m_total));
  char stats[160];
  std::snprintf(stats, sizeof stats, "%lld/%lld  %.2f/s  elapsed %s  ETA %s", (long long)done,
                (long long)m_total, rate, format_duration(elapsed).c_str(),
                format_duration(eta).c_str());
  if (m_interactive) {
    // Redraw at most 10 times a second: terminals are slow.
    if (done < m_total && now - m_last_draw < std::chrono::milliseconds(100)) return;
    m_last_draw = now;
    constexpr int kWidth = 24;
    const int filled = static_cast<int>(fraction * kWidth);
    std::string bar(filled, '#');
    bar.resize(kWidth, '.');
    std::fprintf(m_out, "\r\033[K%s [%s] %s  %s", m_label.c_str(), bar.c_str(), stats,
                 details.c_str());
    std::fflush(m_out);
    return;
  }
  const int decile = static_cast<int>(fraction * 10);
  const bool quiet_too_long = m_last_decile >= 0 && now - m_last_draw >= m_quiet_limit;
  if (decile == m_last_decile && !quiet_too_long) return;
  m_last_decile = decile;
  m_last_draw = now;
  std::fprintf(m_out, "%s %3d%%  %s  %s\n", m_label.c_str(), static_cast<int>(fraction * 100),
               stats, details.c_str());
  std::fflush(m_out);
}

void TerminalProgress::finish() {
  if (m_interactive) std::fprintf(m_out, "\n");
}

}  // namespace npe::cli
