// `npe train` as a resumable, drivable, data-parallel job, run as a real child process: the
// progress-JSON protocol, pause/resume/stop on stdin, SIGKILL at random moments followed by
// --resume, and 2 ranks over loopback against 1 process accumulating 2 micro-batches.

#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <torch/torch.h>
#include <nlohmann/json.hpp>

#include "npe/crash_report.h"
#include "npe/models/auto_precision.h"
#include "npe/models/checkpoint.h"
#include "npe/models/compute_settings.h"

namespace {

namespace fs = std::filesystem;

// A running npe with pipes to its stdin and stdout (stderr goes to a file).
class Child {
 public:
  // file_size_limit > 0: files the child writes cannot grow beyond it (RLIMIT_FSIZE, with
  // SIGXFSZ ignored, so a write past it fails with EFBIG as a full disk fails with ENOSPC).
  Child(const std::vector<std::string>& arguments, const fs::path& stderr_file,
        const std::vector<std::string>& environment = {}, rlim_t file_size_limit = 0) {
    int in[2], out[2];
    EXPECT_EQ(::pipe(in), 0);
    EXPECT_EQ(::pipe(out), 0);
    m_pid = ::fork();
    if (m_pid == 0) {
      ::dup2(in[0], STDIN_FILENO);
      ::dup2(out[1], STDOUT_FILENO);
      const int err = ::open(stderr_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      ::dup2(err, STDERR_FILENO);
      ::close(in[1]);
      ::close(out[0]);
      for (const auto& e : environment) ::putenv(const_cast<char*>(e.c_str()));
      if (file_size_limit > 0) {
        ::signal(SIGXFSZ, SIG_IGN);
        const rlimit limit{file_size_limit, file_size_limit};
        ::setrlimit(RLIMIT_FSIZE, &limit);
      }
      std::vector<char*> argv{const_cast<char*>(NPE_EXECUTABLE)};
      for (const auto& a : arguments) argv.push_back(const_cast<char*>(a.c_str()));
      argv.push_back(nullptr);
      ::execv(NPE_EXECUTABLE, argv.data());
      ::_exit(127);
    }
    ::close(in[0]);
    ::close(out[1]);
    m_stdin = in[1];
    m_stdout = ::fdopen(out[0], "r");
  }
  ~Child() {
    if (m_pid > 0) {
      ::kill(m_pid, SIGKILL);
      wait();
    }
    if (m_stdout) std::fclose(m_stdout);
    if (m_stdin >= 0) ::close(m_stdin);
  }
  // The next line of stdout, or "" at its end.
  std::string line() {
    std::string text;
    char buffer[4096];
    while (std::fgets(buffer, sizeof buffer, m_stdout)) {
      text += buffer;
      if (!text.empty() && text.back() == '\n') break;
    }
    return text;
  }
  // The next JSON event whose "event" is `name` (null at the end of output).
  nlohmann::json next(const std::string& name) {
    for (auto text = line(); !text.empty(); text = line()) {
      auto event = nlohmann::json::parse(text);
      if (event.value("event", "") == name) return event;
    }
    return nullptr;
  }
  void send(const std::string& command) {
    const auto text = command + "\n";
    EXPECT_EQ(::write(m_stdin, text.data(), text.size()), ssize_t(text.size()));
  }
  void kill(int signal) { ::kill(m_pid, signal); }
  pid_t pid() const { return m_pid; }
  // Closes its standard input, as sshd does when the connection drops.
  void close_input() {
    ::close(m_stdin);
    m_stdin = -1;
  }
  // Closes our end of its stdout, as a dropped ssh connection does: its next line fails.
  void close_output() {
    std::fclose(m_stdout);
    m_stdout = nullptr;
  }
  // Exit status as wait() gives it, or 1000 when it has not ended within `seconds` (then it is
  // killed).
  int wait_at_most(int seconds) {
    for (int i = 0; i < seconds * 10; ++i) {
      int status = 0;
      if (::waitpid(m_pid, &status, WNOHANG) == m_pid) {
        m_pid = -1;
        return WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return 1000;
  }
  // Exit status, or -signal when killed.
  int wait() {
    int status = 0;
    ::waitpid(m_pid, &status, 0);
    m_pid = -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
  }

 private:
  pid_t m_pid = -1;
  int m_stdin = -1;
  FILE* m_stdout = nullptr;
};

// Runs npe to completion; returns the exit status.
int run(const std::vector<std::string>& arguments, const fs::path& log,
        const std::vector<std::string>& environment = {}, rlim_t file_size_limit = 0) {
  Child child(arguments, log, environment, file_size_limit);
  while (!child.line().empty()) {
  }
  return child.wait();
}

std::string slurp(const fs::path& file) {
  std::ifstream in(file);
  return {std::istreambuf_iterator<char>(in), {}};
}

std::vector<std::string> join(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

double max_weight_difference(const fs::path& a, const fs::path& b) {
  auto x = npe::load_checkpoint(a);
  auto y = npe::load_checkpoint(b);
  auto py = y.model->named_parameters(true);
  double worst = 0.0;
  for (const auto& item : x.model->named_parameters(true)) {
    worst = std::max(worst, (item.value() - py[item.key()]).abs().max().item<double>());
  }
  return worst;
}

int free_tcp_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address);
  socklen_t size = sizeof address;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &size);
  ::close(fd);
  return ntohs(address.sin_port);
}

class NpeTrainJob : public ::testing::Test {
 protected:
  void SetUp() override {
    dir = fs::temp_directory_path() /
          ("npe-train-job-" + std::to_string(::getpid()) + "-" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir);
  }
  void TearDown() override { fs::remove_all(dir); }
  fs::path dir;
  const std::vector<std::string> quick = {
      "train",        "--model", "tnp",         "--threads", "1",           "--seed", "5",
      "--batch-size", "4",       "--val-tasks", "32",        "--val-every", "10"};
};

TEST_F(NpeTrainJob, ProgressJsonIsOneWellFormedObjectPerLine) {
  const auto out = (dir / "m.pt").string();
  Child child(
      join(quick, {"--steps", "20", "--checkpoint-every", "10", "--out", out, "--progress-json"}),
      dir / "err.log");
  std::vector<nlohmann::json> events;
  for (auto text = child.line(); !text.empty(); text = child.line()) {
    ASSERT_EQ(text.back(), '\n');
    ASSERT_NO_THROW(events.push_back(nlohmann::json::parse(text))) << text;
    ASSERT_TRUE(events.back().is_object());
  }
  EXPECT_EQ(child.wait(), 0);
  ASSERT_GE(events.size(), 4u);
  EXPECT_EQ(events.front()["event"], "start");
  EXPECT_EQ(events.front()["total_steps"], 20);
  // auto resolved: the precision the run trains in, as its sessions record it.
  EXPECT_TRUE(events.front()["precision"] == "fp32" || events.front()["precision"] == "bf16")
      << events.front().dump();
  EXPECT_EQ(events.front()["precision"],
            npe::read_checkpoint_metadata(out).sessions.front().precision);
  EXPECT_EQ(events.back()["event"], "finished");
  EXPECT_EQ(events.back()["stopped"], false);
  int progress = 0, validations = 0, checkpoints = 0;
  for (const auto& e : events) {
    if (e["event"] == "progress") {
      ++progress;
      for (const char* key : {"step", "total_steps", "loss", "smoothed_loss", "steps_per_s",
                              "eta_s", "wall_time_s", "device"}) {
        EXPECT_TRUE(e.contains(key)) << key << " missing from " << e.dump();
      }
      EXPECT_TRUE(e["loss"].is_number());
    } else if (e["event"] == "validation") {
      ++validations;
      EXPECT_TRUE(e["val_ll"].is_number());
      EXPECT_TRUE(e["val_ll_stderr"].is_number());
      EXPECT_TRUE(e["shifted_ll"].is_number());
      EXPECT_TRUE(e["equivariance_error"].is_number());
    } else if (e["event"] == "checkpoint") {
      ++checkpoints;
      EXPECT_EQ(e["path"], out);
    }
  }
  EXPECT_GE(progress, 2);
  EXPECT_EQ(validations, 2);  // steps 10 and 20
  EXPECT_EQ(checkpoints, 2);
}

TEST_F(NpeTrainJob, PauseResumeAndStopOnStandardInput) {
  const auto out = dir / "m.pt";
  Child child(join(quick, {"--steps", "100000", "--checkpoint-every", "0", "--out", out.string(),
                           "--progress-json"}),
              dir / "err.log");
  ASSERT_FALSE(child.next("progress").is_null());
  child.send("pause");
  const auto paused = child.next("paused");
  ASSERT_FALSE(paused.is_null());
  child.send("resume");
  const auto resumed = child.next("resumed");
  ASSERT_FALSE(resumed.is_null());
  EXPECT_EQ(resumed["step"], paused["step"]);
  child.send("stop");
  const auto finished = child.next("finished");
  ASSERT_FALSE(finished.is_null());
  EXPECT_EQ(finished["stopped"], true);
  EXPECT_EQ(child.wait(), 0);
  // Stopping keeps the work: a checkpoint at the step reached, which --resume continues.
  const auto meta = npe::read_checkpoint_metadata(out);
  EXPECT_EQ(meta.steps, finished["step"].get<int64_t>());
  EXPECT_EQ(meta.planned_steps, 100000);
  EXPECT_EQ(run({"train", "--resume", out.string(), "--steps", std::to_string(meta.steps + 3),
                 "--threads", "1"},
                dir / "resume.log"),
            0);
  EXPECT_EQ(npe::read_checkpoint_metadata(out).steps, meta.steps + 3);
}

TEST_F(NpeTrainJob, TerminateSignalStopsAfterAFinalCheckpoint) {
  const auto out = dir / "m.pt";
  Child child(join(quick, {"--steps", "100000", "--checkpoint-every", "0", "--out", out.string(),
                           "--progress-json"}),
              dir / "err.log");
  ASSERT_FALSE(child.next("progress").is_null());
  child.kill(SIGTERM);
  const auto finished = child.next("finished");
  ASSERT_FALSE(finished.is_null());
  EXPECT_EQ(finished["stopped"], true);
  EXPECT_EQ(child.wait(), 0);
  EXPECT_EQ(npe::read_checkpoint_metadata(out).steps, finished["step"].get<int64_t>());
}

// Issue 79: oneDNN's float32 GEMM (Debian's 2.6) runs products of more than 84 summed terms on a
// heap buffer as its stack, and a signal handled on that thread writes its frame over the heap
// (tests/app/npe_stop_signals_test.cpp shows it). So no stop signal may be handled on a thread
// that computes: npe has no handler for SIGINT, SIGTERM or SIGHUP, every one of its threads
// blocks them, and its signal thread takes them with sigwait() (app/npe/stop_signals.h). On two
// threads, so that OpenMP's workers exist and are checked too; SIGTERM still stops the run.
TEST_F(NpeTrainJob, StopSignalsReachNoThreadThatComputes) {
  const auto out = dir / "m.pt";
  auto quick_on_two = quick;
  quick_on_two[4] = "2";  // --threads
  Child child(join(quick_on_two, {"--steps", "100000", "--checkpoint-every", "0", "--out",
                                  out.string(), "--progress-json"}),
              dir / "err.log");
  ASSERT_FALSE(child.next("progress").is_null());
  const auto status_field = [](const fs::path& status, const std::string& name) {
    std::ifstream in(status);
    for (std::string line; std::getline(in, line);) {
      if (line.rfind(name + ":", 0) == 0)
        return std::stoull(line.substr(name.size() + 1), nullptr, 16);
    }
    return ~0ull;
  };
  const auto bit = [](int signal) { return 1ull << (signal - 1); };
  const auto stop_bits = bit(SIGINT) | bit(SIGTERM) | bit(SIGHUP);
  const fs::path proc = "/proc/" + std::to_string(child.pid());
  EXPECT_EQ(status_field(proc / "status", "SigCgt") & stop_bits, 0u)
      << "a stop signal has a handler";
  // Every thread blocks them but the signal thread, in sigwait(): the kernel lifts the mask of
  // the signals waited for while it waits, and takes them there without a handler's frame.
  int threads = 0, unblocked = 0;
  for (const auto& task : fs::directory_iterator(proc / "task")) {
    ++threads;
    if ((status_field(task.path() / "status", "SigBlk") & stop_bits) == stop_bits) continue;
    ++unblocked;
    std::ifstream wchan_file(task.path() / "wchan");
    std::string wchan;
    std::getline(wchan_file, wchan);
    // Where the kernel names the function a thread waits in (kallsyms readable).
    if (wchan.find('_') != std::string::npos) {
      EXPECT_NE(wchan.find("sigtimedwait"), std::string::npos)
          << "thread " << task.path().filename() << " (in " << wchan << ") can take a stop signal";
    }
  }
  EXPECT_EQ(unblocked, 1);
  // The main thread, the signal thread and at least one OpenMP worker.
  EXPECT_GE(threads, 3);
  child.kill(SIGTERM);
  const auto finished = child.next("finished");
  ASSERT_FALSE(finished.is_null());
  EXPECT_EQ(finished["stopped"], true);
  EXPECT_EQ(child.wait(), 0);
}

// A fatal signal ends `npe train` with a report in its error output: the program, the signal,
// what the run was doing and its stack, so that a crash of a long unattended run (glibc's heap
// checks abort with SIGABRT) says where it happened. The run still dies of the signal, as the
// shell and the training tab expect. The signals come from outside here, as a stray write or an
// abort would raise them inside.
TEST_F(NpeTrainJob, AFatalSignalIsReportedWithWhatTheRunWasDoing) {
  if (npe::sanitizer_reports_crashes()) GTEST_SKIP() << "the sanitizers report crashes themselves";
  for (const int signal : {SIGSEGV, SIGABRT}) {
    SCOPED_TRACE("signal " + std::to_string(signal));
    const auto log = dir / ("crash-" + std::to_string(signal) + ".log");
    Child child(join(quick, {"--steps", "100000", "--checkpoint-every", "0", "--out",
                             (dir / "crash.pt").string(), "--progress-json"}),
                log);
    ASSERT_FALSE(child.next("progress").is_null());
    child.kill(signal);
    EXPECT_EQ(child.wait(), -signal);
    const auto report = slurp(log);
    EXPECT_NE(
        report.find(std::string("npe died of ") + (signal == SIGSEGV ? "SIGSEGV" : "SIGABRT")),
        std::string::npos)
        << report;
    // The phase: a step, a validation or a progress line (the run had begun).
    EXPECT_NE(report.find(" while "), std::string::npos) << report;
    // The stack, one frame per line with its binary: at least the handler and the C library.
    const auto stack = report.find("its stack:\n");
    ASSERT_NE(stack, std::string::npos) << report;
    EXPECT_GE(std::count(report.begin() + stack, report.end(), '\n'), 3) << report;
    EXPECT_NE(report.find("libc.so", stack), std::string::npos) << report;
  }
}

// The output folder deleted under a running `npe train` (a cleanup script, a user tidying up):
// the next checkpoint puts it back, and a stop still leaves a whole, resumable checkpoint there.
TEST_F(NpeTrainJob, ADeletedOutputFolderIsMadeAgainAtTheNextCheckpoint) {
  const auto folder = dir / "runs";
  const auto out = folder / "d.pt";
  Child child(join(quick, {"--steps", "100000", "--checkpoint-every", "5", "--out", out.string(),
                           "--progress-json"}),
              dir / "deleted.log");
  const auto first = child.next("checkpoint");
  ASSERT_FALSE(first.is_null());
  fs::remove_all(folder);
  ASSERT_FALSE(fs::exists(folder));
  const auto next = child.next("checkpoint");
  ASSERT_FALSE(next.is_null()) << slurp(dir / "deleted.log");
  EXPECT_GT(next["step"].get<int64_t>(), first["step"].get<int64_t>());
  child.kill(SIGTERM);
  const auto finished = child.next("finished");
  ASSERT_FALSE(finished.is_null()) << slurp(dir / "deleted.log");
  EXPECT_EQ(child.wait(), 0);
  EXPECT_EQ(npe::read_checkpoint_metadata(out).steps, finished["step"].get<int64_t>());
}

// A closed terminal or ssh session (SIGHUP) and a reader that went away (its next event line
// fails: a dropped connection) both end the run as a stop does, with a final checkpoint,
// instead of killing it wherever it is (SIGHUP's and SIGPIPE's default).
TEST_F(NpeTrainJob, HangUpStopsAfterAFinalCheckpoint) {
  const auto out = dir / "m.pt";
  Child child(join(quick, {"--steps", "100000", "--checkpoint-every", "0", "--out", out.string(),
                           "--progress-json"}),
              dir / "err.log");
  ASSERT_FALSE(child.next("progress").is_null());
  child.kill(SIGHUP);
  const auto finished = child.next("finished");
  ASSERT_FALSE(finished.is_null());
  EXPECT_EQ(finished["stopped"], true);
  EXPECT_EQ(child.wait(), 0);
  EXPECT_EQ(npe::read_checkpoint_metadata(out).steps, finished["step"].get<int64_t>());
}

TEST_F(NpeTrainJob, LostOutputStopsAfterAFinalCheckpoint) {
  const auto out = dir / "m.pt";
  Child child(join(quick, {"--steps", "100000", "--checkpoint-every", "0", "--out", out.string(),
                           "--progress-json"}),
              dir / "err.log");
  const auto progress = child.next("progress");
  ASSERT_FALSE(progress.is_null());
  child.close_output();
  ASSERT_EQ(child.wait_at_most(120), 0) << "npe train went on (or died) after its output closed";
  const auto meta = npe::read_checkpoint_metadata(out);
  EXPECT_GE(meta.steps, progress["step"].get<int64_t>());
  EXPECT_LT(meta.steps, 100000);
}

// A paused run whose input ends (the ssh connection dropped while the tab had it paused) can
// never be resumed: it stops after a final checkpoint instead of holding its output for ever.
// A running one goes on (a user's `npe train --progress-json < /dev/null`).
TEST_F(NpeTrainJob, InputEndingWhilePausedStopsAfterAFinalCheckpoint) {
  const auto out = dir / "m.pt";
  Child child(join(quick, {"--steps", "100000", "--checkpoint-every", "0", "--out", out.string(),
                           "--progress-json"}),
              dir / "err.log");
  ASSERT_FALSE(child.next("progress").is_null());
  child.send("pause");
  const auto paused = child.next("paused");
  ASSERT_FALSE(paused.is_null());
  child.close_input();
  const auto finished = child.next("finished");
  ASSERT_FALSE(finished.is_null());
  EXPECT_EQ(finished["stopped"], true);
  EXPECT_EQ(finished["step"], paused["step"]);
  ASSERT_EQ(child.wait_at_most(120), 0);
  EXPECT_EQ(npe::read_checkpoint_metadata(out).steps, paused["step"].get<int64_t>());

  Child running(join(quick, {"--steps", "30", "--checkpoint-every", "0", "--out",
                             (dir / "r.pt").string(), "--progress-json"}),
                dir / "err2.log");
  running.close_input();
  const auto done = running.next("finished");
  ASSERT_FALSE(done.is_null());
  EXPECT_EQ(done["stopped"], false);
  EXPECT_EQ(done["step"], 30);
  EXPECT_EQ(running.wait(), 0);
}

// Without --progress-json (a run under nohup): SIGTERM still ends with a final checkpoint, and
// the PATH.json copy is rewritten with every checkpoint, so a run that dies between checkpoints
// leaves a matching pair on disk.
// A checkpoint read while another run rewrites it (a tab reloading the job it shows) is always a
// whole one: the old or the new, never half of each.
TEST_F(NpeTrainJob, ACheckpointReadWhileARunRewritesItIsAlwaysWhole) {
  const auto out = dir / "m.pt";
  Child child(join(quick, {"--steps", "100000", "--checkpoint-every", "1", "--out", out.string(),
                           "--progress-json"}),
              dir / "err.log");
  int newer = 0;
  for (int load = 0; load < 40; ++load) {
    const auto event = child.next("checkpoint");
    ASSERT_FALSE(event.is_null()) << "npe train ended";
    // The run writes its next checkpoint while this one is read.
    npe::LoadedCheckpoint loaded;
    ASSERT_NO_THROW(loaded = npe::load_checkpoint(out)) << "load " << load;
    const auto step = event["step"].get<int64_t>();
    ASSERT_GE(loaded.metadata.steps, step);
    newer += loaded.metadata.steps > step;
    ASSERT_NO_THROW(npe::read_checkpoint_metadata(out));
  }
  child.send("stop");
  EXPECT_FALSE(child.next("finished").is_null());
  EXPECT_EQ(child.wait_at_most(120), 0);
  RecordProperty("loads_of_a_newer_checkpoint", newer);
}

TEST_F(NpeTrainJob, TerminateSignalWithoutProgressJsonAndMetadataCopiesMatchEveryCheckpoint) {
  const auto out = dir / "m.pt";
  const auto copy = dir / "m.pt.json";
  Child child(join(quick, {"--steps", "100000", "--checkpoint-every", "5", "--out", out.string()}),
              dir / "err.log");
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  int64_t copied_steps = 0;
  while (std::chrono::steady_clock::now() < deadline) {
    if (fs::exists(copy)) {
      std::ifstream file(copy);
      copied_steps = nlohmann::json::parse(file).value("steps", int64_t{0});
      if (copied_steps >= 10) break;  // a periodic checkpoint after the first one
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_GE(copied_steps, 10) << "no metadata copy written with the periodic checkpoints";
  EXPECT_EQ(copied_steps % 5, 0);
  child.kill(SIGTERM);
  EXPECT_EQ(child.wait(), 0);
  const auto meta = npe::read_checkpoint_metadata(out);
  EXPECT_GE(meta.steps, copied_steps);
  std::ifstream file(copy);
  const auto final_copy = nlohmann::json::parse(file);
  EXPECT_EQ(final_copy["steps"].get<int64_t>(), meta.steps);
  EXPECT_EQ(final_copy["sessions"].size(), meta.sessions.size());
}

TEST_F(NpeTrainJob, KilledAtRandomMomentsThenResumedGivesTheUninterruptedWeights) {
  const std::vector<std::string> job = {"--steps", "200", "--checkpoint-every", "10"};
  const auto reference = dir / "reference.pt";
  ASSERT_EQ(run(join(join(quick, job), {"--out", reference.string()}), dir / "ref.log"), 0);

  const auto out = dir / "killed.pt";
  std::random_device device;
  const auto seed = device();
  std::mt19937 random(seed);
  std::uniform_int_distribution<int> delay_ms(50, 1500);
  SCOPED_TRACE("kill-time seed " + std::to_string(seed));
  int64_t last_step = 0;
  for (int kill = 0; kill < 5; ++kill) {
    const auto arguments =
        fs::exists(out)
            ? std::vector<std::string>{"train", "--resume", out.string(), "--threads", "1"}
            : join(join(quick, job), {"--out", out.string()});
    Child child(arguments, dir / "killed.log");
    std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms(random)));
    child.kill(SIGKILL);
    child.wait();
    if (!fs::exists(out)) continue;  // killed before its first checkpoint
    // Whatever the moment, the file on disk is a complete checkpoint at a checkpoint step.
    npe::CheckpointMetadata meta;
    ASSERT_NO_THROW(meta = npe::load_checkpoint(out).metadata) << "after kill " << kill;
    EXPECT_TRUE(meta.steps % 10 == 0) << meta.steps;
    EXPECT_GE(meta.steps, last_step);
    last_step = meta.steps;
  }
  const auto arguments = fs::exists(out) ? std::vector<std::string>{"train", "--resume",
                                                                    out.string(), "--threads", "1"}
                                         : join(join(quick, job), {"--out", out.string()});
  ASSERT_EQ(run(arguments, dir / "final.log"), 0);
  EXPECT_EQ(npe::read_checkpoint_metadata(out).steps, 200);
  EXPECT_EQ(max_weight_difference(reference, out), 0.0);
}

// A disk that fills up while a checkpoint is written: libtorch's archive writer used to throw
// from a destructor there ("unexpected pos", an abort with status 134) and leave its temporary.
// Now the run ends with an error naming the file and the reason, the last complete checkpoint
// (and its metadata copy) stays as it was and resumes, and no temporary is left.
TEST_F(NpeTrainJob, AFullDiskDuringACheckpointIsAnErrorAndTheLastCheckpointSurvives) {
  const auto out = dir / "t.pt";
  ASSERT_EQ(run(join(quick, {"--steps", "10", "--out", out.string()}), dir / "first.log"), 0);
  const auto size = fs::file_size(out);
  const auto metadata_copy = fs::path(out.string() + ".json");
  ASSERT_TRUE(fs::exists(metadata_copy));
  std::ifstream copy_before(metadata_copy);
  const std::string json_before{std::istreambuf_iterator<char>(copy_before), {}};
  const auto log = dir / "full.log";
  const int status = run({"train", "--resume", out.string(), "--steps", "20", "--threads", "1"},
                         log, {}, size / 2);
  EXPECT_EQ(status, 1);
  std::ifstream in(log);
  const std::string message{std::istreambuf_iterator<char>(in), {}};
  EXPECT_NE(message.find("cannot write checkpoint '" + out.string() + "'"), std::string::npos)
      << message;
  EXPECT_NE(message.find("File too large"), std::string::npos) << message;
  EXPECT_EQ(message.find("terminate called"), std::string::npos) << message;
  EXPECT_EQ(npe::read_checkpoint_metadata(out).steps, 10);
  std::ifstream copy_after(metadata_copy);
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(copy_after), {}), json_before);
  for (const auto& item : fs::directory_iterator(dir)) {
    EXPECT_EQ(item.path().filename().string().find(".tmp-"), std::string::npos) << item.path();
  }
  // Space again: the run continues from the checkpoint that survived.
  ASSERT_EQ(run({"train", "--resume", out.string(), "--steps", "20", "--threads", "1"},
                dir / "again.log"),
            0);
  EXPECT_EQ(npe::read_checkpoint_metadata(out).steps, 20);
}

TEST_F(NpeTrainJob, TwoRanksOverLoopbackEqualOneProcessWithTwiceTheBatch) {
  const std::vector<std::string> job = {"--steps", "15", "--checkpoint-every", "0"};
  const auto single = dir / "single.pt";
  // One process, two micro-batches of 4 (tasks of one batch share N_c, so "batch 8" is drawn as
  // the two batches the two ranks draw).
  ASSERT_EQ(run(join(join(quick, job), {"--accumulate", "2", "--out", single.string()}),
                dir / "single.log"),
            0);
  const auto parallel = dir / "parallel.pt";
  const auto port = std::to_string(free_tcp_port());
  std::vector<std::unique_ptr<Child>> ranks;
  for (int rank = 0; rank < 2; ++rank) {
    ranks.push_back(std::make_unique<Child>(
        join(join(quick, job), {"--out", parallel.string()}),
        dir / ("rank" + std::to_string(rank) + ".log"),
        std::vector<std::string>{"WORLD_SIZE=2", "RANK=" + std::to_string(rank),
                                 "LOCAL_RANK=" + std::to_string(rank), "MASTER_ADDR=127.0.0.1",
                                 "MASTER_PORT=" + port}));
  }
  for (auto& rank : ranks) {
    while (!rank->line().empty()) {
    }
    EXPECT_EQ(rank->wait(), 0);
  }
  const auto meta = npe::read_checkpoint_metadata(parallel);
  EXPECT_NE(meta.device.find("x 2 processes (gloo)"), std::string::npos) << meta.device;
  // Measured (OPENBLAS_CORETYPE unset and Sandybridge, 1 and 2 threads): the two runs agree
  // bitwise, and one micro-batch alone differs by 0.0097.
  const double difference = max_weight_difference(single, parallel);
  EXPECT_LT(difference, 1e-5);
  // And the ranks did not simply train alone: one process with one micro-batch differs.
  const auto alone = dir / "alone.pt";
  ASSERT_EQ(run(join(join(quick, job), {"--out", alone.string()}), dir / "alone.log"), 0);
  const double alone_difference = max_weight_difference(alone, parallel);
  std::printf(
      "[learning] NpeTrainJob.TwoRanksOverLoopbackEqualOneProcessWithTwiceTheBatch "
      "weight difference, accumulated and alone: before %.9g after %.9g\n",
      difference, alone_difference);
  EXPECT_GT(alone_difference, 1e-4);
}

// A resumption without --precision continues in the run's own precision, whatever `auto`
// would pick on this machine; one run in each precision, so the test can fail on any CPU.
TEST_F(NpeTrainJob, ResumeKeepsTheRunsPrecisionUnlessToldOtherwise) {
  const std::vector<std::string> te = {
      "train", "--model",     "tetnp", "--threads", "1", "--val-tasks", "8", "--batch-size",
      "2",     "--val-every", "0",     "--steps",   "2"};
  // Some CPUs of this kind (an AVX2-only EPYC) cannot run the bf16 products at all: there
  // npe train refuses bf16 with the reason, and only the fp32 half can be checked.
  const bool bf16_here = npe::bf16_unavailable_reason().empty();
  for (const std::string precision : {"fp32", "bf16"}) {
    const auto out = dir / (precision + ".pt");
    if (precision == "bf16" && !bf16_here) {
      const auto log = dir / "bf16.log";
      EXPECT_EQ(run(join(te, {"--precision", precision, "--out", out.string()}), log), 1);
      std::ifstream in(log);
      const std::string message{std::istreambuf_iterator<char>(in), {}};
      EXPECT_NE(message.find("cannot run the bfloat16 products"), std::string::npos) << message;
      EXPECT_FALSE(fs::exists(out));
      continue;
    }
    ASSERT_EQ(run(join(te, {"--precision", precision, "--out", out.string()}),
                  dir / (precision + ".log")),
              0);
    ASSERT_EQ(run({"train", "--resume", out.string(), "--steps", "3", "--threads", "1"},
                  dir / (precision + "-resumed.log")),
              0);
    auto sessions = npe::read_checkpoint_metadata(out).sessions;
    ASSERT_EQ(sessions.size(), 2u);
    EXPECT_EQ(sessions[0].precision, precision);
    EXPECT_EQ(sessions[1].precision, precision) << "resumed in another precision";
  }
  // --precision given with --resume overrides the run's.
  if (!bf16_here) return;
  const auto out = dir / "fp32.pt";
  ASSERT_EQ(run({"train", "--resume", out.string(), "--steps", "4", "--threads", "1", "--precision",
                 "bf16"},
                dir / "override.log"),
            0);
  EXPECT_EQ(npe::read_checkpoint_metadata(out).sessions.back().precision, "bf16");
}

// Issue 79: the products of the fused kernels (oneDNN's JIT code, which the sanitizers cannot
// see) run on guarded copies of their operands (NPE_TILE_MATMUL_GUARD, tile_matmul.cpp): a
// write beside an output, or into a hole of a strided one, ends the run with the product's
// layout named. Two threads, as the parallel tiles run; bf16 where this CPU has its products.
TEST_F(NpeTrainJob, TheFusedKernelsProductsWriteOnlyTheirOutputs) {
  const std::string precision = npe::bf16_unavailable_reason().empty() ? "bf16" : "fp32";
  for (const std::string kind : {"tetnpnd", "tetnp", "tepttnp", "bsatnp"}) {
    const auto log = dir / (kind + ".log");
    // Two steps of two tasks and one small validation: every kind of product, kept short for
    // the sanitizer builds (152 s there with three steps of four tasks).
    EXPECT_EQ(run({"train", "--model", kind, "--size", "small", "--steps", "2", "--batch-size", "2",
                   "--val-tasks", "4", "--val-every", "2", "--threads", "2", "--precision",
                   precision, "--out", (dir / (kind + ".pt")).string()},
                  log, {"NPE_TILE_MATMUL_GUARD=1"}),
              0)
        << kind << ": " << slurp(log);
  }
}

// A recipe file (what the Training tab hands npe train) trains exactly what the options that
// describe it train.
TEST_F(NpeTrainJob, ARecipeFileTrainsWhatTheOptionsDescribe) {
  const auto by_options = (dir / "options.pt").string(), by_recipe = (dir / "recipe.pt").string();
  ASSERT_EQ(run(join(quick, {"--steps", "6", "--model-option", "num_layers=2", "--lr", "0.002",
                             "--out", by_options}),
                dir / "a.log"),
            0)
      << slurp(dir / "a.log");
  const nlohmann::json recipe = {{"model", "tnp"},
                                 {"model_options", {{"num_layers", 2}}},
                                 {"training",
                                  {{"steps", 6},
                                   {"seed", 5},
                                   {"batch_size", 4},
                                   {"learning_rate", 0.002},
                                   {"validation_tasks", 32},
                                   {"validation_every", 10}}}};
  std::ofstream(dir / "recipe.json") << recipe.dump(2);
  ASSERT_EQ(
      run({"train", "--spec", (dir / "recipe.json").string(), "--threads", "1", "--out", by_recipe},
          dir / "b.log"),
      0)
      << slurp(dir / "b.log");
  EXPECT_EQ(max_weight_difference(by_options, by_recipe), 0.0);
  const auto meta = npe::read_checkpoint_metadata(by_recipe);
  EXPECT_EQ(meta.size, "custom");
  EXPECT_EQ(meta.seed, 5u);

  // A misspelt setting is named, not ignored; a recipe and the options it replaces are refused.
  std::ofstream(dir / "typo.json") << R"({"model": "tnp", "training": {"stpes": 6}})";
  EXPECT_EQ(
      run({"train", "--spec", (dir / "typo.json").string(), "--out", by_recipe}, dir / "c.log"), 2);
  EXPECT_NE(slurp(dir / "c.log").find("'stpes'"), std::string::npos) << slurp(dir / "c.log");
  EXPECT_EQ(
      run({"train", "--spec", (dir / "recipe.json").string(), "--lr", "0.1", "--out", by_recipe},
          dir / "d.log"),
      2);
  // A setting above its maximum is refused as misuse too, naming the file; `--spec -` under
  // torchrun (every process would read the one standard input) before joining the group.
  std::ofstream(dir / "huge.json") << R"({"model": "tnp", "training": {"steps": 2000000000}})";
  EXPECT_EQ(
      run({"train", "--spec", (dir / "huge.json").string(), "--out", by_recipe}, dir / "e.log"), 2);
  EXPECT_NE(slurp(dir / "e.log").find("huge.json"), std::string::npos) << slurp(dir / "e.log");
  EXPECT_EQ(run({"train", "--spec", "-", "--out", by_recipe}, dir / "f.log",
                {"WORLD_SIZE=2", "RANK=0", "LOCAL_RANK=0", "MASTER_ADDR=127.0.0.1",
                 "MASTER_PORT=" + std::to_string(free_tcp_port())}),
            2);
  EXPECT_NE(slurp(dir / "f.log").find("torchrun"), std::string::npos) << slurp(dir / "f.log");
  EXPECT_EQ(npe::read_checkpoint_metadata(by_recipe).steps, 6);  // untouched by the refusals
}

// `--spec -` takes one line of standard input; the commands that follow it still arrive.
TEST_F(NpeTrainJob, ARecipeOnStandardInputLeavesTheCommandsAfterIt) {
  const auto out = (dir / "m.pt").string();
  Child child({"train", "--spec", "-", "--threads", "1", "--checkpoint-every", "0", "--out", out,
               "--progress-json"},
              dir / "err.log");
  const nlohmann::json recipe = {
      {"model", "tnp"},
      {"training", {{"steps", 1000000}, {"batch_size", 4}, {"validation_tasks", 16}}}};
  child.send(recipe.dump() + "\npause");  // in one write, as a pipe may deliver them
  ASSERT_FALSE(child.next("paused").is_null()) << slurp(dir / "err.log");
  child.send("stop");
  const auto finished = child.next("finished");
  ASSERT_FALSE(finished.is_null()) << slurp(dir / "err.log");
  EXPECT_TRUE(finished.value("stopped", false));
  EXPECT_EQ(child.wait(), 0);
  const auto meta = npe::read_checkpoint_metadata(out);
  EXPECT_NE(meta.command.find("--spec - "), std::string::npos) << meta.command;
  EXPECT_NE(meta.command.find("<<< '{"), std::string::npos) << meta.command;
}

TEST_F(NpeTrainJob, ResumeRefusesOptionsTheCheckpointFixes) {
  EXPECT_EQ(run({"train", "--resume", (dir / "x.pt").string(), "--model", "tnp"}, dir / "e.log"),
            2);
  EXPECT_EQ(run({"train", "--resume", (dir / "missing.pt").string()}, dir / "e.log"), 1);
  EXPECT_EQ(run({"train", "--steps", "5"}, dir / "e.log"), 2);
}

}  // namespace
