#include "maps/map_view.h"
#include "maps/opengl_driver_pin.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include <QGuiApplication>
#include <QMouseEvent>
#include <QOffscreenSurface>
#include <QOpenGLContext>
#include <QOpenGLExtraFunctions>
#include <QOpenGLFramebufferObject>
#include <QPainter>
#include <QWheelEvent>

// VTK after Qt and libtorch (see the precompiled header): only this file sees it.
#include <vtkActor.h>
#include <vtkCallbackCommand.h>
#include <vtkCamera.h>
#include <vtkCellArray.h>
#include <vtkColorTransferFunction.h>
#include <vtkCoordinate.h>
#include <vtkDoubleArray.h>
#include <vtkGenericOpenGLRenderWindow.h>
#include <vtkGenericRenderWindowInteractor.h>
#include <vtkGlyph3D.h>
#include <vtkInteractorStyleTrackballCamera.h>
#include <vtkLookupTable.h>
#include <vtkPointData.h>
#include <vtkPoints.h>
#include <vtkPolyData.h>
#include <vtkPolyDataMapper.h>
#include <vtkProperty.h>
#include <vtkRegularPolygonSource.h>
#include <vtkRenderer.h>
#include <vtkScalarBarActor.h>
#include <vtkSmartPointer.h>
#include <vtkSphereSource.h>
#include <vtkTextActor.h>
#include <vtkTextProperty.h>

namespace npe::widgets {
namespace {

template <typename T>
using Ptr = vtkSmartPointer<T>;
template <typename T>
Ptr<T> make() {
  return Ptr<T>::New();
}

// Height of the 3-D surface on the British Isles grid (about 12 degrees across): the colour
// range spans this many degrees of latitude. Larger grids get a taller relief (with the square
// root of their size, so that a continent does not look like a wall).
constexpr double kReliefDegrees = 3.0;
constexpr double kReliefGridDegrees = 12.0;

vtkSmartPointer<vtkLookupTable> palette_table(MapScene::Palette palette, double low, double high) {
  auto ctf = make<vtkColorTransferFunction>();
  switch (palette) {
    case MapScene::Palette::Temperature:  // blue - white - red, for values
    case MapScene::Palette::Diverging:    // the same for signed errors (symmetric range)
      ctf->SetColorSpaceToDiverging();
      ctf->AddRGBPoint(0.0, 0.230, 0.299, 0.754);
      ctf->AddRGBPoint(0.5, 0.865, 0.865, 0.865);
      ctf->AddRGBPoint(1.0, 0.706, 0.016, 0.150);
      break;
    case MapScene::Palette::Sequential:  // dark to bright, for standard deviations
      ctf->AddRGBPoint(0.0, 0.050, 0.030, 0.180);
      ctf->AddRGBPoint(0.35, 0.450, 0.120, 0.500);
      ctf->AddRGBPoint(0.7, 0.950, 0.400, 0.250);
      ctf->AddRGBPoint(1.0, 0.990, 0.950, 0.600);
      break;
  }
  auto table = make<vtkLookupTable>();
  table->SetNumberOfTableValues(256);
  for (int i = 0; i < 256; ++i) {
    double rgb[3];
    ctf->GetColor(i / 255.0, rgb);
    table->SetTableValue(i, rgb[0], rgb[1], rgb[2], 1.0);
  }
  table->SetRange(low, std::max(high, low + 1e-9));
  table->SetNanColor(0.55, 0.55, 0.55, 1.0);
  table->Build();
  return table;
}

// The inputs of the scene's frame: the props that depend on nothing else are kept while these
// stay the same.
struct FrameKey {
  std::vector<double> latitudes, longitudes;
  std::shared_ptr<const std::vector<std::vector<QPointF>>> coastlines;
  QRect training_region;
  bool three_d = false;
  MapScene::Palette palette = MapScene::Palette::Temperature;
  double low = 0.0, high = 1.0;
  QString colour_title;

  bool operator==(const FrameKey& other) const {
    return latitudes == other.latitudes && longitudes == other.longitudes &&
           coastlines == other.coastlines && training_region == other.training_region &&
           three_d == other.three_d && palette == other.palette && low == other.low &&
           high == other.high && colour_title == other.colour_title;
  }
};

}  // namespace

struct MapView::Vtk {
  Ptr<vtkGenericOpenGLRenderWindow> window;
  Ptr<vtkRenderer> renderer;
  Ptr<vtkGenericRenderWindowInteractor> interactor;
  bool initialised = false;
  bool failed = false;
  bool camera_set_for_3d = false;
  // World x of a longitude: degrees scaled by cos(central latitude), so the map keeps its
  // shape (an equirectangular projection at that latitude).
  double x_scale = 1.0;
  // Height of the relief in world units (degrees), scaled with the grid (kReliefDegrees).
  double relief = kReliefDegrees;
  // What rebuild() keeps between scenes (see there): the props of the frame and the inputs they
  // were made from, and those of the last scene.
  std::optional<FrameKey> frame_key;
  std::vector<Ptr<vtkProp>> frame_props, scene_props;
  Ptr<vtkLookupTable> table;
  Ptr<vtkTextActor> title;
};

MapView::MapView(QWidget* parent) : QWidget(parent), m_vtk(std::make_unique<Vtk>()) {
  setMouseTracking(true);
  setMinimumSize(320, 260);
  // The picture covers the widget: no background to fill first.
  setAttribute(Qt::WA_OpaquePaintEvent);
  m_vtk->renderer = make<vtkRenderer>();
  m_vtk->renderer->SetBackground(1.0, 1.0, 1.0);
}

MapView::~MapView() {
  // VTK releases its OpenGL resources with the context current.
  if (m_vtk->initialised && makeContextCurrent()) {
    m_vtk->window->Finalize();
    m_framebuffer.reset();
    m_context->doneCurrent();
  }
}

bool MapView::openGLAvailable() {
  static const bool available = [] {
    // Qt's offscreen and minimal platforms: the map view is left out there (the tab shows its
    // small maps), as it always was; on Qt 6.4 the offscreen platform with a display set crashed
    // hosting an OpenGL widget (test np_explorer_screenshot_maps_offscreen_with_a_display).
    const QString platform = QGuiApplication::platformName();
    if (platform == QLatin1String("offscreen") || platform == QLatin1String("minimal"))
      return false;
    QOpenGLContext probe;
    return probe.create();
  }();
  return available;
}

bool MapView::renderingAvailable() const {
  return m_vtk->initialised && !m_vtk->failed;
}

bool MapView::makeContextCurrent() {
  return m_context && m_surface && m_context->makeCurrent(m_surface.get());
}

void MapView::initialise() {
  auto& v = *m_vtk;
  // The default format is OpenGL 3.2 core (main()), VTK's minimum.
  m_surface = std::make_unique<QOffscreenSurface>();
  m_surface->setFormat(QSurfaceFormat::defaultFormat());
  m_surface->create();
  m_context = std::make_unique<QOpenGLContext>();
  m_context->setFormat(QSurfaceFormat::defaultFormat());
  if (!m_surface->isValid() || !m_context->create() || !makeContextCurrent() ||
      m_context->format().version() < qMakePair(3, 2)) {
    v.failed = true;
    return;
  }
  v.window = make<vtkGenericOpenGLRenderWindow>();
  // This view owns the context and makes it current: VTK must neither create one nor swap
  // buffers; it renders into its own framebuffer, which render() copies out.
  v.window->SetOwnContext(false);
  v.window->SetIsCurrent(true);
  v.window->SetReadyForRendering(true);
  v.window->SetFrameBlitModeToNoBlit();
  v.window->SetMultiSamples(0);
  auto make_current = make<vtkCallbackCommand>();
  make_current->SetClientData(this);
  make_current->SetCallback([](vtkObject*, unsigned long, void* self, void*) {
    static_cast<MapView*>(self)->makeContextCurrent();
  });
  v.window->AddObserver(vtkCommand::WindowMakeCurrentEvent, make_current);
  v.window->AddRenderer(v.renderer);
  v.window->SetSize(std::max(1, int(width() * devicePixelRatioF())),
                    std::max(1, int(height() * devicePixelRatioF())));
  v.window->OpenGLInitContext();
  keepOpenGlDriverLoadedForLeakChecks();
  v.interactor = make<vtkGenericRenderWindowInteractor>();
  v.interactor->SetRenderWindow(v.window);
  v.interactor->SetInteractorStyle(make<vtkInteractorStyleTrackballCamera>());
  v.interactor->EnableRenderOff();  // the view decides when to render
  v.initialised = true;
  m_context->doneCurrent();
  rebuild();
}

void MapView::render(const QSize& size) {
  auto& v = *m_vtk;
  if (!makeContextCurrent()) {
    v.failed = true;
    return;
  }
  if (!m_framebuffer || m_framebuffer->size() != size) {
    // Opaque (RGB): VTK leaves alpha 0 where it drew only the background.
    QOpenGLFramebufferObjectFormat format;
    format.setInternalTextureFormat(GL_RGB8);
    m_framebuffer = std::make_unique<QOpenGLFramebufferObject>(size, format);
  }
  const int w = size.width(), h = size.height();
  v.window->SetSize(w, h);
  v.interactor->SetSize(w, h);
  v.window->Render();
  // Copy VTK's framebuffer into ours and read it back as the picture to draw.
  auto* gl = m_context->extraFunctions();
  gl->glBindFramebuffer(GL_DRAW_FRAMEBUFFER, m_framebuffer->handle());
  v.window->BlitDisplayFramebuffer(0, 0, 0, w, h, 0, 0, w, h, GL_COLOR_BUFFER_BIT, GL_NEAREST);
  m_image = m_framebuffer->toImage();
  m_image.setDevicePixelRatio(devicePixelRatioF());
  m_context->doneCurrent();
  m_stale = false;
}

void MapView::renderLater() {
  m_stale = true;
  update();
}

void MapView::paintEvent(QPaintEvent*) {
  auto& v = *m_vtk;
  if (!v.initialised && !v.failed) initialise();
  const qreal ratio = devicePixelRatioF();
  const QSize size(std::max(1, int(width() * ratio)), std::max(1, int(height() * ratio)));
  if (!v.failed && (m_stale || m_image.size() != size)) render(size);
  QPainter painter(this);
  if (v.failed) {
    painter.fillRect(rect(), Qt::white);
    painter.drawText(rect(), Qt::AlignCenter | Qt::TextWordWrap,
                     tr("The map view needs OpenGL 3.2, which this display does not offer."));
    return;
  }
  painter.drawImage(QPointF(0, 0), m_image);
}

bool MapScene::drawsTheSameAs(const MapScene& o) const {
  auto same_station = [](const Station& a, const Station& b) {
    return a.row == b.row && a.column == b.column && a.value == b.value;
  };
  auto same_proposal = [](const Proposal& a, const Proposal& b) {
    return a.row == b.row && a.column == b.column && a.rank == b.rank && a.colour == b.colour &&
           a.value == b.value;
  };
  if (title != o.title || colour_title != o.colour_title || low != o.low || high != o.high ||
      palette != o.palette || latitudes != o.latitudes || longitudes != o.longitudes ||
      target_window != o.target_window || training_region != o.training_region ||
      coastlines != o.coastlines ||
      !std::equal(stations.begin(), stations.end(), o.stations.begin(), o.stations.end(),
                  same_station) ||
      !std::equal(proposals.begin(), proposals.end(), o.proposals.begin(), o.proposals.end(),
                  same_proposal) ||
      values.defined() != o.values.defined()) {
    return false;
  }
  if (!values.defined()) return true;
  if (values.sizes() != o.values.sizes() || values.scalar_type() != o.values.scalar_type()) {
    return false;
  }
  return ((values == o.values) | (values.isnan() & o.values.isnan())).all().item<bool>();
}

void MapView::setScene(MapScene scene) {
  if (scene.drawsTheSameAs(m_scene)) return;
  m_scene = std::move(scene);
  rebuild();
  renderLater();
}

void MapView::setThreeD(bool on) {
  if (on == m_three_d) return;
  m_three_d = on;
  m_vtk->camera_set_for_3d = false;
  rebuild();
  renderLater();
}

void MapView::rebuild() {
  auto& v = *m_vtk;
  auto& r = *v.renderer;
  const auto& s = m_scene;
  auto remove_all = [&](std::vector<Ptr<vtkProp>>& props) {
    for (auto& prop : props) r.RemoveViewProp(prop);
    props.clear();
  };
  // An edit (a station, new predictions, another hour) changes only the field, the stations,
  // the target window and the title; everything else (grid lines and their labels, coastlines,
  // the training region, the colour bar) is kept with its rendered text while its inputs stay
  // the same: rebuilding it made each edit's two redraws a third slower.
  remove_all(v.scene_props);
  if (!s.values.defined() || s.values.dim() != 2 || s.latitudes.empty() || s.longitudes.empty()) {
    remove_all(v.frame_props);
    v.frame_key.reset();
    return;
  }
  FrameKey key{s.latitudes, s.longitudes, s.coastlines, s.training_region, m_three_d,
               s.palette,   s.low,        s.high,       s.colour_title};
  const bool new_frame = !v.frame_key || !(*v.frame_key == key);
  if (new_frame) {
    remove_all(v.frame_props);
    v.frame_key = std::move(key);
  }
  auto add = [&](std::vector<Ptr<vtkProp>>& group, Ptr<vtkProp> prop) {
    r.AddViewProp(prop);
    group.push_back(std::move(prop));
  };

  const int rows = static_cast<int>(s.values.size(0)), cols = static_cast<int>(s.values.size(1));
  const double lat_mid = 0.5 * (s.latitudes.front() + s.latitudes.back());
  v.x_scale = std::cos(lat_mid * M_PI / 180.0);
  const double across = std::max(std::abs(s.latitudes.front() - s.latitudes.back()),
                                 std::abs(s.longitudes.back() - s.longitudes.front()) * v.x_scale);
  v.relief = kReliefDegrees * std::sqrt(std::max(1.0, across / kReliefGridDegrees));
  const double range = std::max(s.high - s.low, 1e-9);
  auto height_of = [&](double value) {
    if (!m_three_d || !std::isfinite(value)) return 0.0;
    return (std::clamp(value, s.low, s.high) - s.low) / range * v.relief;
  };
  auto x_of = [&](double lon) { return lon * v.x_scale; };
  if (new_frame) v.table = palette_table(s.palette, s.low, s.high);

  // The field: one point per cell centre, quads between them, coloured by value.
  const auto values = s.values.to(torch::kFloat64).contiguous();
  const auto* data = values.data_ptr<double>();
  auto points = make<vtkPoints>();
  auto scalars = make<vtkDoubleArray>();
  scalars->SetName("value");
  for (int i = 0; i < rows; ++i) {
    for (int j = 0; j < cols; ++j) {
      const double value = data[i * cols + j];
      points->InsertNextPoint(x_of(s.longitudes[j]), s.latitudes[i], height_of(value));
      scalars->InsertNextValue(value);
    }
  }
  auto quads = make<vtkCellArray>();
  for (int i = 0; i + 1 < rows; ++i) {
    for (int j = 0; j + 1 < cols; ++j) {
      const vtkIdType quad[4] = {i * cols + j, i * cols + j + 1, (i + 1) * cols + j + 1,
                                 (i + 1) * cols + j};
      quads->InsertNextCell(4, quad);
    }
  }
  auto surface = make<vtkPolyData>();
  surface->SetPoints(points);
  surface->SetPolys(quads);
  surface->GetPointData()->SetScalars(scalars);
  auto surface_mapper = make<vtkPolyDataMapper>();
  surface_mapper->SetInputData(surface);
  surface_mapper->SetLookupTable(v.table);
  surface_mapper->SetScalarRange(s.low, std::max(s.high, s.low + 1e-9));
  surface_mapper->InterpolateScalarsBeforeMappingOn();
  auto surface_actor = make<vtkActor>();
  surface_actor->SetMapper(surface_mapper);
  if (!m_three_d) surface_actor->GetProperty()->LightingOff();
  add(v.scene_props, surface_actor);

  // Lines: coastlines, the training region, the target window.
  const double lift = m_three_d ? v.relief + 0.05 : 0.02;
  auto add_lines = [&](std::vector<Ptr<vtkProp>>& group,
                       const std::vector<std::vector<QPointF>>& lines, double red, double green,
                       double blue, double width, double z) {
    auto line_points = make<vtkPoints>();
    auto cells = make<vtkCellArray>();
    for (const auto& line : lines) {
      if (line.size() < 2) continue;
      cells->InsertNextCell(static_cast<vtkIdType>(line.size()));
      for (const auto& p : line) {
        cells->InsertCellPoint(line_points->InsertNextPoint(x_of(p.x()), p.y(), z));
      }
    }
    auto poly = make<vtkPolyData>();
    poly->SetPoints(line_points);
    poly->SetLines(cells);
    auto mapper = make<vtkPolyDataMapper>();
    mapper->SetInputData(poly);
    auto actor = make<vtkActor>();
    actor->SetMapper(mapper);
    actor->GetProperty()->SetColor(red, green, blue);
    actor->GetProperty()->SetLineWidth(static_cast<float>(width));
    actor->GetProperty()->LightingOff();
    add(group, actor);
  };
  const double dlat = rows > 1 ? std::abs(s.latitudes[1] - s.latitudes[0]) : 0.25;
  const double dlon = cols > 1 ? std::abs(s.longitudes[1] - s.longitudes[0]) : 0.25;
  auto cell_box = [&](const QRect& cells) {
    // Outline around the cells' edges (half a cell beyond their centres).
    const int r0 = std::clamp(cells.top(), 0, rows - 1),
              r1 = std::clamp(cells.bottom(), 0, rows - 1);
    const int c0 = std::clamp(cells.left(), 0, cols - 1),
              c1 = std::clamp(cells.right(), 0, cols - 1);
    const double north = s.latitudes[r0] + dlat / 2, south = s.latitudes[r1] - dlat / 2;
    const double west = s.longitudes[c0] - dlon / 2, east = s.longitudes[c1] + dlon / 2;
    return std::vector<QPointF>{
        {west, north}, {east, north}, {east, south}, {west, south}, {west, north}};
  };
  if (new_frame && s.coastlines) {
    // Only the parts over the grid: runs of points inside it.
    const double north = s.latitudes.front() + dlat / 2, south = s.latitudes.back() - dlat / 2;
    const double west = s.longitudes.front() - dlon / 2, east = s.longitudes.back() + dlon / 2;
    std::vector<std::vector<QPointF>> inside;
    for (const auto& line : *s.coastlines) {
      std::vector<QPointF> run;
      for (const auto& p : line) {
        if (p.x() >= west && p.x() <= east && p.y() >= south && p.y() <= north) {
          run.push_back(p);
        } else if (!run.empty()) {
          inside.push_back(std::move(run));
          run.clear();
        }
      }
      if (run.size() > 1) inside.push_back(std::move(run));
    }
    add_lines(v.frame_props, inside, 0.1, 0.1, 0.1, 1.5, m_three_d ? 0.0 : 0.01);
  }
  if (new_frame && !s.training_region.isNull())
    add_lines(v.frame_props, {cell_box(s.training_region)}, 0.0, 0.55, 0.2, 3, lift);
  if (!s.target_window.isNull())
    add_lines(v.scene_props, {cell_box(s.target_window)}, 0.0, 0.0, 0.0, 3, lift);

  // Stations: spheres at their cells (on the surface in 3-D).
  if (!s.stations.empty()) {
    auto centres = make<vtkPoints>();
    for (const auto& st : s.stations) {
      if (st.row < 0 || st.row >= rows || st.column < 0 || st.column >= cols) continue;
      centres->InsertNextPoint(x_of(s.longitudes[st.column]), s.latitudes[st.row],
                               (m_three_d ? height_of(st.value) : 0.0) + 0.05);
    }
    auto where = make<vtkPolyData>();
    where->SetPoints(centres);
    auto sphere = make<vtkSphereSource>();
    sphere->SetRadius(0.09);
    sphere->SetThetaResolution(16);
    sphere->SetPhiResolution(12);
    auto glyphs = make<vtkGlyph3D>();
    glyphs->SetInputData(where);
    glyphs->SetSourceConnection(sphere->GetOutputPort());
    glyphs->ScalingOff();
    auto mapper = make<vtkPolyDataMapper>();
    mapper->SetInputConnection(glyphs->GetOutputPort());
    mapper->ScalarVisibilityOff();
    auto actor = make<vtkActor>();
    actor->SetMapper(mapper);
    actor->GetProperty()->SetColor(0.05, 0.05, 0.05);
    actor->GetProperty()->SetSpecular(0.4);
    add(v.scene_props, actor);
  }

  // Proposed stations: rings in the proposing model's colour around their cells, each with its
  // rank, so that the order of a greedy placement reads off the map.
  for (const auto& p : s.proposals) {
    if (p.row < 0 || p.row >= rows || p.column < 0 || p.column >= cols) continue;
    const double x = x_of(s.longitudes[p.column]), y = s.latitudes[p.row];
    const double z = (m_three_d ? height_of(p.value) : 0.0) + 0.06;
    auto ring = make<vtkRegularPolygonSource>();
    ring->SetNumberOfSides(24);
    ring->SetRadius(0.11);
    ring->SetCenter(x, y, z);
    ring->GeneratePolygonOff();
    // A white ring under the coloured one: visible on every palette.
    for (const bool halo : {true, false}) {
      auto mapper = make<vtkPolyDataMapper>();
      mapper->SetInputConnection(ring->GetOutputPort());
      auto actor = make<vtkActor>();
      actor->SetMapper(mapper);
      if (halo) {
        actor->GetProperty()->SetColor(1.0, 1.0, 1.0);
      } else {
        actor->GetProperty()->SetColor(p.colour.redF(), p.colour.greenF(), p.colour.blueF());
      }
      actor->GetProperty()->SetLineWidth(halo ? 6.0f : 3.0f);
      add(v.scene_props, actor);
    }
    auto label = make<vtkTextActor>();
    label->SetInput(std::to_string(p.rank).c_str());
    label->GetPositionCoordinate()->SetCoordinateSystemToWorld();
    label->GetPositionCoordinate()->SetValue(x + 0.12, y + 0.08, z);
    auto* property = label->GetTextProperty();
    property->SetColor(p.colour.redF(), p.colour.greenF(), p.colour.blueF());
    property->SetFontSize(15);
    property->SetBold(true);
    property->SetBackgroundColor(1.0, 1.0, 1.0);
    property->SetBackgroundOpacity(0.8);
    add(v.scene_props, label);
  }

  double bounds[6];
  surface->GetBounds(bounds);
  const double lat_lo = s.latitudes.back() - dlat / 2, lat_hi = s.latitudes.front() + dlat / 2;
  const double lon_lo = s.longitudes.front() - dlon / 2, lon_hi = s.longitudes.back() + dlon / 2;
  if (new_frame) {
    // Grid lines every whole degree, labelled along the southern and western edges (text at
    // world positions keeps a fixed size on screen, in 2-D and 3-D alike).
    std::vector<std::vector<QPointF>> grid;
    auto add_label = [&](const QString& text, double lon, double lat, int justify_h,
                         int justify_v) {
      auto label = make<vtkTextActor>();
      label->SetInput(text.toUtf8().constData());
      label->GetPositionCoordinate()->SetCoordinateSystemToWorld();
      label->GetPositionCoordinate()->SetValue(x_of(lon), lat, 0.0);
      auto* property = label->GetTextProperty();
      property->SetColor(0.15, 0.15, 0.15);
      property->SetFontSize(13);
      property->SetJustification(justify_h);
      property->SetVerticalJustification(justify_v);
      add(v.frame_props, label);
    };
    // Lines every 1, 5, 10 or 30 degrees as the grid grows (the British Isles: every degree;
    // Europe: every 5; the globe: every 30, or its labels run into each other), counted as
    // integers (clang-analyzer-security.FloatLoopCounter).
    const double extent = std::max(lon_hi - lon_lo, lat_hi - lat_lo);
    const long step = extent <= 20.0 ? 1 : extent <= 60.0 ? 5 : extent <= 120.0 ? 10 : 30;
    // Every other longitude labelled where labels would touch (each degree; the whole globe).
    const long lon_label_every = step == 1 || lon_hi - lon_lo > 180.0 ? 2 : 1;
    auto first_multiple = [step](double value) {
      return static_cast<long>(std::ceil(value / double(step))) * step;
    };
    for (long degree = first_multiple(lon_lo); degree <= std::lround(std::floor(lon_hi));
         degree += step) {
      const auto lon = static_cast<double>(degree);
      grid.push_back({{lon, lat_lo}, {lon, lat_hi}});
      if ((degree / step) % lon_label_every != 0) continue;
      add_label(QString("%1°%2")
                    .arg(std::abs(lon))
                    .arg(lon < 0   ? "W"
                         : lon > 0 ? "E"
                                   : ""),
                lon, lat_lo - 0.12, VTK_TEXT_CENTERED, VTK_TEXT_TOP);
    }
    for (long degree = first_multiple(lat_lo); degree <= std::lround(std::floor(lat_hi));
         degree += step) {
      const auto lat = static_cast<double>(degree);
      grid.push_back({{lon_lo, lat}, {lon_hi, lat}});
      add_label(QString("%1°%2").arg(std::abs(lat)).arg(lat < 0 ? "S" : "N"), lon_lo - 0.12, lat,
                VTK_TEXT_RIGHT, VTK_TEXT_CENTERED);
    }
    add_lines(v.frame_props, grid, 0.45, 0.45, 0.45, 1, m_three_d ? 0.0 : 0.005);
    add_lines(v.frame_props,
              {{{lon_lo, lat_lo},
                {lon_hi, lat_lo},
                {lon_hi, lat_hi},
                {lon_lo, lat_hi},
                {lon_lo, lat_lo}}},
              0.2, 0.2, 0.2, 1.5, m_three_d ? 0.0 : 0.005);

    auto bar = make<vtkScalarBarActor>();
    bar->SetLookupTable(v.table);
    bar->SetTitle(s.colour_title.toUtf8().constData());
    bar->SetNumberOfLabels(5);
    bar->SetLabelFormat("%.1f");
    bar->SetMaximumWidthInPixels(90);
    bar->SetPosition(0.88, 0.12);
    bar->SetWidth(0.1);
    bar->SetHeight(0.76);
    bar->UnconstrainedFontSizeOn();
    bar->GetTitleTextProperty()->SetColor(0.1, 0.1, 0.1);
    bar->GetTitleTextProperty()->SetFontSize(14);
    bar->GetLabelTextProperty()->SetColor(0.1, 0.1, 0.1);
    bar->GetLabelTextProperty()->SetFontSize(12);
    bar->GetLabelTextProperty()->ShadowOff();
    bar->GetTitleTextProperty()->ShadowOff();
    // VTK's defaults set the labels in italics and the title touching the top label.
    bar->GetLabelTextProperty()->ItalicOff();
    bar->GetTitleTextProperty()->ItalicOff();
    bar->SetVerticalTitleSeparation(10);
    add(v.frame_props, bar);
  }
  bounds[4] = 0.0;
  bounds[5] = m_three_d ? v.relief : 0.0;

  // One title actor for the view's life: its text is rendered again only when it changes.
  if (!v.title) {
    v.title = make<vtkTextActor>();
    v.title->GetTextProperty()->SetColor(0.05, 0.05, 0.05);
    v.title->GetTextProperty()->SetFontSize(15);
    v.title->GetTextProperty()->BoldOn();
    v.title->GetPositionCoordinate()->SetCoordinateSystemToNormalizedViewport();
    v.title->GetPositionCoordinate()->SetValue(0.01, 0.95);
  }
  const QByteArray title = s.title.toUtf8();
  if (v.title->GetInput() == nullptr || title != v.title->GetInput())
    v.title->SetInput(title.constData());
  add(v.scene_props, v.title);

  // Camera: straight down in 2-D (fitted to the map, leaving room for the colour bar); an
  // oblique view in 3-D that the user can then rotate and zoom.
  auto* camera = r.GetActiveCamera();
  const double cx = 0.5 * (bounds[0] + bounds[1]), cy = 0.5 * (bounds[2] + bounds[3]);
  if (!m_three_d) {
    camera->ParallelProjectionOn();
    // Centred vertically: the margin above holds the title, the one below the longitudes.
    const double fx = cx + 0.05 * (bounds[1] - bounds[0]);
    camera->SetFocalPoint(fx, cy, 0.0);
    camera->SetPosition(fx, cy, 50.0);
    camera->SetViewUp(0.0, 1.0, 0.0);
    const double aspect = std::max(0.2, double(width()) / std::max(1, height()));
    const double half_height = 0.5 * (bounds[3] - bounds[2]);
    const double half_width = 0.5 * (bounds[1] - bounds[0]) * 1.2;
    camera->SetParallelScale(std::max(half_height, half_width / aspect) * 1.22);
    r.ResetCameraClippingRange();
  } else if (!v.camera_set_for_3d) {
    camera->ParallelProjectionOff();
    // The British Isles view's angle on any grid (the distance is fitted by ResetCamera).
    const double scale = v.relief / kReliefDegrees;
    camera->SetFocalPoint(cx, cy, 0.5 * v.relief);
    camera->SetPosition(cx, cy - 14.0 * scale, 11.0 * scale);
    camera->SetViewUp(0.0, 0.4, 1.0);
    r.ResetCamera();
    camera->Dolly(1.25);
    r.ResetCameraClippingRange();
    v.camera_set_for_3d = true;
  } else {
    r.ResetCameraClippingRange();
  }
}

QPoint MapView::cellAt(const QPointF& position) const {
  const auto& s = m_scene;
  if (m_three_d || !s.values.defined() || s.latitudes.size() < 2 || s.longitudes.size() < 2)
    return {-1, -1};
  auto* camera = m_vtk->renderer->GetActiveCamera();
  double focal[3];
  camera->GetFocalPoint(focal);
  const double scale = camera->GetParallelScale();
  const double aspect = double(width()) / std::max(1, height());
  const double x = focal[0] + (position.x() / std::max(1, width()) - 0.5) * 2.0 * scale * aspect;
  const double y = focal[1] + (0.5 - position.y() / std::max(1, height())) * 2.0 * scale;
  const double lon = x / m_vtk->x_scale;
  const double dlat = s.latitudes[0] - s.latitudes[1], dlon = s.longitudes[1] - s.longitudes[0];
  const int row = static_cast<int>(std::lround((s.latitudes[0] - y) / dlat));
  const int col = static_cast<int>(std::lround((lon - s.longitudes[0]) / dlon));
  if (row < 0 || col < 0 || row >= int(s.latitudes.size()) || col >= int(s.longitudes.size()))
    return {-1, -1};
  return {col, row};
}

namespace {
void forward(vtkGenericRenderWindowInteractor* interactor, const QWidget* widget,
             const QPointF& position, Qt::KeyboardModifiers modifiers) {
  const double ratio = widget->devicePixelRatioF();
  interactor->SetEventInformationFlipY(
      static_cast<int>(position.x() * ratio), static_cast<int>(position.y() * ratio),
      (modifiers & Qt::ControlModifier) ? 1 : 0, (modifiers & Qt::ShiftModifier) ? 1 : 0);
}
}  // namespace

void MapView::mousePressEvent(QMouseEvent* event) {
  if (m_three_d) {
    if (!m_vtk->initialised) return;
    forward(m_vtk->interactor, this, event->position(), event->modifiers());
    const auto id = event->button() == Qt::LeftButton    ? vtkCommand::LeftButtonPressEvent
                    : event->button() == Qt::RightButton ? vtkCommand::RightButtonPressEvent
                                                         : vtkCommand::MiddleButtonPressEvent;
    m_vtk->interactor->InvokeEvent(id, nullptr);
    renderLater();
    return;
  }
  if (event->button() != Qt::LeftButton) return;
  m_dragging = true;
  m_last_cell = cellAt(event->position());
  Q_EMIT cellPressed(m_last_cell);
}

void MapView::mouseMoveEvent(QMouseEvent* event) {
  if (m_three_d) {
    if (!m_vtk->initialised) return;
    forward(m_vtk->interactor, this, event->position(), event->modifiers());
    m_vtk->interactor->InvokeEvent(vtkCommand::MouseMoveEvent, nullptr);
    if (event->buttons() != Qt::NoButton) renderLater();
    return;
  }
  const auto cell = cellAt(event->position());
  Q_EMIT hovered(cell);
  if (m_dragging && cell != m_last_cell) {
    m_last_cell = cell;
    Q_EMIT cellDragged(cell);
  }
}

void MapView::mouseReleaseEvent(QMouseEvent* event) {
  if (m_three_d) {
    if (!m_vtk->initialised) return;
    forward(m_vtk->interactor, this, event->position(), event->modifiers());
    const auto id = event->button() == Qt::LeftButton    ? vtkCommand::LeftButtonReleaseEvent
                    : event->button() == Qt::RightButton ? vtkCommand::RightButtonReleaseEvent
                                                         : vtkCommand::MiddleButtonReleaseEvent;
    m_vtk->interactor->InvokeEvent(id, nullptr);
    renderLater();
    return;
  }
  if (event->button() != Qt::LeftButton || !m_dragging) return;
  m_dragging = false;
  Q_EMIT released(cellAt(event->position()));
}

void MapView::wheelEvent(QWheelEvent* event) {
  if (!m_three_d || !m_vtk->initialised) return;
  forward(m_vtk->interactor, this, event->position(), event->modifiers());
  m_vtk->interactor->InvokeEvent(event->angleDelta().y() > 0 ? vtkCommand::MouseWheelForwardEvent
                                                             : vtkCommand::MouseWheelBackwardEvent,
                                 nullptr);
  renderLater();
}

}  // namespace npe::widgets
