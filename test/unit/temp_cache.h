// A cache directory of a test's own, removed when the test ends (the
// fixture the cache's unit tests share).
#pragma once

#include "utils/files.h"

#include <string>

struct TempCache {
  ciq::ScratchDir dir = ciq::ScratchDir::create("ciq-store-test").value();
  std::string path() const { return dir.path(); }
};
