#pragma once
// A program that dies of a fatal signal says where, in its own error output: the signal, what it
// was doing (its phase) and a backtrace. glibc's heap checks end a program with SIGABRT
// ("corrupted size vs. prev_size"), and a run killed that way under nohup, its standard output
// still buffered, otherwise leaves nothing saying whether it died training, writing its
// checkpoint or exiting. The sanitizer builds print their own reports and are left alone.

namespace npe {

/// Installs the report for SIGSEGV, SIGBUS, SIGILL, SIGFPE and SIGABRT: `program` (static text)
/// names the program in the report. The program still dies of the signal (same exit status).
void install_crash_report(const char* program);

/// What the program is doing now, for the report (static text: a string literal), e.g.
/// "writing the final checkpoint" or "exiting". Safe to call often; null clears it.
void set_crash_phase(const char* phase);

/// The current thread's stack (and the caller of a jump to address 0), written to standard error
/// with async-signal-safe calls only; `context` is a signal handler's third argument or null.
void write_crash_backtrace(void* context);

/// Whether this build's sanitizers report crashes themselves (then nothing is installed).
bool sanitizer_reports_crashes();

}  // namespace npe
