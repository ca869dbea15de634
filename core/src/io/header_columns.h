// Delimited files with a header line (sacct --parsable2, Alibaba's pod CSVs): where each column a reader uses is.
#pragma once

#include <string_view>
#include <vector>

#include "io/line_source.h"

namespace rlsched::io {

/// A column a reader looks for: its name in the header, the member of `Columns` that takes its position, and
/// whether a file without it is refused. `Columns` holds one int per column (-1 while absent) and a `count`.
template <class Columns>
struct ColumnName {
  std::string_view name;
  int Columns::*index;
  bool required;
};

/// Reads the header `line`, split on `delimiter`, into `columns` (each column's position, and how many there are).
/// \return "" when every required column is there, else the name of the first one missing, in `names`' order.
template <class Columns, std::size_t N>
std::string_view read_header_columns(std::string_view line, char delimiter, const ColumnName<Columns> (&names)[N],
                                     Columns& columns) {
  std::vector<std::string_view> fields;
  split_into(line, delimiter, fields);
  columns.count = fields.size();
  for (const auto& column : names) {
    for (std::size_t i = 0; i < fields.size(); ++i) {
      if (trim(fields[i]) == column.name) {
        columns.*column.index = static_cast<int>(i);
        break;
      }
    }
    if (column.required && columns.*column.index < 0) return column.name;
  }
  return {};
}

/// The trimmed text of a row's column at `index`; "" for a column the file lacks (-1).
inline std::string_view column_text(const std::vector<std::string_view>& fields, int index) {
  return index >= 0 ? trim(fields[static_cast<std::size_t>(index)]) : std::string_view();
}

}  // namespace rlsched::io
