// expect_error(fn, kind): runs fn, which must throw a kiln::Error of `kind`; returns the error so
// that a test can check its message (a failure, and an empty error, when fn throws nothing).
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "kiln/error.h"

namespace kiln::test {

template <class Fn>
Error expect_error(Fn&& fn, const std::string& kind) {
  try {
    fn();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), kind) << e.what();
    return e;
  }
  ADD_FAILURE() << "expected Error{" << kind << "}";
  return Error("none", "none");
}

}  // namespace kiln::test
