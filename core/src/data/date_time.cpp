#include "npe/data/date_time.h"

#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdio>

namespace npe {
namespace {

// Days from 1970-01-01 to the given civil date (proleptic Gregorian): the standard
// era-of-400-years computation, exact for every date this parser accepts.
int64_t days_from_civil(int64_t y, int64_t m, int64_t d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const int64_t yoe = y - era * 400;
  const int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

void civil_from_days(int64_t z, int64_t& y, int64_t& m, int64_t& d) {
  z += 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const int64_t doe = z - era * 146097;
  const int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const int64_t mp = (5 * doy + 2) / 153;
  d = doy - (153 * mp + 2) / 5 + 1;
  m = mp < 10 ? mp + 3 : mp - 9;
  y = yoe + era * 400 + (m <= 2);
}

bool leap(int64_t y) {
  return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

int64_t days_in_month(int64_t y, int64_t m) {
  static const int days[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return m == 2 && leap(y) ? 29 : days[m - 1];
}

// A reader over the text that records the form it has read ("YYYY-MM-DD HH:MM").
struct Cursor {
  const std::string& text;
  size_t at = 0;
  std::string form;

  bool done() const { return at == text.size(); }
  char peek() const { return done() ? '\0' : text[at]; }
  // min_digits..max_digits digits, recorded in the form as `letter` repeated.
  bool number(int min_digits, int max_digits, char letter, int64_t& value) {
    int n = 0;
    value = 0;
    while (n < max_digits && std::isdigit(static_cast<unsigned char>(peek()))) {
      value = value * 10 + (text[at++] - '0');
      ++n;
    }
    if (n < min_digits) return false;
    // The form does not depend on zero padding: "2017/6/26 0:00" and "2017/6/26 10:00" are one.
    form.append(letter == 'Y' ? 4 : 2, letter);
    return true;
  }
  bool literal(char c) {
    if (peek() != c) return false;
    form += c;
    ++at;
    return true;
  }
};

}  // namespace

std::optional<DateTime> parse_date_time(const std::string& text) {
  Cursor c{text, 0, {}};
  int64_t year = 0, month = 0, day = 0, hour = 0, minute = 0;
  double second = 0.0;
  if (!c.number(4, 4, 'Y', year) || year < 1000) return std::nullopt;
  const char separator = c.peek();
  if (separator != '-' && separator != '/' && separator != '.') return std::nullopt;
  c.literal(separator);
  if (!c.number(1, 2, 'M', month) || !c.literal(separator) || !c.number(1, 2, 'D', day)) {
    return std::nullopt;
  }
  if (month < 1 || month > 12 || day < 1 || day > days_in_month(year, month)) return std::nullopt;
  double offset_s = 0.0;
  if (!c.done()) {
    if (!c.literal('T') && !c.literal(' ')) return std::nullopt;
    if (!c.number(1, 2, 'h', hour) || !c.literal(':') || !c.number(2, 2, 'm', minute)) {
      return std::nullopt;
    }
    if (c.literal(':')) {
      int64_t whole = 0;
      if (!c.number(2, 2, 's', whole)) return std::nullopt;
      second = static_cast<double>(whole);
      if (c.literal('.')) {
        double scale = 0.1;
        bool any = false;
        while (std::isdigit(static_cast<unsigned char>(c.peek()))) {
          second += scale * (c.text[c.at++] - '0');
          scale /= 10;
          any = true;
        }
        if (!any) return std::nullopt;
        c.form += 'f';
      }
    }
    if (hour > 23 || minute > 59 || second >= 61.0) return std::nullopt;
    if (c.literal('Z')) {
      // UTC already
    } else if (c.peek() == '+' || c.peek() == '-') {
      const int sign = c.peek() == '-' ? -1 : 1;
      c.literal(c.peek());
      int64_t zone_h = 0, zone_m = 0;
      if (!c.number(2, 2, 'h', zone_h)) return std::nullopt;
      c.literal(':');
      if (!c.number(2, 2, 'm', zone_m) || zone_h > 23 || zone_m > 59) return std::nullopt;
      offset_s = sign * (zone_h * 3600.0 + zone_m * 60.0);
    }
    if (!c.done()) return std::nullopt;
  }
  DateTime result;
  result.seconds = static_cast<double>(days_from_civil(year, month, day)) * 86400.0 +
                   static_cast<double>(hour * 3600 + minute * 60) + second - offset_s;
  result.form = c.form;
  return result;
}

std::string format_date_time(double seconds_since_1970) {
  if (!std::isfinite(seconds_since_1970)) return "(no date)";
  const double rounded = std::round(seconds_since_1970 * 1000.0) / 1000.0;
  const auto days = static_cast<int64_t>(std::floor(rounded / 86400.0));
  double in_day = rounded - static_cast<double>(days) * 86400.0;
  int64_t y = 0, m = 0, d = 0;
  civil_from_days(days, y, m, d);
  const auto hour = static_cast<int>(in_day / 3600.0);
  in_day -= hour * 3600.0;
  const auto minute = static_cast<int>(in_day / 60.0);
  const double second = in_day - minute * 60.0;
  char text[128];
  if (second < 0.0005) {
    std::snprintf(text, sizeof text, "%04lld-%02lld-%02lld %02d:%02d", (long long)y, (long long)m,
                  (long long)d, hour, minute);
  } else {
    std::snprintf(text, sizeof text, "%04lld-%02lld-%02lld %02d:%02d:%06.3f", (long long)y,
                  (long long)m, (long long)d, hour, minute, second);
  }
  return text;
}

}  // namespace npe
