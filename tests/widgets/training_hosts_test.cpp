// Training hosts over real OpenSSH on loopback: the test starts its own sshd on 127.0.0.1 with
// a temporary host key, user key and port, and the training queue runs `npe train` through it
// exactly as it would on a GPU machine. Checked: the form's Device list comes from `npe devices
// --json` there; a missing npe, an npe too old for `npe devices` and a refused connection are
// clear messages; a job runs, stops, survives a connection killed mid-run (Disconnected, the
// copies here intact) and resumes on the host; every checkpoint copied back loads, and the
// resumed run's weights equal an uninterrupted run's.

#include <netinet/in.h>
#include <pwd.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>
#include <cmath>

#include <QCheckBox>
#include <QComboBox>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QProcess>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTextStream>
#include <QtTest>

#include "npe/models/checkpoint.h"
#include "training/host_devices.h"
#include "training/training_form.h"
#include "training/training_hosts_dialog.h"
#include "training/training_process.h"
#include "training/training_queue.h"

using npe::widgets::HostDevicesAnswer;
using npe::widgets::HostDevicesProbe;
using npe::widgets::TrainingHost;
using npe::widgets::TrainingQueue;
using State = TrainingQueue::JobState;

namespace {

// One wait's limit. On failure QTRY_*_WITH_TIMEOUT waits it a second time before
// reporting, so 2 × kTimeoutMs stays well below the ctest TIMEOUT (600 s) and a
// failure is printed, not hidden behind ctest's kill.
constexpr int kTimeoutMs = 90000;
const char* const kSshd = "/usr/sbin/sshd";

int free_tcp_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = 0;
  socklen_t size = sizeof address;
  int port = 0;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &size) == 0) {
    port = ntohs(address.sin_port);
  }
  ::close(fd);
  return port;
}

bool accepts_connections(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(static_cast<uint16_t>(port));
  const bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0;
  ::close(fd);
  return ok;
}

bool write_text(const QString& path, const QString& text) {
  QFile file(path);
  if (!file.open(QIODevice::WriteOnly | QIODevice::Truncate)) return false;
  file.write(text.toUtf8());
  return true;
}

// What a failed wait shows: the job's state, steps and log.
QString describe(const TrainingQueue& queue, int index) {
  const auto& job = queue.job(index);
  return QString("state %1, step %2, copied %3, copying %4; log:\n%5")
      .arg(npe::widgets::job_state_text(job.state))
      .arg(job.step)
      .arg(job.copied_step)
      .arg(job.copy != nullptr)
      .arg(job.log.join('\n'));
}

double max_weight_difference(const QString& a, const QString& b) {
  auto x = npe::load_checkpoint(a.toStdString());
  auto y = npe::load_checkpoint(b.toStdString());
  auto py = y.model->named_parameters(true);
  double worst = 0.0;
  for (const auto& item : x.model->named_parameters(true)) {
    worst = std::max(worst, (item.value() - py[item.key()]).abs().max().item<double>());
  }
  return worst;
}

}  // namespace

class TrainingHostsTest : public QObject {
  Q_OBJECT

 private:
  QTemporaryDir m_dir;
  QProcess m_sshd;
  int m_port = 0;
  TrainingHost m_host;

  QString path(const QString& name) const { return m_dir.filePath(name); }

  bool run(const QString& program, const QStringList& arguments) {
    QProcess p;
    p.setProcessChannelMode(QProcess::MergedChannels);
    p.start(program, arguments);
    if (!p.waitForFinished(30000) || p.exitCode() != 0) {
      qWarning("%s failed: %s", qPrintable(program), p.readAll().constData());
      return false;
    }
    return true;
  }

  // A job that runs long enough to be stopped and disconnected on its way.
  npe::widgets::TrainingRequest request(const QString& name, const TrainingHost& host) const {
    npe::widgets::TrainingRequest r;
    r.task = "gp1d";
    r.model = "cnp";
    r.size = "small";
    r.steps = 200;
    r.batch_size = 8;
    r.device = "cpu";
    r.checkpoint_every = 10;
    r.validation_every = 100;
    r.validation_tasks = 16;
    r.host = host;
    r.output_path = path("here/" + name);
    return r;
  }

  HostDevicesAnswer ask(const TrainingHost& host) {
    HostDevicesProbe probe;
    QSignalSpy answered(&probe, &HostDevicesProbe::answered);
    probe.ask(host);
    if (!answered.wait(kTimeoutMs)) return {{}, {}, "no answer"};
    return answered.front().at(1).value<HostDevicesAnswer>();
  }

 private Q_SLOTS:
  void initTestCase() {
    qRegisterMetaType<npe::widgets::TrainingHost>();
    qRegisterMetaType<npe::widgets::HostDevicesAnswer>();
    if (!QFileInfo(kSshd).isExecutable()) {
      QSKIP("no sshd: packaging/install-deps.sh installs openssh-server");
    }
    // sshd wants its privilege-separation folder even when it runs as a user.
    if (!QFileInfo::exists("/run/sshd") && !QDir().mkpath("/run/sshd")) {
      QSKIP("/run/sshd is missing and cannot be made (not root)");
    }
    QVERIFY(m_dir.isValid());
    for (const auto* key : {"host_key", "user_key"}) {
      QVERIFY(run("ssh-keygen", {"-q", "-t", "ed25519", "-N", "", "-f", path(key)}));
    }
    QVERIFY(QFile::copy(path("user_key.pub"), path("authorized_keys")));
    m_port = free_tcp_port();
    QVERIFY(m_port > 0);
    const auto* account = ::getpwuid(::getuid());
    QVERIFY(account);
    const auto user = QString::fromLocal8Bit(account->pw_name);
    QVERIFY(write_text(path("sshd_config"),
                       QString("Port %1\nListenAddress 127.0.0.1\nHostKey %2\n"
                               "AuthorizedKeysFile %3\nPasswordAuthentication no\n"
                               "KbdInteractiveAuthentication no\nUsePAM no\nStrictModes no\n"
                               "PermitRootLogin prohibit-password\nPidFile %4\n"
                               "Subsystem sftp internal-sftp\nLogLevel ERROR\n")
                           .arg(m_port)
                           .arg(path("host_key"), path("authorized_keys"), path("sshd.pid"))));
    QVERIFY(write_text(path("ssh_config"),
                       QString("Host loop\n  HostName 127.0.0.1\n  Port %1\n  User %2\n"
                               "  IdentityFile %3\n  IdentitiesOnly yes\n"
                               "  UserKnownHostsFile %4\n  StrictHostKeyChecking accept-new\n"
                               "  LogLevel ERROR\n")
                           .arg(m_port)
                           .arg(user, path("user_key"), path("known_hosts"))));
    m_sshd.setProcessChannelMode(QProcess::ForwardedErrorChannel);
    // A test killed by its timeout must not leave its sshd listening: it goes with the test.
    m_sshd.setChildProcessModifier([] { ::prctl(PR_SET_PDEATHSIG, SIGTERM); });
    m_sshd.start(kSshd, {"-D", "-e", "-f", path("sshd_config")});
    QVERIFY2(m_sshd.waitForStarted(10000), qPrintable(m_sshd.errorString()));
    QTRY_VERIFY_WITH_TIMEOUT(accepts_connections(m_port), 20000);

    m_host.kind = TrainingHost::Kind::Ssh;
    m_host.name = "loop";
    m_host.destination = "loop";
    // npe with one thread, as the CLI tests run it: two OpenMP threads on a runner whose cores
    // other tests keep busy wait on each other at every parallel region and train this job
    // twenty times slower (164 s instead of 8 s for its 200 steps under three busy loops here).
    // sshd starts the command with a clean environment, where the job trained here inherits
    // this test's: a variable that picks other kernels (CI sets OPENBLAS_CORETYPE=Haswell on
    // some machines) would make the host's weights differ from here's by rounding (1.1e-6 after
    // 200 steps), which is not what the test is about. The host is this machine: give it the
    // same numerical environment.
    QString numerics;
    for (const char* name : {"OPENBLAS_CORETYPE", "OPENBLAS_NUM_THREADS", "OPENBLAS_VERBOSE",
                             "OMP_NUM_THREADS", "OMP_DYNAMIC", "ATEN_CPU_CAPABILITY",
                             "DNNL_MAX_CPU_ISA", "ONEDNN_MAX_CPU_ISA", "GLIBC_TUNABLES"}) {
      numerics += qEnvironmentVariableIsSet(name)
                      ? QString("export %1=%2\n")
                            .arg(name, npe::widgets::shell_quote(qEnvironmentVariable(name)))
                      : QString("unset %1\n").arg(name);
    }
    QVERIFY(write_text(path("npe-one-thread"),
                       "#!/bin/sh\n" + numerics + "exec " +
                           npe::widgets::shell_quote(npe::widgets::npe_executable()) +
                           " \"$@\" --threads 1\n"));
    QFile::setPermissions(path("npe-one-thread"),
                          QFile::permissions(path("npe-one-thread")) | QFile::ExeOwner);
    m_host.npe_path = path("npe-one-thread");
    m_host.remote_folder = path("on host/checkpoints");  // a space: quoted for the host's shell
    m_host.ssh_options = {"-F", path("ssh_config")};
    QVERIFY2(m_host.problem().isEmpty(), qPrintable(m_host.problem()));
  }

  void cleanupTestCase() {
    if (m_sshd.state() != QProcess::NotRunning) {
      m_sshd.terminate();
      if (!m_sshd.waitForFinished(5000)) m_sshd.kill();
    }
  }

  void theDeviceListComesFromNpeOnTheHost() {
    const auto answer = ask(m_host);
    QVERIFY2(answer.ok(), qPrintable(answer.problem));
    QVERIFY(!answer.devices.isEmpty());
    QCOMPARE(answer.devices.front().name, QString("cpu"));
    QVERIFY(!answer.libtorch.isEmpty());

    npe::widgets::TrainingForm form;
    QSignalSpy answered(&form, &npe::widgets::TrainingForm::hostDevicesAnswered);
    form.setHosts({npe::widgets::this_computer(), m_host});
    auto* hosts = form.findChild<QComboBox*>("host");
    QVERIFY(hosts);
    QCOMPARE(hosts->count(), 2);
    hosts->setCurrentIndex(1);
    QVERIFY(answered.wait(kTimeoutMs));
    const auto* devices = form.deviceList();
    bool found = false;
    for (int i = 0; i < devices->count(); ++i) {
      found |= devices->itemData(i).toString() == "cpu" &&
               devices->itemText(i).contains("cores");  // the host's own description
    }
    QVERIFY2(found, qPrintable(devices->itemText(1)));
    QCOMPARE(form.request().host, m_host);
    // On an SSH host the data is copied there unless the user says it is there already.
    auto* copy = form.findChild<QCheckBox*>("copy_data");
    QVERIFY(copy && !copy->isHidden());
    QVERIFY(form.request().copy_data_to_host);
    copy->setChecked(false);
    QVERIFY(!form.request().copy_data_to_host);
    hosts->setCurrentIndex(0);
    QVERIFY(copy->isHidden());
    QVERIFY(!form.request().copy_data_to_host);
  }

  void problemsOnTheHostAreClearMessages() {
    auto missing = m_host;
    missing.npe_path = "/no/such/npe";
    auto answer = ask(missing);
    QVERIFY2(answer.problem.contains("no npe program at /no/such/npe on loop"),
             qPrintable(answer.problem));

    // An npe from before `npe devices`: CLI11 refuses the word.
    QVERIFY(write_text(path("old-npe"),
                       "#!/bin/sh\necho 'The following argument was not expected: devices' >&2\n"
                       "echo 'Run with --help for more information.' >&2\nexit 109\n"));
    QFile::setPermissions(path("old-npe"), QFile::permissions(path("old-npe")) | QFile::ExeOwner);
    auto old = m_host;
    old.npe_path = path("old-npe");
    answer = ask(old);
    QVERIFY2(answer.problem.contains("older than this program"), qPrintable(answer.problem));

    auto refused = m_host;
    refused.ssh_options << "-p" << QString::number(free_tcp_port());
    answer = ask(refused);
    QVERIFY2(
        answer.problem.startsWith("ssh could not reach loop") && answer.problem.contains("refused"),
        qPrintable(answer.problem));

    // A job there fails with the same kind of message in its log, and the queue goes on.
    TrainingQueue queue;
    QVERIFY(queue.add(request("missing.pt", missing), false).isEmpty());
    QTRY_VERIFY_WITH_TIMEOUT(queue.job(0).state == State::Failed, kTimeoutMs);
    const auto log = queue.job(0).log.join('\n');
    QVERIFY2(log.contains("Could not start the job on loop"), qPrintable(log));
  }

  void aJobStopsSurvivesADroppedConnectionAndResumesOnTheHost() {
    TrainingQueue queue;
    QStringList bad_copies;
    int copies = 0;
    connect(&queue, &TrainingQueue::checkpointCopied, this, [&](int index, int step) {
      ++copies;
      try {
        const auto loaded =
            npe::load_checkpoint(queue.job(index).request.output_path.toStdString());
        if (loaded.metadata.steps != step)
          bad_copies << QString("step %1 holds %2").arg(step).arg(loaded.metadata.steps);
      } catch (const std::exception& e) {
        bad_copies << QString("step %1: %2").arg(step).arg(e.what());
      }
    });
    // Shown in the explorer while it trains: each copied checkpoint is offered to the explorer.
    QStringList shown;
    connect(&queue, &TrainingQueue::checkpointForExplorer, this,
            [&](const QString& path) { shown << path; });
    const auto r = request("ssh.pt", m_host);
    QVERIFY(queue.add(r, true).isEmpty());
    const auto& job = queue.job(0);
    // Each step waits on an event, never on the clock: how fast the machine trains (a loaded CI
    // runner trains this job four times slower) changes nothing.
    QTRY_VERIFY2_WITH_TIMEOUT(job.state == State::Running && job.step > 0,
                              qPrintable(describe(queue, 0)), kTimeoutMs);

    // Stop: a final checkpoint on the host, copied back.
    queue.stop(0);
    QTRY_VERIFY2_WITH_TIMEOUT(job.state == State::Stopped, qPrintable(describe(queue, 0)),
                              kTimeoutMs);
    QTRY_VERIFY2_WITH_TIMEOUT(job.copied_step == job.step && !job.copy,
                              qPrintable(describe(queue, 0)), kTimeoutMs);
    const int stopped_at = job.step;
    QVERIFY(stopped_at > 0 && stopped_at < r.steps);

    // Resume until a checkpoint is on its way here, pause (the copy arrives meanwhile), then the
    // connection dies (the ssh client killed, as a dropped network ends it): npe on the host,
    // paused with nobody left to resume it, stops after a final checkpoint.
    queue.resume(0);
    QTRY_VERIFY2_WITH_TIMEOUT(
        job.state == State::Running && (job.copy || job.copied_step > stopped_at),
        qPrintable(describe(queue, 0)), kTimeoutMs);
    queue.pause(0);
    QTRY_VERIFY2_WITH_TIMEOUT(job.state == State::Paused && !job.copy,
                              qPrintable(describe(queue, 0)), kTimeoutMs);
    QVERIFY2(job.copied_step > stopped_at, qPrintable(describe(queue, 0)));
    const qint64 ssh = job.process->processId();
    QVERIFY(ssh > 0);
    QCOMPARE(::kill(static_cast<pid_t>(ssh), SIGKILL), 0);
    QTRY_VERIFY2_WITH_TIMEOUT(job.state == State::Disconnected, qPrintable(describe(queue, 0)),
                              kTimeoutMs);
    const auto log = job.log.join('\n');
    QVERIFY2(log.contains("The connection to loop") && log.contains("Resume continues it"),
             qPrintable(log));
    QVERIFY(job.copied_step > stopped_at);
    QTRY_VERIFY2_WITH_TIMEOUT(!job.copy, qPrintable(describe(queue, 0)), kTimeoutMs);
    QCOMPARE(npe::read_checkpoint_metadata(r.output_path.toStdString()).steps, job.copied_step);

    // Resume continues on the host, from the final checkpoint npe there wrote as it stopped.
    queue.resume(0);
    QTRY_VERIFY2_WITH_TIMEOUT(job.state == State::Finished, qPrintable(describe(queue, 0)),
                              kTimeoutMs);
    QTRY_VERIFY2_WITH_TIMEOUT(job.copied_step == r.steps && !job.copy,
                              qPrintable(describe(queue, 0)), kTimeoutMs);
    QVERIFY2(bad_copies.isEmpty(), qPrintable(bad_copies.join("; ")));
    QVERIFY(copies >= 3);
    QCOMPARE(shown.size(), copies);
    QVERIFY(shown.count(r.output_path) == shown.size());
    const auto meta = npe::read_checkpoint_metadata(r.output_path.toStdString());
    QCOMPARE(meta.steps, r.steps);
    QVERIFY(meta.sessions.size() >= 3);  // started, resumed after the stop and after the drop

    // The same job here, never interrupted, trains the same weights.
    TrainingHost one_thread_here;
    one_thread_here.kind = TrainingHost::Kind::LocalProgram;
    one_thread_here.name = "one thread";
    one_thread_here.npe_path = m_host.npe_path;
    auto here = request("here.pt", one_thread_here);
    QVERIFY(queue.add(here, false).isEmpty());
    QTRY_VERIFY2_WITH_TIMEOUT(queue.job(1).state == State::Finished, qPrintable(describe(queue, 0)),
                              kTimeoutMs);
    QCOMPARE(max_weight_difference(here.output_path, r.output_path), 0.0);
    // The host's own file is the one copied here.
    QCOMPARE(max_weight_difference(m_host.host_path(r.output_path), r.output_path), 0.0);
  }

  // Data here, training there: the job copies the user's series to the host (a path with a
  // space, quoted for its shell) before it starts, trains on the copy, and says so; data that
  // is not here is refused before anything runs.
  void aJobCopiesItsDataToTheHost() {
    QDir().mkpath(path("my data"));
    const auto csv = path("my data/level.csv");
    {
      QFile file(csv);
      QVERIFY(file.open(QIODevice::WriteOnly | QIODevice::Text));
      QTextStream out(&file);
      out << "hour,level\n";
      for (int h = 0; h < 600; ++h) out << h << ',' << std::sin(h / 4.0) + 0.001 * h << '\n';
    }
    TrainingQueue queue;
    auto r = request("copied.pt", m_host);
    r.task = "series";
    r.data_path = csv;
    r.task_options = "window=48";
    r.steps = 4;
    r.checkpoint_every = 2;
    r.validation_every = 4;
    r.copy_data_to_host = true;
    QVERIFY(QDir(m_host.host_data_folder()).removeRecursively());
    const auto problems = queue.add(r, false);
    QVERIFY2(problems.isEmpty(), qPrintable(problems.join("; ")));
    const auto& job = queue.job(0);
    QTRY_VERIFY2_WITH_TIMEOUT(job.state == State::Finished, qPrintable(describe(queue, 0)),
                              kTimeoutMs);
    QTRY_VERIFY2_WITH_TIMEOUT(job.copied_step == r.steps && !job.copy,
                              qPrintable(describe(queue, 0)), kTimeoutMs);
    const auto there = m_host.host_data_path(csv);
    QCOMPARE(there, path("on host/checkpoints/data/level.csv"));
    QFile copy(there), original(csv);
    QVERIFY(copy.open(QIODevice::ReadOnly) && original.open(QIODevice::ReadOnly));
    QCOMPARE(copy.readAll(), original.readAll());
    // The host trained on its copy, and the checkpoint says so.
    const auto meta = npe::read_checkpoint_metadata(r.output_path.toStdString());
    QCOMPARE(QString::fromStdString(meta.task.at("data").get<std::string>()), there);
    QVERIFY2(job.log.join('\n').contains("The data is on loop"), qPrintable(job.log.join('\n')));

    // Data that is not here: refused before anything is copied or run.
    auto missing = request("missing.pt", m_host);
    missing.task = "series";
    missing.data_path = path("my data/none.csv");
    missing.copy_data_to_host = true;
    QVERIFY(!queue.add(missing, false).isEmpty());
    QCOMPARE(queue.count(), 1);
  }

  void theHostsDialogKeepsOnlyHostsThatCanWork() {
    npe::widgets::TrainingHostsDialog dialog({npe::widgets::this_computer(), m_host});
    QCOMPARE(dialog.hosts().size(), 2);
    QVERIFY(dialog.problem().isEmpty());
    TrainingHost twin = m_host;
    dialog.addHost(twin);
    QVERIFY(dialog.problem().contains("Two hosts are called loop"));
    dialog.testSelected();
    QTRY_VERIFY_WITH_TIMEOUT(dialog.testResult()->text().contains("can train on"), kTimeoutMs);
  }
};

QTEST_MAIN(TrainingHostsTest)
#include "training_hosts_test.moc"
