// An HTTP server on 127.0.0.1 (an OS-chosen port) for the life of a test: add handlers to
// `server`, then start(). Used by tests of everything that speaks HTTP.
#pragma once
#include <httplib.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>

namespace kvtest {

struct LocalServer {
  httplib::Server server;
  int port = 0;

  void start() {
    port = server.bind_to_any_port("127.0.0.1");  // listening from here on: connections queue
    thread_ = std::thread([this] {
      server.listen_after_bind();
      done_ = true;
    });
  }
  ~LocalServer() {
    if (thread_.joinable()) {
      // httplib's stop() does nothing until listen_after_bind() has started, which on a loaded
      // machine can be after a short test ends: ask until the thread is done.
      while (!done_) {
        server.stop();
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
      }
      thread_.join();
    }
  }
  std::string url(const std::string& path = "") const { return "http://127.0.0.1:" + std::to_string(port) + path; }

 private:
  std::thread thread_;
  std::atomic<bool> done_{false};
};

}  // namespace kvtest
