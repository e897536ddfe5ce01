#include "datasets/common/hf_rows.h"

#include <algorithm>
#include <charconv>
#include <optional>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <vector>

#include "harness/core/atomic_file.h"
#include "harness/core/error.h"
#include "harness/core/json_fields.h"
#include "harness/core/jsonl.h"
#include "harness/core/log.h"
#include "harness/core/sha256.h"

namespace kvgate {

using nlohmann::json;
namespace fs = std::filesystem;

namespace {

const char* const kDefaultEndpoint = "https://datasets-server.huggingface.co";

std::string percent_encode(std::string_view s) {
  static const char* hex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~' || c == '/') {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back('%');
      out.push_back(hex[c >> 4]);
      out.push_back(hex[c & 15]);
    }
  }
  return out;
}

// A path component from a name: [A-Za-z0-9._-] kept, anything else '_' ("openai/mrcr" -> "openai__mrcr").
std::string path_component(std::string_view s) {
  std::string out;
  for (unsigned char c : s) {
    if (c == '/') out += "__";
    else out.push_back(std::isalnum(c) || c == '.' || c == '-' || c == '_' ? static_cast<char>(c) : '_');
  }
  if (out.empty() || out == "." || out == "..") out = "_" + out;
  return out;
}

std::string page_name(std::int64_t offset, std::size_t count) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "rows-%09lld-%04zu.jsonl", static_cast<long long>(offset), count);
  return buf;
}

struct CachedPage {
  std::string path;
  std::int64_t count = 0;
};

std::map<std::int64_t, CachedPage> scan_pages(const std::string& dir) {
  std::map<std::int64_t, CachedPage> pages;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    long long offset = 0;
    int count = 0;
    char tail[16] = {0};
    if (std::sscanf(name.c_str(), "rows-%9lld-%4d.%15s", &offset, &count, tail) == 3 && std::string(tail) == "jsonl" &&
        name == page_name(offset, static_cast<std::size_t>(count)) && count > 0)
      pages[offset] = {e.path().string(), count};
  }
  return pages;
}

// The server could not be reached or kept failing (5xx): the page may be too large to serve.
struct TransportError : Error {
  using Error::Error;
};

struct Page {
  std::int64_t total = 0;
  bool partial = false;
  json features;
  std::vector<json> rows;                  // the leading rows whose cells are whole
  std::vector<std::string> truncated_cells;  // of the first truncated row, if any
};

std::string error_detail(const std::string& body) {
  try {
    const json j = json::parse(body);
    if (j.is_object() && j.contains("error") && j["error"].is_string()) return j["error"].get<std::string>();
  } catch (const json::exception&) {
  }
  return body.substr(0, 200);
}

Page fetch_page(const HfRowsSource& src, const HfRowsOptions& o, std::int64_t offset, int length) {
  const std::string url = hf_rows_url(src, offset, length);
  HttpFetchOptions fetch = o.fetch;
  if (const char* token = std::getenv("HF_TOKEN"); token && *token) fetch.headers["Authorization"] = std::string("Bearer ") + token;
  HttpFetchResult r;
  try {
    r = http_get(url, fetch);
  } catch (const Error& e) {
    throw TransportError(e.what());
  }
  if (r.status != 200) {
    std::string fix = "check the dataset, config and split names (the dataset viewer's /splits lists them)";
    if (r.status == 401 || r.status == 403) fix = "the dataset may be gated or private: set HF_TOKEN, or pass a local export";
    throw Error(url + ": HTTP " + std::to_string(r.status) + ": " + error_detail(r.body) + ": " + fix);
  }
  json j;
  try {
    j = json::parse(r.body);
  } catch (const json::parse_error&) {
    throw Error(url + ": the response is not JSON (" + std::to_string(r.body.size()) +
                " bytes): is the endpoint a dataset viewer /rows API?");
  }
  const std::string where = url;
  FieldReader f(j, where);
  Page p;
  p.total = f.integer("num_rows_total");
  if (p.total < 0) f.fail("num_rows_total", "must be >= 0");
  p.partial = f.opt_boolean("partial").value_or(false);
  if (f.has("features")) p.features = f.any("features");
  const json& rows = f.array("rows");
  for (std::size_t i = 0; i < rows.size(); ++i) {
    FieldReader item(rows[i], where + ": rows[" + std::to_string(i) + "]");
    const std::int64_t idx = item.integer("row_idx");
    const std::int64_t want = offset + static_cast<std::int64_t>(i);
    if (idx != want)
      item.fail("row_idx", "is " + std::to_string(idx) + ", expected " + std::to_string(want) + " (rows must come in order)");
    const json& row = item.object("row");
    if (item.has_value("truncated_cells")) {
      const json& t = item.array("truncated_cells");
      if (!t.empty()) {
        for (const json& c : t) p.truncated_cells.push_back(c.is_string() ? c.get<std::string>() : c.dump());
        break;  // keep only the whole rows before it
      }
    }
    p.rows.push_back(row);
  }
  return p;
}

void write_info(const std::string& dir, const HfRowsSource& src, std::int64_t total, bool partial, const json& features,
                bool complete) {
  const json info = {{"endpoint", src.endpoint}, {"dataset", src.dataset},     {"config", src.config},
                     {"split", src.split},       {"num_rows_total", total},    {"partial", partial},
                     {"features", features},     {"complete", complete}};
  write_file_atomic(dir + "/info.json", info.dump(1) + "\n");
}

// Streams a cached page; returns false when fn asked to stop.
bool read_page(const CachedPage& page, std::int64_t offset, const HfRowFn& fn, std::int64_t& seen) {
  std::ifstream in(page.path, std::ios::binary);
  if (!in) throw Error(page.path + ": cannot read the cached page: check permissions, or delete the file");
  std::string line;
  std::int64_t i = 0;
  const std::string fix = ": the cache is damaged; delete the file (or pass --refresh) and run again";
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    json j;
    try {
      j = json::parse(line);
    } catch (const json::parse_error&) {
      throw Error(page.path + ":" + std::to_string(i + 1) + ": not valid JSON" + fix);
    }
    if (!j.is_object() || !j.contains("row_idx") || j["row_idx"] != offset + i || !j.contains("row"))
      throw Error(page.path + ":" + std::to_string(i + 1) + ": not row " + std::to_string(offset + i) + fix);
    ++seen;
    if (!fn(j["row"], offset + i)) return false;
    ++i;
  }
  if (i != page.count)
    throw Error(page.path + ": holds " + std::to_string(i) + " rows, its name says " + std::to_string(page.count) + fix);
  return true;
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Query-string decoding: %XX and '+' for a space; nullopt on a bad escape.
std::optional<std::string> percent_decode(std::string_view s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '+') {
      out.push_back(' ');
    } else if (s[i] == '%') {
      if (i + 2 >= s.size()) return std::nullopt;
      const int hi = hex_digit(s[i + 1]), lo = hex_digit(s[i + 2]);
      if (hi < 0 || lo < 0) return std::nullopt;
      out.push_back(static_cast<char>(hi * 16 + lo));
      i += 2;
    } else {
      out.push_back(s[i]);
    }
  }
  return out;
}

}  // namespace

bool is_http_url(const std::string& text) { return text.rfind("http://", 0) == 0 || text.rfind("https://", 0) == 0; }

HfRowsUrl parse_hf_rows_url(const std::string& url) {
  const std::string form = ": expected a Hugging Face rows API URL, " + std::string(kDefaultEndpoint) +
                           "/rows?dataset=ORG/NAME&config=CONFIG&split=SPLIT (the dataset viewer's API tab shows it)";
  if (!is_http_url(url)) throw Error(url + form);
  const std::size_t q = url.find('?');
  std::string base = url.substr(0, q);
  if (q == std::string::npos || base.size() < 5 || base.compare(base.size() - 5, 5, "/rows") != 0) throw Error(url + form);
  HfRowsUrl out;
  out.source.endpoint = base.substr(0, base.size() - 5);
  std::map<std::string, std::string> params;
  std::string_view query(url);
  query.remove_prefix(q + 1);
  if (const std::size_t hash = query.find('#'); hash != std::string_view::npos) query = query.substr(0, hash);
  while (!query.empty()) {
    const std::size_t amp = query.find('&');
    const std::string_view item = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
    if (item.empty()) continue;
    const std::size_t eq = item.find('=');
    const std::optional<std::string> key = percent_decode(item.substr(0, eq));
    const std::optional<std::string> value = percent_decode(eq == std::string_view::npos ? "" : item.substr(eq + 1));
    if (!key || !value) throw Error(url + ": a bad %-escape in \"" + std::string(item) + "\"" + form);
    if (!params.emplace(*key, *value).second) throw Error(url + ": \"" + *key + "\" is given twice" + form);
  }
  for (const auto& [key, value] : params) {
    if (key == "dataset") out.source.dataset = value;
    else if (key == "config") out.source.config = value;
    else if (key == "split") out.source.split = value;
    else if (key == "offset") {
      if (value != "0")
        throw Error(url + ": offset=" + value + ": the whole split is read; drop offset (kvgate gen custom --limit takes a subset)");
    } else if (key == "length") {
      int n = 0;
      const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
      if (ec != std::errc() || end != value.data() + value.size() || n < 1 || n > 100)
        throw Error(url + ": length=" + value + ": the rows a request must be 1..100 (the API's limit)");
      out.page_length = n;
    } else {
      throw Error(url + ": unknown parameter \"" + key + "\"" + form);
    }
  }
  if (out.source.dataset.empty()) throw Error(url + ": no dataset=" + form);
  if (out.source.config.empty() || out.source.split.empty()) throw Error(url + ": an empty config= or split=" + form);
  return out;
}

std::string hf_rows_url(const HfRowsSource& src, std::int64_t offset, int length) {
  std::string base = src.endpoint;
  while (!base.empty() && base.back() == '/') base.pop_back();
  return base + "/rows?dataset=" + percent_encode(src.dataset) + "&config=" + percent_encode(src.config) +
         "&split=" + percent_encode(src.split) + "&offset=" + std::to_string(offset) + "&length=" + std::to_string(length);
}

std::string hf_rows_cache_dir(const HfRowsSource& src, const HfRowsOptions& o) {
  std::string root = o.cache_root.empty() ? cache_dir() + "/hf-rows" : o.cache_root;
  if (src.endpoint != kDefaultEndpoint) root += "/endpoint-" + sha256_hex(src.endpoint).substr(0, 12);
  return root + "/" + path_component(src.dataset) + "/" + path_component(src.config) + "/" + path_component(src.split);
}

HfRowsInfo for_each_hf_row(const HfRowsSource& src, const HfRowsOptions& o, const HfRowFn& fn) {
  if (src.dataset.empty()) throw Error("Hugging Face rows: no dataset named (e.g. openai/mrcr)");
  if (o.page_length < 1 || o.page_length > 100)
    throw Error("Hugging Face rows: page length " + std::to_string(o.page_length) + " is outside 1..100 (the API's limit)");
  HfRowsInfo info;
  info.cache_dir = hf_rows_cache_dir(src, o);
  const std::string& dir = info.cache_dir;
  if (o.refresh) {
    std::error_code ec;
    fs::remove_all(dir, ec);
    if (ec) throw Error(dir + ": cannot clear the cache (" + ec.message() + ")");
  }
  make_directories(dir);
  std::map<std::int64_t, CachedPage> pages = scan_pages(dir);
  std::int64_t total = -1;
  json features;
  bool complete = false;
  if (fs::exists(dir + "/info.json")) {
    json j;
    try {
      j = json::parse(read_file(dir + "/info.json"));
    } catch (const json::parse_error&) {
      throw Error(dir + "/info.json: not valid JSON: delete the directory (or pass --refresh) and run again");
    }
    FieldReader f(j, dir + "/info.json");
    total = f.integer("num_rows_total");
    info.partial = f.opt_boolean("partial").value_or(false);
    complete = f.opt_boolean("complete").value_or(false);
    if (f.has("features")) features = f.any("features");
  }
  int length = o.page_length;
  bool reached = false;  // the server answered with rows during this call
  std::int64_t offset = 0;
  auto finish = [&] {
    info.num_rows_total = total < 0 ? 0 : total;
    info.complete = total >= 0 && offset >= total;
    if (info.complete && !complete) write_info(dir, src, total, info.partial, features, true);
    return info;
  };
  auto stop = [&] {  // the caller has what it needs; the rest stays unfetched
    info.num_rows_total = total < 0 ? 0 : total;
    return info;
  };
  while (total < 0 || offset < total) {
    if (auto it = pages.find(offset); it != pages.end()) {
      if (!read_page(it->second, offset, fn, info.rows_seen)) return stop();
      offset += it->second.count;
      continue;
    }
    if (o.offline)
      throw Error(dir + ": rows from " + std::to_string(offset) + " are not cached (offline): run once with the network");
    Page p;
    try {
      p = fetch_page(src, o, offset, length);
    } catch (const TransportError& e) {
      // The viewer can fail on pages too large to serve: smaller pages, once it has answered.
      if (length > 1 && reached) {
        length = std::max(1, length / 2);
        log_warn(std::string(e.what()) + "; retrying with " + std::to_string(length) + " rows a request");
        continue;
      }
      throw;
    }
    reached = true;
    if (total < 0) {
      total = p.total;
      info.partial = p.partial;
      features = p.features;
      if (p.partial)
        log_warn(src.dataset + ": the dataset viewer serves only part of this split (partial): " + std::to_string(total) + " rows");
      write_info(dir, src, total, info.partial, features, false);
    } else if (p.total != total) {
      throw Error(hf_rows_url(src, offset, length) + ": the split now has " + std::to_string(p.total) + " rows, the cache " +
                  std::to_string(total) + ": the dataset changed upstream; run again with --refresh");
    }
    if (p.rows.empty()) {
      if (offset >= total) break;
      if (!p.truncated_cells.empty() && length > 1) {
        length = 1;  // one row alone may fit the response limit
        continue;
      }
      if (!p.truncated_cells.empty()) {
        std::string cells;
        for (const std::string& c : p.truncated_cells) cells += (cells.empty() ? "" : ", ") + c;
        throw Error(hf_rows_url(src, offset, length) + ": row " + std::to_string(offset) + " is too large for the rows API (cells " +
                    cells + " truncated): download the dataset's files and pass a local export instead");
      }
      throw Error(hf_rows_url(src, offset, length) + ": no rows at offset " + std::to_string(offset) + " of " +
                  std::to_string(total) + ": the API is inconsistent; try again later");
    }
    if (!p.truncated_cells.empty()) length = std::max(1, static_cast<int>(p.rows.size()));
    std::string text;
    for (std::size_t i = 0; i < p.rows.size(); ++i)
      text += to_jsonl_line({{"row_idx", offset + static_cast<std::int64_t>(i)}, {"row", p.rows[i]}});
    const std::string path = dir + "/" + page_name(offset, p.rows.size());
    write_file_atomic(path, text);
    ++info.pages_fetched;
    const CachedPage page{path, static_cast<std::int64_t>(p.rows.size())};
    pages[offset] = page;
    for (std::size_t i = 0; i < p.rows.size(); ++i) {
      ++info.rows_seen;
      if (!fn(p.rows[i], offset + static_cast<std::int64_t>(i))) return stop();
    }
    offset += page.count;
  }
  return finish();
}

HfRowsInfo download_hf_rows(const HfRowsSource& source, const HfRowsOptions& options) {
  return for_each_hf_row(source, options, [](const json&, std::int64_t) { return true; });
}

}  // namespace kvgate
