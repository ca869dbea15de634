#include "io/time_parse.h"

namespace rlsched::io {
namespace {

// Parses exactly `width` decimal digits at `pos` (sacct pads with zeros). \return false if any is not a digit.
bool fixed_digits(std::string_view text, std::size_t pos, std::size_t width, int& value) {
  if (pos + width > text.size()) return false;
  value = 0;
  for (std::size_t i = pos; i < pos + width; ++i) {
    if (text[i] < '0' || text[i] > '9') return false;
    value = value * 10 + (text[i] - '0');
  }
  return true;
}

bool is_leap(int year) {
  return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
}

int days_in_month(int year, int month) {
  static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return month == 2 && is_leap(year) ? 29 : kDays[month - 1];
}

}  // namespace

std::int64_t days_from_civil(std::int64_t year, unsigned month, unsigned day) {
  year -= month <= 2 ? 1 : 0;
  const std::int64_t era = (year >= 0 ? year : year - 399) / 400;
  const auto year_of_era = static_cast<unsigned>(year - era * 400);
  const unsigned day_of_year = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1;
  const unsigned day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
  return era * 146097 + static_cast<std::int64_t>(day_of_era) - 719468;
}

TimeField parse_slurm_time(std::string_view text, Seconds& value) {
  if (text.empty() || text == "Unknown" || text == "None") return TimeField::kAbsent;
  int year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0;
  if (text.size() != 19 || text[4] != '-' || text[7] != '-' || text[10] != 'T' || text[13] != ':' || text[16] != ':' ||
      !fixed_digits(text, 0, 4, year) || !fixed_digits(text, 5, 2, month) || !fixed_digits(text, 8, 2, day) ||
      !fixed_digits(text, 11, 2, hour) || !fixed_digits(text, 14, 2, minute) || !fixed_digits(text, 17, 2, second)) {
    return TimeField::kInvalid;
  }
  if (month < 1 || month > 12 || day < 1 || day > days_in_month(year, month) || hour > 23 || minute > 59 ||
      second > 59) {
    return TimeField::kInvalid;
  }
  value = days_from_civil(year, static_cast<unsigned>(month), static_cast<unsigned>(day)) * 86400 + hour * 3600 +
          minute * 60 + second;
  return TimeField::kValue;
}

bool parse_elapsed(std::string_view text, Seconds& value) {
  Seconds days = 0;
  if (const auto dash = text.find('-'); dash != std::string_view::npos) {
    int digits = 0;
    // Days stay below 10^7 (27,000 years) so that the sum below cannot overflow.
    if (dash == 0 || dash > 7 || !fixed_digits(text, 0, dash, digits)) return false;
    days = digits;
    text.remove_prefix(dash + 1);
  }
  int hours = 0, minutes = 0, seconds = 0;
  if (text.size() != 8 || text[2] != ':' || text[5] != ':' || !fixed_digits(text, 0, 2, hours) ||
      !fixed_digits(text, 3, 2, minutes) || !fixed_digits(text, 6, 2, seconds) || minutes > 59 || seconds > 59) {
    return false;
  }
  value = days * 86400 + hours * 3600 + minutes * 60 + seconds;
  return true;
}

}  // namespace rlsched::io
