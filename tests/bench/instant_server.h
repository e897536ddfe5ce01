// An "instant" OpenAI-compatible server for the driver benchmark: one epoll thread, keep-alive
// HTTP/1.1, a canned answer to every POST (plain JSON, or SSE when the body asks to stream), 404 to
// anything else. It does as little as a server can, so the benchmark measures the client.
#pragma once
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <stdexcept>
#include <string>
#include <thread>
#include <unordered_map>

namespace kvbench {

class InstantServer {
 public:
  InstantServer() {
    const std::string json_body =
        R"({"id":"b","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"ok"},)"
        R"("finish_reason":"stop"}],"usage":{"prompt_tokens":12,"completion_tokens":1,"total_tokens":13}})";
    plain_ = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " + std::to_string(json_body.size()) +
             "\r\n\r\n" + json_body;
    std::string sse;
    for (const char* piece : {"o", "k"})
      sse += std::string("data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"") + piece + "\"},\"finish_reason\":null}]}\n\n";
    sse += "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n";
    sse += "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":12,\"completion_tokens\":2}}\n\ndata: [DONE]\n\n";
    stream_ = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Length: " + std::to_string(sse.size()) + "\r\n\r\n" + sse;
    not_found_ = "HTTP/1.1 404 Not Found\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}";

    listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    int one = 1;
    ::setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::listen(listen_fd_, 1024) != 0)
      throw std::runtime_error("instant server: cannot listen");
    socklen_t len = sizeof a;
    ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
    ep_ = ::epoll_create1(EPOLL_CLOEXEC);
    wake_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    add(listen_fd_);
    add(wake_);
    thread_ = std::thread([this] { loop(); });
  }
  ~InstantServer() {
    stop_ = true;
    const std::uint64_t one = 1;
    (void)!::write(wake_, &one, sizeof one);
    thread_.join();
    for (auto& [fd, c] : conns_) ::close(fd);
    ::close(listen_fd_);
    ::close(ep_);
    ::close(wake_);
  }
  int port() const { return port_; }
  std::string base_url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/v1"; }
  std::size_t requests() const { return requests_; }

 private:
  struct Conn {
    std::string in;
    std::string out;
  };

  void add(int fd) {
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.fd = fd;
    ::epoll_ctl(ep_, EPOLL_CTL_ADD, fd, &ev);
  }
  void close_conn(int fd) {
    ::epoll_ctl(ep_, EPOLL_CTL_DEL, fd, nullptr);
    ::close(fd);
    conns_.erase(fd);
  }

  // Answers every complete request in the buffer; returns false on a malformed one.
  bool serve(Conn& c) {
    for (;;) {
      const std::size_t end = c.in.find("\r\n\r\n");
      if (end == std::string::npos) return true;
      std::size_t length = 0;
      for (std::size_t p = c.in.find("\r\n"); p < end; p = c.in.find("\r\n", p + 2)) {
        if (strncasecmp(c.in.c_str() + p + 2, "content-length:", 15) == 0) length = std::strtoul(c.in.c_str() + p + 17, nullptr, 10);
      }
      if (c.in.size() < end + 4 + length) return true;
      const bool post = c.in.compare(0, 5, "POST ") == 0;
      const bool stream = post && c.in.find("\"stream\":true", end) != std::string::npos;
      c.out += !post ? not_found_ : stream ? stream_ : plain_;
      c.in.erase(0, end + 4 + length);
      ++requests_;
    }
  }

  void loop() {
    epoll_event events[256];
    char buf[65536];
    while (!stop_) {
      const int n = ::epoll_wait(ep_, events, 256, 100);
      for (int i = 0; i < n; ++i) {
        const int fd = events[i].data.fd;
        if (fd == wake_) continue;
        if (fd == listen_fd_) {
          for (;;) {
            const int c = ::accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
            if (c < 0) break;
            int one = 1;
            ::setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
            conns_[c];
            add(c);
          }
          continue;
        }
        auto it = conns_.find(fd);
        if (it == conns_.end()) continue;
        Conn& c = it->second;
        bool alive = true;
        for (;;) {
          const ssize_t r = ::read(fd, buf, sizeof buf);
          if (r > 0) {
            c.in.append(buf, static_cast<std::size_t>(r));
            continue;
          }
          if (r == 0 || (errno != EAGAIN && errno != EWOULDBLOCK)) alive = false;
          break;
        }
        if (alive) alive = serve(c);
        while (alive && !c.out.empty()) {  // answers are small: the socket buffer takes them at once
          const ssize_t w = ::write(fd, c.out.data(), c.out.size());
          if (w > 0) c.out.erase(0, static_cast<std::size_t>(w));
          else if (errno == EAGAIN) std::this_thread::yield();
          else alive = false;
        }
        if (!alive) close_conn(fd);
      }
    }
  }

  std::string plain_, stream_, not_found_;
  int listen_fd_ = -1, ep_ = -1, wake_ = -1, port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<std::size_t> requests_{0};
  std::unordered_map<int, Conn> conns_;
  std::thread thread_;
};

}  // namespace kvbench
