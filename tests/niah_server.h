// A local OpenAI-compatible server for gate tests: answers NIAH questions from the haystack in the
// prompt (perfect) or never (broken), optionally after a delay.
#pragma once
#include <chrono>
#include <regex>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "tests/local_server.h"

namespace kvtest {

struct NiahServer : LocalServer {
  explicit NiahServer(bool perfect, int delay_ms = 0) {
    server.Post("/v1/chat/completions", [perfect, delay_ms](const httplib::Request& req, httplib::Response& res) {
      if (delay_ms) std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
      const std::string prompt = nlohmann::json::parse(req.body)["messages"].back()["content"].get<std::string>();
      std::string answer = "No idea.";
      std::smatch m, v;
      if (perfect && std::regex_search(prompt, m, std::regex("special magic \\w+ for (\\S+) mentioned in the provided text\\?")) &&
          std::regex_search(prompt, v, std::regex("special magic \\w+ for " + m[1].str() + " is: (\\S+)\\.")))
        answer = v[1].str();
      const nlohmann::json choice = {{"index", 0}, {"message", {{"role", "assistant"}, {"content", answer}}}, {"finish_reason", "stop"}};
      res.set_content(nlohmann::json{{"id", "x"}, {"object", "chat.completion"}, {"model", "m"}, {"choices", {choice}}}.dump(), "application/json");
    });
    start();
    // Destroyed before listen() runs, httplib would miss the stop: wait until it listens.
    while (!server.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
};

}  // namespace kvtest
