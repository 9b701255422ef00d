// The coordinator's key-value store: set/get/wait, and bounded timeouts.
#include "baton/collectives/coordinator.h"

#include <gtest/gtest.h>

#include <thread>

namespace baton::collectives {
namespace {

using std::chrono::milliseconds;

std::string Address(const CoordinatorServer& s) { return "127.0.0.1:" + std::to_string(s.port()); }

TEST(Coordinator, SetThenGet) {
  auto server = CoordinatorServer::Start("127.0.0.1:0");
  ASSERT_TRUE(server.ok()) << server.status().to_string();
  CoordinatorClient client(Address(**server), milliseconds(2000));
  client.set("a", {'x', 'y'});
  EXPECT_EQ(client.get("a"), (std::vector<char>{'x', 'y'}));
  client.set("a", {'z'});
  EXPECT_EQ(client.get("a"), (std::vector<char>{'z'}));
}

TEST(Coordinator, WaitReturnsOnceAnotherClientSets) {
  auto server = CoordinatorServer::Start("127.0.0.1:0");
  ASSERT_TRUE(server.ok());
  std::thread setter([&] {
    std::this_thread::sleep_for(milliseconds(50));
    CoordinatorClient(Address(**server), milliseconds(2000)).set("late", {'1'});
  });
  CoordinatorClient client(Address(**server), milliseconds(2000));
  client.wait({"late"}, milliseconds(2000));
  EXPECT_EQ(client.get("late"), std::vector<char>{'1'});
  setter.join();
}

TEST(Coordinator, WaitForAMissingKeyTimesOutNamingIt) {
  auto server = CoordinatorServer::Start("127.0.0.1:0");
  ASSERT_TRUE(server.ok());
  CoordinatorClient client(Address(**server), milliseconds(200));
  try {
    client.wait({"never"}, milliseconds(200));
    FAIL() << "wait returned";
  } catch (const CoordinatorError& e) {
    EXPECT_NE(std::string(e.what()).find("'never' was not set within 200 ms"), std::string::npos) << e.what();
  }
}

TEST(Coordinator, NoServerTimesOutNamingTheAddress) {
  int port;
  {
    auto server = CoordinatorServer::Start("127.0.0.1:0");
    ASSERT_TRUE(server.ok());
    port = (*server)->port();
  }  // closed: nothing listens there now
  std::string address = "127.0.0.1:" + std::to_string(port);
  CoordinatorClient client(address, milliseconds(200));
  try {
    client.set("k", {'1'});
    FAIL() << "set returned";
  } catch (const CoordinatorError& e) {
    EXPECT_NE(std::string(e.what()).find(address), std::string::npos) << e.what();
  }
}

TEST(Coordinator, BadAddressesAreInvalidArguments) {
  EXPECT_FALSE(ParseHostPort("localhost").ok());
  EXPECT_FALSE(ParseHostPort("h:notaport").ok());
  EXPECT_FALSE(ParseHostPort("h:70000").ok());
  auto hp = ParseHostPort("127.0.0.1:1234");
  ASSERT_TRUE(hp.ok());
  EXPECT_EQ(hp->host, "127.0.0.1");
  EXPECT_EQ(hp->port, 1234);
}

}  // namespace
}  // namespace baton::collectives
