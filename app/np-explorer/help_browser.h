#pragma once
// The help inside the application, offline: each tab's short page (its "?": what the tab shows,
// what translation equivariance means there, three things to try, the paper's equation) from
// resources/help/, and the user guide of docs/guide/, both compiled into the program
// (resources/help.qrc) and rendered from Markdown.

#include <QDialog>
#include <QUrl>

class QTextBrowser;

namespace npe::app {

/// The short page of a tab ("functions", "images", "maps", "training").
QUrl tab_help_page(const QString& tab_id);
/// The user guide's first page.
QUrl user_guide_page();

/// A window that shows help pages, with back, forward and a link to the user guide. Links
/// between pages stay inside it; web links open in the browser.
class HelpBrowser final : public QDialog {
  Q_OBJECT
  Q_DISABLE_COPY_MOVE(HelpBrowser)

 public:
  explicit HelpBrowser(QWidget* parent = nullptr);
  /// Shows `page` (a tab_help_page or a guide page) and raises the window.
  void showPage(const QUrl& page);
  QUrl page() const;
  /// The page as plain text (tests).
  QString text() const;

 private:
  QTextBrowser* m_browser = nullptr;
};

}  // namespace npe::app
