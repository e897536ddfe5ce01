// kvgate: may this KV-cache change ship? See README.md and docs in ../shared/docs/product.md.
#include <exception>
#include <iostream>

#include "harness/cli/cli_common.h"
#include "harness/core/error.h"
#include "harness/core/log.h"
#include "harness/core/version.h"
#include "kernels/cuda_info.h"

int main(int argc, char** argv) {
  using namespace kvgate;
  CLI::App app{
      "kvgate: decides whether a change to how an LLM serving engine stores its KV cache may ship.\n"
      "gen makes trials, run answers them through an endpoint or the reference decoder, compare\n"
      "pairs two runs trial by trial and decides PASS / FAIL / INCONCLUSIVE.",
      "kvgate"};
  app.require_subcommand(0, 1);
  bool show_version = false, quiet = false, verbose = false;
  app.add_flag("--version", show_version, "Print the version, the git commit and the CUDA build, then exit");
  app.add_flag("-q,--quiet", quiet, "Only warnings and errors on stderr");
  app.add_flag("-v,--verbose", verbose, "More detail on stderr");
  app.footer(
      "Exit codes: 0 success / PASS, 1 FAIL, 2 bad input or usage, 3 INCONCLUSIVE, 4 internal error.\n"
      "Run `kvgate COMMAND --help` for a command's options.");

  cli::Commands commands;
  cli::register_gen(app, commands);
  cli::register_run(app, commands);
  cli::register_compare(app, commands);
  cli::register_report(app, commands);
  cli::register_gate(app, commands);
  cli::register_make_model(app, commands);
  cli::register_merge(app, commands);
  cli::register_history(app, commands);
  cli::register_grade(app, commands);
  cli::register_stats(app, commands);
  cli::register_tokenize(app, commands);
  cli::register_serve(app, commands);
  cli::register_capacity(app, commands);
  cli::register_calibrate(app, commands);
  cli::register_kld(app, commands);
  cli::register_validate(app, commands);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);  // prints help, or the parse error with a hint
    return code == 0 ? 0 : kExitUsage;
  }
  if (show_version) {
    std::cout << "kvgate " << version() << " (commit " << git_commit() << ")\n"
              << kernels::cuda_describe() << "\n";
    return 0;
  }
  set_log_level(quiet ? LogLevel::quiet : verbose ? LogLevel::verbose : LogLevel::normal);
  const cli::Handler* handler = commands.find_parsed(app);
  if (!handler) {
    std::cout << app.help();
    return kExitUsage;
  }
  try {
    return (*handler)();
  } catch (const Error& e) {
    std::cerr << "kvgate: error: " << e.what() << "\n";
    return e.exit_code();
  } catch (const std::exception& e) {
    std::cerr << "kvgate: internal error: " << e.what() << " (please report this with the command you ran)\n";
    return kExitInternal;
  }
}
