#include "function1d/point_import.h"

#include <QComboBox>
#include <QDialog>
#include <QDialogButtonBox>
#include <QFileInfo>
#include <QFormLayout>
#include <QStringList>

#include "common/dialogs.h"
#include "npe/data/point_table.h"
#include "npe/errors.h"

namespace npe::widgets {
namespace {

// Asks which columns are x and y when a file has more than two and does not name them.
std::pair<int, int> choose_columns(QWidget* parent, const PointTable& table) {
  auto choice = default_xy_columns(table);
  const bool named = table.column_index("x") >= 0 && table.column_index("y") >= 0;
  if (table.columns.size() <= 2 || named || !dialogsAllowed()) {
    return choice;
  }
  QDialog dialog(parent);
  dialog.setWindowTitle(QObject::tr("Choose columns"));
  auto* form = new QFormLayout(&dialog);
  auto* x = new QComboBox(&dialog);
  auto* y = new QComboBox(&dialog);
  for (const auto& name : table.columns) {
    x->addItem(QString::fromStdString(name));
    y->addItem(QString::fromStdString(name));
  }
  x->setCurrentIndex(choice.first);
  y->setCurrentIndex(choice.second);
  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, &dialog);
  QObject::connect(buttons, &QDialogButtonBox::accepted, &dialog, &QDialog::accept);
  QObject::connect(buttons, &QDialogButtonBox::rejected, &dialog, &QDialog::reject);
  form->addRow(QObject::tr("x (input)"), x);
  form->addRow(QObject::tr("y (output)"), y);
  form->addRow(buttons);
  if (dialog.exec() != QDialog::Accepted) return {-1, -1};
  return {x->currentIndex(), y->currentIndex()};
}

}  // namespace

std::optional<ImportedPoints> import_points(QWidget* parent, const QString& path) {
  const auto table = read_point_table(path.toStdString());
  const auto [x_column, y_column] = choose_columns(parent, table);
  if (x_column < 0) return std::nullopt;
  int64_t nan_rows = 0;
  ImportedPoints imported;
  for (const auto& [x, y] : table.points(x_column, y_column, &nan_rows)) {
    imported.points.emplace_back(x, y);
  }
  if (imported.points.empty()) {
    throw DataError(("'" + path + "' has no usable (x, y) rows").toStdString());
  }
  QStringList notes;
  if (nan_rows > 0) {
    notes << QObject::tr("%n NaN row(s) skipped", nullptr, static_cast<int>(nan_rows));
  }
  if (!table.warnings.empty()) {
    notes << QObject::tr("%n bad row(s) skipped: %1", nullptr,
                         static_cast<int>(table.warnings.size()))
                 .arg(QString::fromStdString(table.warnings.front()));
  }
  imported.summary =
      QObject::tr("(x: %1, y: %2) from %3%4")
          .arg(QString::fromStdString(table.columns[x_column]),
               QString::fromStdString(table.columns[y_column]), QFileInfo(path).fileName(),
               notes.isEmpty() ? QString() : " · " + notes.join(" · "));
  return imported;
}

}  // namespace npe::widgets
