// kiln::Error: the one exception type kiln throws, with a stable dotted kind for programs and a
// message for people.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

namespace kiln {

// Kinds are dotted and stable ("trace.vector_width", "bounds.out_of_range", ...): tests and callers
// match on kind(), people read what().
class Error : public std::runtime_error {
 public:
  Error(std::string kind, const std::string& message)
      : std::runtime_error(kind + ": " + message), kind_(std::move(kind)), message_(message) {}

  const std::string& kind() const noexcept { return kind_; }
  // The message without the "kind: " prefix that what() carries.
  const std::string& message() const noexcept { return message_; }

 private:
  std::string kind_;
  std::string message_;
};

}  // namespace kiln
