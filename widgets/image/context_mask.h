#pragma once
// Which canvas pixels are context points, in base coordinates (the untranslated canvas), and the
// undoable edits on them. A brush stroke is one undo step.

#include <cstdint>
#include <vector>

#include <QObject>
#include <QUndoCommand>

namespace npe::widgets {

class ContextMask final : public QObject {
  Q_OBJECT
  Q_DISABLE_COPY_MOVE(ContextMask)

 public:
  explicit ContextMask(int side, QObject* parent = nullptr);

  int side() const { return m_side; }
  bool at(int index) const { return m_on[static_cast<size_t>(index)] != 0; }
  int count() const;
  /// Indices (row * side + column) of the context pixels, ascending.
  std::vector<int> indices() const;
  /// Sets pixels; emits changed() once.
  void set(const std::vector<int>& indices, bool on);
  void replace(const std::vector<int>& indices);
  /// A canvas of another side: no context pixels (emits changed()).
  void resize(int side);

 Q_SIGNALS:
  void changed();

 private:
  int m_side;
  std::vector<uint8_t> m_on;
};

/// Paints (on = true) or erases pixels. Commands of the same stroke merge into one undo step.
class PaintPixelsCommand final : public QUndoCommand {
 public:
  PaintPixelsCommand(ContextMask* mask, const std::vector<int>& indices, bool on, int stroke);
  void redo() override;
  void undo() override;
  int id() const override { return 4242; }
  bool mergeWith(const QUndoCommand* other) override;

 private:
  ContextMask* m_mask;
  bool m_on;
  int m_stroke;
  std::vector<int> m_changed;  ///< pixels this command actually flipped
};

/// Replaces the whole mask (random N %, clear, session load).
class ReplaceMaskCommand final : public QUndoCommand {
 public:
  ReplaceMaskCommand(ContextMask* mask, std::vector<int> indices, const QString& text);
  void redo() override;
  void undo() override;

 private:
  ContextMask* m_mask;
  std::vector<int> m_before, m_after;
};

}  // namespace npe::widgets
