// Each unit-test process in its own HOME, cache and temporary folders (issue
// 50): before any test, HOME, XDG_CACHE_HOME (ciq's default cache is
// $XDG_CACHE_HOME/ciq) and TMPDIR point at fresh folders under
// CIQ_UNIT_ENV_ROOT (the build's test/unit-env), never the user's. After the
// tests, anything left in that HOME fails the run, named; the folders are
// removed when nothing failed and kept for a post-mortem otherwise. ctest
// runs each test as its own process, so each gets its own folders.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <system_error>

namespace {

namespace fs = std::filesystem;

class IsolatedFolders : public ::testing::Environment {
public:
  void SetUp() override {
    fs::create_directories(CIQ_UNIT_ENV_ROOT);
    std::string pattern = std::string(CIQ_UNIT_ENV_ROOT) + "/run.XXXXXX";
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr) << "cannot make a folder in " << CIQ_UNIT_ENV_ROOT;
    root_ = pattern;
    for (const char* name : {"HOME", "XDG_CACHE_HOME", "TMPDIR"}) {
      fs::path folder = root_ / name;
      fs::create_directory(folder);
      ::setenv(name, folder.c_str(), 1);
    }
  }

  void TearDown() override {
    if (root_.empty()) return;
    std::string left;
    std::error_code ec;
    for (auto it = fs::recursive_directory_iterator(root_ / "HOME", ec); !ec && it != fs::recursive_directory_iterator();
         it.increment(ec))
      left += "\n  " + fs::relative(it->path(), root_ / "HOME").string();
    EXPECT_TRUE(left.empty()) << "a test wrote into its HOME (" << (root_ / "HOME").string()
                              << "), which must stay empty:" << left;
    if (!::testing::UnitTest::GetInstance()->Failed()) fs::remove_all(root_, ec);
  }

private:
  fs::path root_;
};

// Registered before main runs: gtest owns and deletes the environment.
const auto* registered = ::testing::AddGlobalTestEnvironment(new IsolatedFolders);

} // namespace
