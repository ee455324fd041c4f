// Reading the user's own 1-D points from delimited text files.

#include <filesystem>
#include <fstream>

#include "npe/data/point_table.h"
#include "test_support.h"

namespace npe {
namespace {
namespace fs = std::filesystem;

class PointTableFile : public ::testing::Test {
 protected:
  fs::path write(const std::string& name, const std::string& text) {
    auto path = fs::temp_directory_path() / ("npe-points-" + std::to_string(::getpid()) + name);
    std::ofstream(path) << text;
    paths.push_back(path);
    return path;
  }
  void TearDown() override {
    for (const auto& p : paths) fs::remove(p);
  }
  std::vector<fs::path> paths;
};

TEST_F(PointTableFile, ReadsCommaTabAndWhitespaceFiles) {
  for (const auto& [name, text] : std::vector<std::pair<std::string, std::string>>{
           {"a.csv", "0.5,1.5\n-1,2e-1\n"},
           {"b.tsv", "0.5\t1.5\n-1\t0.2\n"},
           {"c.txt", "# comment\n  0.5   1.5\n\n-1 0.2\n"}}) {
    auto table = read_point_table(write(name, text));
    auto points = table.points(0, 1);
    ASSERT_EQ(points.size(), 2u) << name;
    EXPECT_DOUBLE_EQ(points[0].first, 0.5);
    EXPECT_DOUBLE_EQ(points[1].second, 0.2);
    EXPECT_EQ(table.columns.front(), "column 1");
  }
}

TEST_F(PointTableFile, HeaderNamesTheColumns) {
  auto table = read_point_table(write("h.csv", "time,y,x\n1,2,3\n4,5,6\n"));
  EXPECT_EQ(table.columns, (std::vector<std::string>{"time", "y", "x"}));
  EXPECT_EQ(default_xy_columns(table), std::make_pair(2, 1));
  auto points = table.points(2, 1);
  EXPECT_DOUBLE_EQ(points[1].first, 6.0);
  EXPECT_DOUBLE_EQ(points[1].second, 5.0);
  auto unnamed = read_point_table(write("u.csv", "a,b,c\n1,2,3\n"));
  EXPECT_EQ(default_xy_columns(unnamed), std::make_pair(0, 1));
}

TEST_F(PointTableFile, BadRowsAreReportedWithLineNumbersAndNanRowsCounted) {
  auto table = read_point_table(write("bad.csv", "x,y\n1,2\n3\nfour,5\n6,nan\n7,8\n"));
  ASSERT_EQ(table.warnings.size(), 2u);
  EXPECT_NE(table.warnings[0].find("line 3: 1 fields, expected 2"), std::string::npos);
  EXPECT_NE(table.warnings[1].find("line 4: not a number"), std::string::npos);
  int64_t nan_rows = 0;
  auto points = table.points(0, 1, &nan_rows);
  EXPECT_EQ(points.size(), 2u);
  EXPECT_EQ(nan_rows, 1);
}

TEST_F(PointTableFile, UnusableFilesAreClearErrors) {
  NPE_EXPECT_THROW_WITH(read_point_table(write("one.csv", "1\n2\n")), DataError,
                        "at least two columns");
  NPE_EXPECT_THROW_WITH(read_point_table(write("words.csv", "x,y\nfoo,bar\n")), DataError,
                        "no rows of numbers");
  NPE_EXPECT_THROW_WITH(read_point_table("/nonexistent/points.csv"), DataError, "cannot open");
  auto table = read_point_table(write("ok.csv", "1,2\n"));
  NPE_EXPECT_THROW_WITH(table.points(0, 5), DataError, "column out of range");
}

}  // namespace
}  // namespace npe
