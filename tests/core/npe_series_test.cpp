// The user's own series: date-times, the series file reader, and the `series` task family
// (windows, splits, the standardisation that maps every figure back to the data's units).

#include <cmath>
#include <fstream>
#include <set>

#include "npe/data/date_time.h"
#include "npe/data/series_file.h"
#include "npe/data/series_tasks.h"
#include "npe/data/task_registry.h"
#include "npe/errors.h"
#include "npe/models/model_registry.h"
#include "test_support.h"

namespace npe {
namespace {

TEST(DateTime, ReadsIsoAndSpreadsheetForms) {
  const double day = 86400.0;
  const double base = 14610.0 * day;  // 2010-01-01 00:00 UTC
  struct Case {
    const char* text;
    double seconds;
    const char* form;
  };
  for (const auto& c : std::vector<Case>{
           {"2010-01-01", base, "YYYY-MM-DD"},
           {"2010/01/01 00:00", base, "YYYY/MM/DD hh:mm"},
           {"2010-01-01 06:30:15", base + 6 * 3600 + 30 * 60 + 15, "YYYY-MM-DD hh:mm:ss"},
           {"2010-01-01T06:30:15.5Z", base + 6 * 3600 + 30 * 60 + 15.5, "YYYY-MM-DDThh:mm:ss.fZ"},
           {"2010-01-01T02:00+02:00", base, "YYYY-MM-DDThh:mm+hh:mm"},
           {"2010-01-01T00:00-0130", base + 5400, "YYYY-MM-DDThh:mm-hhmm"},
           {"2010/1/2 0:00", base + day, "YYYY/MM/DD hh:mm"},
           {"2012-02-29", base + (365 + 365 + 31 + 28) * day, "YYYY-MM-DD"},
           {"1969-12-31 23:00", -3600.0, "YYYY-MM-DD hh:mm"}}) {
    const auto parsed = parse_date_time(c.text);
    ASSERT_TRUE(parsed) << c.text;
    EXPECT_DOUBLE_EQ(parsed->seconds, c.seconds) << c.text;
    EXPECT_EQ(parsed->form, c.form) << c.text;
  }
  // Zero padding does not change the form: one file may write 0:00 and 10:00.
  EXPECT_EQ(parse_date_time("2017/6/26 0:00")->form, parse_date_time("2017/12/26 10:00")->form);
}

TEST(DateTime, RefusesWhatIsNotADate) {
  for (const char* text :
       {"", "12.5", "2010", "20100101", "2010-13-01", "2010-04-31", "2011-02-29",
        "2010-01-01 25:00", "2010-01-01 12:60", "2010-01-01 1", "2010-01-01 00:00 extra",
        "2010-01/01", "0999-01-01", "yesterday", "2010-01-01T00:00+25:00", "2010-01-01 00:00:"}) {
    EXPECT_FALSE(parse_date_time(text)) << text;
  }
}

TEST(DateTime, FormatsWhatItParses) {
  for (const char* text : {"2016-07-01 00:00", "1999-12-31 23:59", "2024-02-29 12:00",
                           "1970-01-01 00:00", "1901-03-04 05:06"}) {
    EXPECT_EQ(format_date_time(parse_date_time(text)->seconds), text);
  }
  EXPECT_EQ(format_date_time(parse_date_time("2016-07-01 00:00:01.25")->seconds),
            "2016-07-01 00:00:01.250");
}

class SeriesFile : public testing::TemporaryFolderTest {
 protected:
  std::filesystem::path write(const std::string& name, const std::string& text) {
    const auto path = dir / name;
    std::ofstream(path, std::ios::binary) << text;
    return path;
  }
  // An hourly series of `hours` rows from 2010-01-01: a daily cycle plus a trend, in `units`.
  std::filesystem::path hourly(const std::string& name, int hours, double offset = 0.0) {
    std::string text = "date,temp\n";
    char line[64];
    for (int h = 0; h < hours; ++h) {
      const double t = 10.0 + offset + 5.0 * std::sin(2.0 * M_PI * h / 24.0) + 0.001 * h;
      std::snprintf(line, sizeof line, "%s,%.4f\n",
                    format_date_time(parse_date_time("2010-01-01")->seconds + h * 3600.0).c_str(),
                    t);
      text += line;
    }
    return write(name, text);
  }
  // The message of the DataError or ConfigError that `read` throws, or "" when it throws none.
  template <typename F>
  static std::string error_of(F&& read) {
    try {
      read();
    } catch (const DataError& e) {
      return e.what();
    } catch (const ConfigError& e) {
      return e.what();
    }
    return "";
  }
};

TEST_F(SeriesFile, ReadsDatesAsHoursSinceTheFirstRow) {
  const auto path = write("t.csv",
                          "date,temp\n2010/01/01 00:00,39.4\n2010/01/01 01:00,39.9\n"
                          "2010/01/01 03:00,41\n");
  const auto data = read_series_file(path);
  EXPECT_TRUE(data.x_is_time);
  EXPECT_EQ(data.x_name, "date");
  ASSERT_EQ(data.y_names, std::vector<std::string>{"temp"});
  ASSERT_EQ(data.series.size(), 1u);
  EXPECT_EQ(data.series[0].x, (std::vector<double>{0.0, 1.0, 3.0}));
  EXPECT_FLOAT_EQ(data.series[0].y[2], 41.0f);
  EXPECT_DOUBLE_EQ(data.spacing, 1.0);  // the median step
  EXPECT_EQ(data.describe_x(3.0), "2010-01-01 03:00");
  EXPECT_NE(data.describe().find("hours since 2010-01-01 00:00"), std::string::npos);
}

TEST_F(SeriesFile, ReadsTheLayoutsOfOtherTools) {
  // A byte-order mark and quotes (spreadsheets), semicolons, tabs, and whitespace-separated
  // files whose date-times contain the separator.
  for (const auto& text :
       {std::string("\xEF\xBB\xBF\"date\",\"temp\"\n\"2010-01-01 00:00\",\"1.5\"\n"
                    "\"2010-01-01 01:00\",\"2.5\"\n"),
        std::string("date;temp\n2010-01-01 00:00;1.5\n2010-01-01 01:00;2.5\n"),
        std::string("# logger 7\ndate\ttemp\n2010-01-01 00:00\t1.5\n\n2010-01-01 01:00\t2.5\n"),
        std::string("date temp\n2010-01-01 00:00   1.5\n2010-01-01 01:00 2.5\n")}) {
    const auto data = read_series_file(write("layout.csv", text));
    ASSERT_EQ(data.series.size(), 1u) << text;
    EXPECT_EQ(data.series[0].x, (std::vector<double>{0.0, 1.0})) << text;
    EXPECT_EQ(data.series[0].y, (std::vector<float>{1.5f, 2.5f})) << text;
    EXPECT_EQ(data.y_names, std::vector<std::string>{"temp"}) << text;
  }
}

// What other tools write: a date and a time of day in columns of their own, a first row without
// an x, seconds and fractions that come and go (Python's isoformat(), R's midnight without a
// time), and runs of spaces between a whitespace file's date and time.
TEST_F(SeriesFile, ReadsDatesAsOtherToolsWriteThem) {
  for (const auto& text :
       {std::string("date,time,temp\n2010-01-01,00:00,1.5\n2010-01-01,01:00,2.5\n"),
        std::string("date,temp\nNA,0.5\n2010-01-01 00:00,1.5\n2010-01-01 01:00,2.5\n"),
        std::string("date,temp\n2010-01-01,1.5\n2010-01-01 01:00,2.5\n"),
        std::string("date,temp\n2010-01-01T00:00:00,1.5\n2010-01-01T01:00:00.000,2.5\n"),
        std::string("date  temp\n2010-01-01   00:00  1.5\n2010-01-01\t01:00 2.5\n")}) {
    const auto data = read_series_file(write("tools.csv", text));
    ASSERT_TRUE(data.x_is_time) << text;
    ASSERT_EQ(data.series.size(), 1u) << text;
    EXPECT_EQ(data.series[0].x, (std::vector<double>{0.0, 1.0})) << text;
    EXPECT_EQ(data.series[0].y, (std::vector<float>{1.5f, 2.5f})) << text;
    EXPECT_EQ(data.y_names, std::vector<std::string>{"temp"}) << text;
  }
}

TEST_F(SeriesFile, ReadsColumnsByNameSeveralOutputsAndSeries) {
  const auto path = write("m.csv",
                          "station,t,pressure,temp,note\n"
                          "b,2,1000,11,x\na,0,1001,10,y\na,1,NA,12,z\nb,1,1002,13,w\n"
                          "a,3,1003,14,v\n");
  SeriesColumns columns;
  columns.x = "T";  // case-insensitive
  columns.y = {"temp", "pressure"};
  columns.id = "station";
  const auto data = read_series_file(path, columns);
  EXPECT_FALSE(data.x_is_time);
  EXPECT_EQ(data.dim_y(), 2);
  EXPECT_EQ(data.rows_missing, 1);  // a,1 has no pressure
  ASSERT_EQ(data.series.size(), 2u);
  EXPECT_EQ(data.series[0].id, "b");  // in order of first appearance
  // Rows out of order are sorted by x, each with its own outputs.
  EXPECT_EQ(data.series[0].x, (std::vector<double>{1.0, 2.0}));
  EXPECT_EQ(data.series[0].y, (std::vector<float>{13, 1002, 11, 1000}));
  EXPECT_EQ(data.series[1].x, (std::vector<double>{0.0, 3.0}));
  EXPECT_FALSE(data.notes.empty());
  // Without named y columns: every numeric column but x and the id.
  SeriesColumns by_id;
  by_id.x = "t";
  by_id.id = "station";
  EXPECT_EQ(read_series_file(path, by_id).y_names, (std::vector<std::string>{"pressure", "temp"}));
}

TEST_F(SeriesFile, BadFilesSayWhatAndWhere) {
  struct Case {
    std::string text;
    std::string expected;  // part of the message
  };
  for (const auto& c : std::vector<Case>{
           {"", "empty"},
           {"date\n2010-01-01\n", "one column only"},
           {"date,temp\n", "no data row"},
           {"date,temp\n2010-01-01,NA\n", "no data row"},
           {"date,name\n2010-01-01,abc\n", "no column besides x holds a number"},
           {"date,temp\n2010-01-01 00:00,1\n2010-01-01 01:00,2\n01/02/2010 02:00,3\n", "line 4"},
           {"date,temp\n2010-01-01 00:00,1\n2010/01/01 01:00,2\n", "line 3: the date-time"},
           {"date,temp\n2010-01-01,1\n2010-02-30,2\n", "line 3"},
           {"date,temp\nmonday,1\n", "line 2: x ('date') is 'monday'"},
           {"x,y\n1,2\n2,abc\n", "line 3: 'y' is 'abc', not a number"},
           {"x,y\n1,2\n2,inf\n", "line 3: 'y' is infinite"},
           {"x,y\n1,2\n-inf,3\n", "line 3: x is infinite"},
           {"x,y\n1,2\n2,3,4\n", "line 3: 3 fields, the header (line 1) has 2"},
           {"x,y\n1,2\n2,1e39\n", "beyond single precision"},
       }) {
    const auto path = write("bad.csv", c.text);
    const auto message = error_of([&] { read_series_file(path); });
    EXPECT_NE(message.find(c.expected), std::string::npos) << "file:\n"
                                                           << c.text << "\nmessage: " << message;
    if (!message.empty()) {
      EXPECT_NE(message.find("bad.csv"), std::string::npos) << message;
    }
  }
  SeriesColumns columns;
  columns.y = {"rain"};
  const auto named = error_of([&] { read_series_file(write("c.csv", "x,y\n1,2\n"), columns); });
  EXPECT_NE(named.find("no column 'rain' for y (its columns: x, y)"), std::string::npos) << named;
  EXPECT_NE(error_of([&] { read_series_file(dir / "missing.csv"); }).find("cannot open"),
            std::string::npos);
  EXPECT_NE(error_of([&] { read_series_file(dir); }), "");
}

SeriesTaskConfig config_for(const std::filesystem::path& path) {
  SeriesTaskConfig c;
  c.data = path;
  return c;
}

TEST_F(SeriesFile, TasksAreStandardisedWindowsOfTheSeriesInTheirParts) {
  // y = the row's hour + 0.5: every point of a task says which row it came from.
  std::string text = "time,level\n";
  for (int h = 0; h < 2000; ++h) {
    text += format_date_time(3600.0 * h) + "," + std::to_string(h) + ".5\n";
  }
  const auto path = write("h.csv", text);
  SeriesTaskSource source(config_for(path));
  const auto& c = source.config();
  // The automatic settings are resolved and recorded.
  EXPECT_DOUBLE_EQ(c.window, 160.0);
  EXPECT_EQ(c.num_points, 128);
  EXPECT_EQ(c.max_num_context, 64);
  EXPECT_DOUBLE_EQ(c.x_scale, 40.0);
  ASSERT_EQ(c.y_mean.size(), 1u);
  // Tail split: 1400 training rows, 200 validation, 400 test, in x order.
  EXPECT_EQ(source.segments(Split::Train)[0].end, 1400);
  EXPECT_EQ(source.segments(Split::Validation)[0].begin, 1400);
  EXPECT_EQ(source.segments(Split::Test)[0].begin, 1600);
  // The statistics are the training rows' alone.
  const auto& rows = source.data().series[0].y;
  double mean = 0.0;
  for (int i = 0; i < 1400; ++i) mean += rows[static_cast<size_t>(i)];
  EXPECT_NEAR(c.y_mean[0], mean / 1400.0, 1e-9);

  for (const auto split : {Split::Train, Split::Validation, Split::Test}) {
    const auto batch = source.sample(8, 3, {}, split);
    const auto& t = batch.task;
    EXPECT_EQ(t.num_context() + t.num_targets(), 128 - 64 + t.num_context());
    const auto x = torch::cat({t.xc, t.xt}, 1).to(torch::kFloat64);
    const auto y = torch::cat({t.yc, t.yt}, 1).to(torch::kFloat64);
    // A window lies on [-2, 2) and its points are the file's rows: mapped back, x are whole
    // hours of the split's part and y the file's values there.
    EXPECT_GE(x.min().item<double>(), -2.0);
    EXPECT_LT(x.max().item<double>(), 2.0);
    const auto& seg = source.segments(split)[0];
    for (int64_t b = 0; b < 8; ++b) {
      const double first_x = x[b].min().item<double>();
      for (int64_t i = 0; i < x.size(1); ++i) {
        const double hour_offset = (x[b][i][0].item<double>() - first_x) * c.x_scale;
        EXPECT_NEAR(hour_offset, std::round(hour_offset), 1e-9);
      }
      // Each point's row, from its y: in the split's part, and x and y from the same row.
      const double first_row = source.from_model_y(y[b].min().item<double>(), 0) - 0.5;
      for (int64_t i = 0; i < x.size(1); ++i) {
        const double row = source.from_model_y(y[b][i][0].item<double>(), 0) - 0.5;
        EXPECT_NEAR(row, std::round(row), 2e-3);
        EXPECT_GE(row, seg.begin - 0.01);
        EXPECT_LT(row, seg.end);
        EXPECT_NEAR((x[b][i][0].item<double>() - first_x) * c.x_scale, row - first_row, 2e-3);
      }
    }
  }
}

TEST_F(SeriesFile, TasksAreReproducibleAndTranslate) {
  SeriesTaskSource source(config_for(hourly("h.csv", 1000)));
  const auto a = source.sample(4, 11, {}, Split::Test).task;
  const auto b = source.sample(4, 11, {}, Split::Test).task;
  const auto shifted = source.sample(4, 11, {7.5}, Split::Test).task;
  const auto other = source.sample(4, 12, {}, Split::Test).task;
  EXPECT_TRUE(torch::equal(a.xc, b.xc) && torch::equal(a.yt, b.yt));
  EXPECT_TRUE(torch::allclose(shifted.xc, a.xc + 7.5) && torch::equal(shifted.yc, a.yc));
  EXPECT_FALSE(other.xc.sizes() == a.xc.sizes() && torch::equal(other.xc, a.xc));
  // The recorded configuration rebuilds the same tasks (what a checkpoint does).
  const auto rebuilt = task_source_from_json(source.to_json());
  EXPECT_TRUE(torch::equal(rebuilt->sample(4, 11, {}, Split::Test).task.yt, a.yt));
  EXPECT_DOUBLE_EQ(source.output_log_scale(), std::log(source.config().y_std[0]));
}

// The windows the 1-D tab shows: rows of one split's part, from a start row to before
// start + window, the first windows in file order; one that does not exist is an error.
TEST_F(SeriesFile, AWindowIsTheRowsOfItsSplitWithinTheWindowLength) {
  SeriesTaskSource source(config_for(hourly("h.csv", 1000)));
  const auto& c = source.config();
  const auto& x = source.data().series[0].x;
  for (const auto split : {Split::Train, Split::Validation, Split::Test}) {
    const auto& part = source.segments(split)[0];
    ASSERT_GT(source.num_windows(split), 2);
    for (const int64_t index : {int64_t{0}, int64_t{1}, source.num_windows(split) - 1}) {
      const auto w = source.window(split, index);
      EXPECT_EQ(w.begin, part.begin + index);
      EXPECT_DOUBLE_EQ(w.start, x[static_cast<size_t>(w.begin)]);
      EXPECT_GE(w.end - w.begin, c.num_points);
      EXPECT_LE(w.end, part.end);
      EXPECT_LT(x[static_cast<size_t>(w.end - 1)], w.start + c.window);
      if (w.end < part.end) EXPECT_GE(x[static_cast<size_t>(w.end)], w.start + c.window);
    }
  }
  NPE_EXPECT_THROW_WITH(source.window(Split::Test, source.num_windows(Split::Test)), ConfigError,
                        "does not exist");
  EXPECT_THROW(source.window(Split::Test, -1), ConfigError);
}

TEST_F(SeriesFile, AnotherFileIsReadWithTheTrainingStandardisation) {
  SeriesTaskSource trained(config_for(hourly("train.csv", 1000)));
  auto json = trained.to_json();
  json["data"] = hourly("other.csv", 400, /*offset=*/30.0).string();
  json["whole_file"] = true;
  const auto other = task_source_from_json(json);
  const auto& c = dynamic_cast<const SeriesTaskSource&>(*other).config();
  EXPECT_EQ(c.y_mean, trained.config().y_mean);
  EXPECT_EQ(c.window, trained.config().window);
  // All 400 rows are test data; 30 degrees warmer is 30 / σ standard deviations higher.
  EXPECT_EQ(dynamic_cast<const SeriesTaskSource&>(*other).segments(Split::Test)[0].end, 400);
  const auto y = other->sample(16, 0, {}, Split::Test).task.yc;
  EXPECT_GT(y.mean().item<double>(), 20.0 / trained.config().y_std[0]);
  // Read whole without a model (a baseline on another file): its own statistics, any x.
  SeriesTaskConfig whole = config_for(hourly("plain.csv", 400));
  whole.whole_file = true;
  SeriesTaskSource baseline_view(whole);
  EXPECT_TRUE(baseline_view.config().x_is_time);
  EXPECT_NE(baseline_view.config().y_mean, trained.config().y_mean);
  // A model trained on numbers does not read date-times.
  auto numbers = json;
  numbers["x_is_time"] = false;
  EXPECT_THROW(task_source_from_json(numbers), DataError);
}

TEST_F(SeriesFile, SeriesSplitHoldsOutWholeSeries) {
  std::string text = "id,x,y\n";
  for (int s = 0; s < 10; ++s) {
    for (int i = 0; i < 300; ++i) {
      text += "s" + std::to_string(s) + "," + std::to_string(i) + "," +
              std::to_string(s * 1000 + i) + "\n";
    }
  }
  auto c = config_for(write("many.csv", text));
  c.columns.id = "id";
  c.columns.x = "x";
  c.split = SeriesSplit::Series;
  SeriesTaskSource source(c);
  std::set<size_t> train, test;
  for (const auto& s : source.segments(Split::Train)) train.insert(s.series);
  for (const auto& s : source.segments(Split::Test)) test.insert(s.series);
  EXPECT_EQ(train.size(), 7u);
  EXPECT_EQ(test.size(), 2u);
  for (auto s : test) EXPECT_EQ(train.count(s), 0u);
  // Test tasks' outputs are the test series' values (s8, s9: 8000 and more).
  const auto y = source.sample(4, 0, {}, Split::Test).task.yc;
  EXPECT_GE(source.from_model_y(y.min().item<double>(), 0), 7999.0);

  auto two = config_for(write("two.csv", "id,x,y\na,0,1\na,1,2\nb,0,1\nb,1,2\n"));
  two.columns.id = "id";
  two.columns.x = "x";
  two.split = SeriesSplit::Series;
  EXPECT_NE(error_of([&] { SeriesTaskSource{two}; }).find("too few"), std::string::npos);
}

TEST_F(SeriesFile, WindowsThatCannotBeFilledAreRefusedInWords) {
  // A series shorter than the window asked for.
  auto c = config_for(hourly("short.csv", 100));
  c.window = 500.0;
  auto message = error_of([&] { SeriesTaskSource{c}; });
  EXPECT_NE(message.find("no window of 500 h"), std::string::npos) << message;
  // A window with fewer than two points.
  c.window = 1.0;
  message = error_of([&] { SeriesTaskSource{c}; });
  EXPECT_NE(message.find("at least two points"), std::string::npos) << message;
  // Settings that contradict each other, and a task without a file.
  c.window = 20.0;
  c.num_points = 10;
  c.max_num_context = 10;
  EXPECT_THROW(SeriesTaskSource{c}, ConfigError);
  EXPECT_THROW(make_task_source("series"), ConfigError);
  // A short series keeps the automatic window within its training part.
  SeriesTaskSource fits(config_for(hourly("fits.csv", 100)));
  EXPECT_LE(fits.config().window, 71.0);
  EXPECT_GT(fits.num_windows(Split::Test), 0);
}

TEST_F(SeriesFile, TaskOptionsNameColumnsAsOnTheCommandLine) {
  std::string text = "when,a,b,c\n";
  for (int i = 0; i < 200; ++i) {
    text += std::to_string(i) + "," + std::to_string(i) + ",0," + std::to_string(-i) + "\n";
  }
  // y as one text of names separated by commas, as --task-option y=c,a gives it.
  const auto source = make_task_source(
      "series", {{"data", write("cols.csv", text).string()}, {"y", "c, a"}, {"window", 10.0}});
  ASSERT_EQ(source->dim_y(), 2);
  const auto& series = dynamic_cast<const SeriesTaskSource&>(*source);
  EXPECT_EQ(series.data().y_names, (std::vector<std::string>{"c", "a"}));
  EXPECT_EQ(series.config().num_points, 8);  // 80 % of the 10 rows a window holds
  const auto t = source->sample(2, 0).task;
  // Column c is -a: the standardised outputs mirror each other.
  EXPECT_TRUE(torch::allclose(t.yc.select(2, 0), -t.yc.select(2, 1), 1e-5, 1e-5));
}

// What npe predict and the 1-D tab do with a series model: the user's points in the data's
// units become the model's standardised task, and its prediction maps back. A prediction in the
// data's units is the model's standardised one mapped back; a translation-equivariant model's
// does not depend on where its window is centred, a TNP's does.
TEST_F(SeriesFile, PredictionsInTheDataUnitsAreTheModelsMappedBack) {
  SeriesTaskSource source(config_for(hourly("h.csv", 1000)));
  const auto& c = source.config();
  const auto& series = source.data().series[0];
  std::vector<double> cx(series.x.begin() + 100, series.x.begin() + 140);
  std::vector<float> cy(series.y.begin() + 100, series.y.begin() + 140);
  std::vector<double> tx(series.x.begin() + 140, series.x.begin() + 150);
  const auto task = series_task(c, cx, cy, tx, 120.0);
  ASSERT_EQ(task.yc.size(1), 40);
  for (int64_t i = 0; i < 40; i += 13) {
    EXPECT_NEAR(task.yc[0][i][0].item<double>(), (cy[size_t(i)] - c.y_mean[0]) / c.y_std[0], 1e-5);
    EXPECT_NEAR(task.xc[0][i][0].item<double>(), (cx[size_t(i)] - 120.0) / c.x_scale, 1e-12);
  }
  torch::NoGradGuard no_grad;
  for (const char* kind : {"tetnp", "tnp"}) {
    torch::manual_seed(0);
    auto model = make_model(testing::tiny_config(kind, 1, 1));
    model->eval();
    const auto standardised = model->predict(task);
    const auto data = series_prediction_in_data_units(c, standardised);
    EXPECT_TRUE(torch::allclose(data.mean, standardised.mean * c.y_std[0] + c.y_mean[0]));
    EXPECT_TRUE(torch::allclose(data.stddev, standardised.stddev * c.y_std[0]));
    // Around 10 degrees, in the data's units.
    EXPECT_LT((data.mean - 10.0).abs().max().item<double>(), 30.0);
    const auto elsewhere =
        series_prediction_in_data_units(c, model->predict(series_task(c, cx, cy, tx, 150.0)));
    const double moved = (elsewhere.mean - data.mean).abs().max().item<double>();
    if (std::string(kind) == "tetnp") {
      EXPECT_LT(moved, 1e-3) << kind;
    } else {
      EXPECT_GT(moved, 1e-3) << kind;
    }
  }
  EXPECT_THROW(series_task(c, cx, {1.0f}, tx, 0.0), InvalidInputError);
}

}  // namespace
}  // namespace npe
