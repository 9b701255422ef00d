// The platform registry (backend/platforms.h): names to clients, lists of
// names, and the default platform, as bt.devices() and C++ callers use them.
#include "baton/backend/platforms.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace baton {
namespace {

using ::testing::HasSubstr;

TEST(PlatformsTest, NamesGiveTheirProcessWideClients) {
  Result<Platform> cpu = GetPlatform("cpu");
  ASSERT_TRUE(cpu.ok()) << cpu.status().to_string();
  EXPECT_EQ(cpu->client, &Client::Default());
  EXPECT_GT(cpu->client->device_count(), 0);
  EXPECT_EQ(cpu->unavailable, "");
  Result<Platform> sim = GetPlatform("sim");
  ASSERT_TRUE(sim.ok()) << sim.status().to_string();
  EXPECT_EQ(sim->client, GetPlatform("sim")->client);
  Result<Platform> cuda = GetPlatform("cuda");
  ASSERT_TRUE(cuda.ok()) << cuda.status().to_string();
  // Without a GPU the platform is there, with no devices and the reason.
  EXPECT_EQ(cuda->client->device_count() == 0, !cuda->unavailable.empty());
}

TEST(PlatformsTest, AnUnknownNameSaysWhichNamesThereAre) {
  Result<Platform> tpu = GetPlatform("tpu");
  ASSERT_FALSE(tpu.ok());
  EXPECT_EQ(tpu.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_THAT(tpu.status().message(),
              HasSubstr("unknown platform 'tpu'; baton has 'cpu', 'cuda'"));
  EXPECT_FALSE(GetPlatforms("cpu,tpu").ok());
}

TEST(PlatformsTest, ListsSkipEmptyNamesAndRepeats) {
  Result<std::vector<Platform>> list = GetPlatforms(",sim,,cpu,sim,");
  ASSERT_TRUE(list.ok()) << list.status().to_string();
  ASSERT_EQ(list->size(), 2u);
  EXPECT_EQ((*list)[0].name, "sim");
  EXPECT_EQ((*list)[1].name, "cpu");
}

TEST(PlatformsTest, TheDefaultIsTheFirstWithADevice) {
  Result<std::vector<Platform>> list = GetPlatforms(kDefaultPlatforms);
  ASSERT_TRUE(list.ok()) << list.status().to_string();
  EXPECT_EQ((*list)[0].name, "cpu");
  Result<size_t> chosen = DefaultPlatformIndex(*list);
  ASSERT_TRUE(chosen.ok()) << chosen.status().to_string();
  EXPECT_EQ(*chosen, 0u);

  std::vector<Platform> none = {{"empty", list->back().client, "no reason"}};
  if (none[0].client->device_count() > 0) return;  // a machine with a GPU
  Result<size_t> failed = DefaultPlatformIndex(none);
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.status().code(), ErrorCode::kFailedPrecondition);
  EXPECT_THAT(failed.status().message(),
              HasSubstr("no listed platform has a device (empty: no reason)"));
}

}  // namespace
}  // namespace baton
