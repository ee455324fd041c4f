#pragma once
// Date-times as they appear in the user's series files: ISO 8601 ("2016-07-01T00:00:00Z",
// "2016-07-01T01:00+02:00") and the common spreadsheet forms ("2010/01/01 00:00",
// "2016-07-01 00:00:00", "2016-07-01", "2017/6/26 0:00"). A series' x column of date-times
// becomes hours since its first row; the first row's date-time is kept for display.

#include <optional>
#include <string>

namespace npe {

/// A parsed date-time: seconds since 1970-01-01 00:00 UTC (a time without a zone is read as
/// UTC: no daylight-saving shift is applied) and the form it was written in ("YYYY-MM-DD
/// HH:MM"), so that a file that changes forms half-way can be told.
struct DateTime {
  double seconds = 0.0;
  std::string form;
};

/// Parses `text` as a date-time, or nothing when it is not one (a number, a word, a month 13,
/// 31 April, 25:00). Years 1000..9999; a fractional second is kept; "Z" or "+HH:MM" / "-HHMM"
/// move the time to UTC.
std::optional<DateTime> parse_date_time(const std::string& text);

/// "2016-07-01 00:00" (seconds only when not whole minutes) in UTC.
std::string format_date_time(double seconds_since_1970);

}  // namespace npe
