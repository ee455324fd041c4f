#include "training/training_hosts_dialog.h"

#include <QComboBox>
#include <QDialogButtonBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QProcess>
#include <QPushButton>
#include <QSet>
#include <QVBoxLayout>

#include "training/host_devices.h"

namespace npe::widgets {

TrainingHostsDialog::TrainingHostsDialog(const QList<TrainingHost>& hosts, QWidget* parent)
    : QDialog(parent) {
  setWindowTitle(tr("Training hosts"));
  for (const auto& host : hosts) {
    if (host.kind != TrainingHost::Kind::ThisComputer) m_hosts << host;
  }
  auto* column = new QVBoxLayout(this);
  auto* intro = new QLabel(
      tr("A job runs on this computer, on another computer reached with your own <b>ssh</b> "
         "(your keys and ~/.ssh/config; it must log in without asking for a password), or with "
         "another npe program here, e.g. a CUDA build. On an SSH host npe writes the checkpoints "
         "in the folder given, and each one is copied back here with scp."),
      this);
  intro->setWordWrap(true);
  column->addWidget(intro);
  auto* row = new QHBoxLayout;
  m_list = new QListWidget(this);
  m_list->setMinimumWidth(180);
  row->addWidget(m_list);
  m_fields = new QWidget(this);
  auto* form = new QFormLayout(m_fields);
  m_kind = new QComboBox(m_fields);
  m_kind->addItem(tr("SSH host"), static_cast<int>(TrainingHost::Kind::Ssh));
  m_kind->addItem(tr("npe program on this computer"),
                  static_cast<int>(TrainingHost::Kind::LocalProgram));
  m_name = new QLineEdit(m_fields);
  m_destination = new QLineEdit(m_fields);
  m_destination->setPlaceholderText(tr("user@computer or a Host of ~/.ssh/config"));
  m_npe_path = new QLineEdit(m_fields);
  m_remote_folder = new QLineEdit(m_fields);
  m_remote_folder->setPlaceholderText(tr("e.g. npe-training (relative to the home folder there)"));
  m_ssh_options = new QLineEdit(m_fields);
  m_ssh_options->setPlaceholderText(tr("e.g. -p 2222 -i ~/.ssh/gpu_key"));
  m_ssh_options->setToolTip(tr("Given to ssh and scp before the destination"));
  form->addRow(tr("Kind"), m_kind);
  form->addRow(tr("Name"), m_name);
  form->addRow(tr("Destination"), m_destination);
  form->addRow(tr("npe there"), m_npe_path);
  form->addRow(tr("Checkpoint folder there"), m_remote_folder);
  form->addRow(tr("ssh options"), m_ssh_options);
  m_test = new QPushButton(tr("Test"), m_fields);
  m_test->setToolTip(tr("Ask npe there which devices it can train on"));
  form->addRow(m_test);
  m_test_result = new QLabel(m_fields);
  m_test_result->setWordWrap(true);
  m_test_result->setTextInteractionFlags(Qt::TextSelectableByMouse);
  form->addRow(m_test_result);
  row->addWidget(m_fields, 1);
  column->addLayout(row, 1);

  auto* edit_buttons = new QHBoxLayout;
  auto* add_ssh = new QPushButton(tr("Add SSH host"), this);
  auto* add_program = new QPushButton(tr("Add npe program"), this);
  auto* remove = new QPushButton(tr("Remove"), this);
  edit_buttons->addWidget(add_ssh);
  edit_buttons->addWidget(add_program);
  edit_buttons->addWidget(remove);
  edit_buttons->addStretch(1);
  column->addLayout(edit_buttons);
  m_message = new QLabel(this);
  m_message->setWordWrap(true);
  m_message->setStyleSheet("color: #b00020");
  column->addWidget(m_message);
  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
  column->addWidget(buttons);

  m_probe = new HostDevicesProbe(this);
  connect(m_probe, &HostDevicesProbe::answered, this,
          [this](const TrainingHost& host, const HostDevicesAnswer& answer) {
            m_test->setEnabled(true);
            if (!answer.ok()) {
              m_test_result->setText(
                  tr("<span style='color:#b00020'>%1</span>").arg(answer.problem.toHtmlEscaped()));
              return;
            }
            QStringList devices;
            for (const auto& d : answer.devices) devices << d.description;
            m_test_result->setText(tr("%1: npe with libtorch %2 can train on %3.")
                                       .arg(host.name.toHtmlEscaped(), answer.libtorch,
                                            devices.join(", ").toHtmlEscaped()));
          });
  connect(m_list, &QListWidget::currentRowChanged, this, [this] { showSelected(); });
  for (auto* field : {m_name, m_destination, m_npe_path, m_remote_folder, m_ssh_options}) {
    connect(field, &QLineEdit::textEdited, this, [this] { storeFields(); });
  }
  connect(m_kind, &QComboBox::currentIndexChanged, this, [this] {
    storeFields();
    showSelected();
  });
  connect(add_ssh, &QPushButton::clicked, this, [this] {
    TrainingHost host;
    host.kind = TrainingHost::Kind::Ssh;
    host.name = tr("GPU machine");
    host.npe_path = QStringLiteral("npe");
    host.remote_folder = QStringLiteral("npe-training");
    addHost(host);
  });
  connect(add_program, &QPushButton::clicked, this, [this] {
    TrainingHost host;
    host.kind = TrainingHost::Kind::LocalProgram;
    host.name = tr("Other npe");
    addHost(host);
  });
  connect(remove, &QPushButton::clicked, this, [this] {
    const int row = m_list->currentRow();
    if (row < 0) return;
    m_hosts.removeAt(row);
    delete m_list->takeItem(row);
    showSelected();
  });
  connect(m_test, &QPushButton::clicked, this, &TrainingHostsDialog::testSelected);
  connect(buttons, &QDialogButtonBox::accepted, this, &TrainingHostsDialog::accept);
  connect(buttons, &QDialogButtonBox::rejected, this, &TrainingHostsDialog::reject);

  for (const auto& host : m_hosts) m_list->addItem(host.name);
  m_list->setCurrentRow(m_hosts.isEmpty() ? -1 : 0);
  showSelected();
  resize(720, 420);
}

TrainingHostsDialog::~TrainingHostsDialog() = default;

QList<TrainingHost> TrainingHostsDialog::hosts() const {
  return QList<TrainingHost>{this_computer()} + m_hosts;
}

QString TrainingHostsDialog::problem() const {
  QSet<QString> names{this_computer().name};
  for (const auto& host : m_hosts) {
    if (const auto p = host.problem(); !p.isEmpty()) return host.name + ": " + p;
    if (names.contains(host.name)) return tr("Two hosts are called %1.").arg(host.name);
    names.insert(host.name);
  }
  return {};
}

void TrainingHostsDialog::addHost(const TrainingHost& host) {
  m_hosts << host;
  m_list->addItem(host.name);
  m_list->setCurrentRow(static_cast<int>(m_hosts.size()) - 1);
  showSelected();
  m_name->setFocus();
  m_name->selectAll();
}

TrainingHost* TrainingHostsDialog::selected() {
  const int row = m_list->currentRow();
  return row >= 0 && row < m_hosts.size() ? &m_hosts[row] : nullptr;
}

void TrainingHostsDialog::showSelected() {
  const auto* host = selected();
  m_fields->setEnabled(host != nullptr);
  m_showing = true;  // setting the fields is not an edit
  const TrainingHost shown = host ? *host : TrainingHost{};
  m_kind->setCurrentIndex(std::max(0, m_kind->findData(static_cast<int>(shown.kind))));
  m_name->setText(shown.name);
  m_destination->setText(shown.destination);
  m_npe_path->setText(shown.npe_path);
  m_npe_path->setPlaceholderText(shown.remote() ? tr("npe (on the host's PATH) or its full path")
                                                : tr("full path of the other npe program"));
  m_remote_folder->setText(shown.remote_folder);
  m_ssh_options->setText(shown.ssh_options.join(' '));
  const bool ssh = shown.kind != TrainingHost::Kind::LocalProgram;
  for (auto* field : {m_destination, m_remote_folder, m_ssh_options}) field->setEnabled(ssh);
  m_test_result->clear();
  m_showing = false;
}

void TrainingHostsDialog::storeFields() {
  auto* host = selected();
  if (!host || m_showing) return;
  host->kind = static_cast<TrainingHost::Kind>(m_kind->currentData().toInt());
  host->name = m_name->text().trimmed();
  host->destination = m_destination->text().trimmed();
  host->npe_path = m_npe_path->text().trimmed();
  host->remote_folder = m_remote_folder->text().trimmed();
  host->ssh_options = QProcess::splitCommand(m_ssh_options->text());
  if (auto* item = m_list->currentItem()) item->setText(host->name);
  m_message->clear();
}

void TrainingHostsDialog::testSelected() {
  const auto* host = selected();
  if (!host) return;
  if (const auto p = host->problem(); !p.isEmpty()) {
    m_test_result->setText(p.toHtmlEscaped());
    return;
  }
  m_test->setEnabled(false);
  m_test_result->setText(tr("Asking %1…").arg(host->label().toHtmlEscaped()));
  m_probe->ask(*host);
}

void TrainingHostsDialog::accept() {
  if (const auto p = problem(); !p.isEmpty()) {
    m_message->setText(p);
    return;
  }
  QDialog::accept();
}

}  // namespace npe::widgets
