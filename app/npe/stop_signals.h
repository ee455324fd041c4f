#pragma once
// Where npe receives the signals that ask a program to stop (SIGINT, SIGTERM, SIGHUP): on one
// thread of their own that never computes, never on a thread that may be inside a product.
//
// Why (issue 79): oneDNN's JIT float32 GEMM, up to oneDNN 3.11.1 (Debian 12 ships 2.6.3), points
// the stack pointer at a heap buffer while it runs a product that sums more terms than fit its
// stack workspace (K > 84 with AVX-512, K > 252 with AVX2). A signal handled on that thread then
// has its frame written below that pointer, over the heap, and glibc aborts later with
// "corrupted size vs. prev_size while consolidating": what ended a bf16 training run on SIGTERM.
// The fused attention kernels run such products (oneDNN's "gemm:jit" for float32 tiles), on the
// main thread and on OpenMP's. So no handler runs anywhere: main() blocks the stop signals before
// any other thread exists (every thread made later inherits the mask), and one thread takes them
// with sigwait(), which writes no signal frame.
//
// tests/app/npe_stop_signals_test.cpp shows the corruption with a handler on the computing thread
// and none with this; NpeTrainJob.StopSignalsReachNoThreadThatComputes checks a running npe train.

namespace npe::cli {

/// Blocks SIGINT, SIGTERM and SIGHUP in the calling thread, and so in every thread it makes from
/// now on, and starts the thread that receives them. Call it first in main(), before anything
/// makes a thread; later calls do nothing. Until a handler is set, a stop signal ends the program
/// as it would without this: it dies of that signal.
void receive_stop_signals_on_their_own_thread();

/// Calls `on_signal(signal)` on the signal thread for every stop signal received from now on;
/// nullptr puts back the default (dying of the signal).
void set_stop_signal_handler(void (*on_signal)(int signal));

/// Ends the program by `signal`'s default action, from any thread (a second Ctrl-C).
[[noreturn]] void die_of_signal(int signal);

}  // namespace npe::cli
