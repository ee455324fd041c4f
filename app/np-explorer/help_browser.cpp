#include "help_browser.h"

#include <QDialogButtonBox>
#include <QHBoxLayout>
#include <QPushButton>
#include <QTextBrowser>
#include <QVBoxLayout>

// The resources live in this static library: the program and the tests that link it must
// register them before a page is shown.
static void register_help_resources() {
  Q_INIT_RESOURCE(help);
}

namespace npe::app {

QUrl tab_help_page(const QString& tab_id) {
  return QUrl("qrc:/help/" + tab_id + ".md");
}

QUrl user_guide_page() {
  return QUrl("qrc:/guide/README.md");
}

HelpBrowser::HelpBrowser(QWidget* parent) : QDialog(parent) {
  register_help_resources();
  setWindowTitle(tr("NP Explorer help"));
  resize(760, 680);
  m_browser = new QTextBrowser(this);
  m_browser->setOpenExternalLinks(true);  // http(s): the user's browser; qrc pages: here
  auto* back = new QPushButton(tr("◀ Back"), this);
  auto* forward = new QPushButton(tr("Forward ▶"), this);
  auto* guide = new QPushButton(tr("User guide"), this);
  back->setEnabled(false);
  forward->setEnabled(false);
  connect(back, &QPushButton::clicked, m_browser, &QTextBrowser::backward);
  connect(forward, &QPushButton::clicked, m_browser, &QTextBrowser::forward);
  connect(guide, &QPushButton::clicked, this, [this] { showPage(user_guide_page()); });
  connect(m_browser, &QTextBrowser::backwardAvailable, back, &QPushButton::setEnabled);
  connect(m_browser, &QTextBrowser::forwardAvailable, forward, &QPushButton::setEnabled);
  connect(m_browser, &QTextBrowser::sourceChanged, this, [this] {
    const auto title = m_browser->documentTitle();
    setWindowTitle(title.isEmpty() ? tr("NP Explorer help") : tr("%1 — NP Explorer").arg(title));
  });
  auto* buttons = new QHBoxLayout;
  buttons->addWidget(back);
  buttons->addWidget(forward);
  buttons->addStretch(1);
  buttons->addWidget(guide);
  auto* close = new QDialogButtonBox(QDialogButtonBox::Close, this);
  connect(close, &QDialogButtonBox::rejected, this, &QDialog::close);
  buttons->addWidget(close);
  auto* layout = new QVBoxLayout(this);
  layout->addWidget(m_browser, 1);
  layout->addLayout(buttons);
}

void HelpBrowser::showPage(const QUrl& page) {
  m_browser->setSource(page, QTextDocument::MarkdownResource);
  show();
  raise();
  activateWindow();
}

QUrl HelpBrowser::page() const {
  return m_browser->source();
}

QString HelpBrowser::text() const {
  return m_browser->toPlainText();
}

}  // namespace npe::app
