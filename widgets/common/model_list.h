#pragma once
// The list of models a tab can show: coloured, checkable, with tooltips saying what each is.

#include <vector>

#include <QJsonObject>
#include <QListWidget>
#include <QStringList>

#include "common/model_entry.h"

namespace npe::widgets {

class ModelList final : public QListWidget {
  Q_OBJECT
  Q_DISABLE_COPY_MOVE(ModelList)

 public:
  explicit ModelList(QWidget* parent = nullptr);

  /// Adds an entry (or, when one with the same id or checkpoint exists, enables that one; an
  /// entry of the same checkpoint file takes the new entry's model, name and tooltip).
  /// Returns the id of the entry in the list.
  QString add(ModelEntry entry, bool enabled);
  void setEnabled(const QString& id, bool enabled);
  /// Enables exactly the given ids.
  void setEnabledIds(const QStringList& ids);
  const std::vector<ModelEntry>& entries() const { return m_entries; }
  std::vector<ModelEntry> enabledEntries() const;
  const ModelEntry* find(const QString& id) const;
  QStringList enabledIds() const;
  /// Ids of entries opened from checkpoints by the user (not shipped, not baselines).
  QStringList userCheckpoints() const;
  /// Display names of the enabled entries, in list order.
  QStringList enabledNames() const;
  /// The entries of these checkpoint files that the list lacks, loaded (coloured after the
  /// existing ones) but not added: a tab restoring a session fails before it changes anything.
  /// Throws npe::Error (CheckpointError) for a file that cannot be loaded.
  std::vector<ModelEntry> loadMissing(const QStringList& checkpoint_paths,
                                      const torch::Device& device) const;

  /// The "models" part of a tab's session: {"enabled": ids, "checkpoints": user checkpoints}.
  QJsonObject sessionModels() const;
  /// The enabled ids and the checkpoint files of a session's "models" part.
  static QStringList sessionEnabledIds(const QJsonObject& models);
  static QStringList sessionCheckpoints(const QJsonObject& models);
  /// The id of the selected (current) row; empty when none.
  QString selectedId() const;
  /// Selects the row of this entry; false when there is none.
  bool select(const QString& id);
  /// Shows this entry's row in bold (the model the mouse is on elsewhere); empty for none.
  void setHighlighted(const QString& id);
  QString highlighted() const { return m_highlighted; }

 Q_SIGNALS:
  /// The user (or setEnabled) switched a model on or off.
  void modelToggled(const QString& id, bool enabled);
  /// The selected row changed (empty: none).
  void modelSelected(const QString& id);
  /// The mouse moved onto a row (its id) or off the list (empty).
  void modelHovered(const QString& id);

 protected:
  void leaveEvent(QEvent* event) override;

 private:
  std::vector<ModelEntry> m_entries;
  QString m_highlighted;
};

}  // namespace npe::widgets
