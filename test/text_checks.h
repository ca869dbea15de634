// Checks on the text a command or a report printed.
#pragma once

#include <string>

namespace rlsched::test {

inline bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace rlsched::test
