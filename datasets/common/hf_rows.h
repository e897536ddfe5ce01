// A client of the Hugging Face dataset viewer's /rows API
// (GET {endpoint}/rows?dataset=D&config=C&split=S&offset=O&length=L, at most 100 rows a request):
// pages a split into a local cache, resumes where a previous run stopped, and hands out each row
// as JSON. The response it reads: {"features": [...], "rows": [{"row_idx": i, "row": {...},
// "truncated_cells": [...]}, ...], "num_rows_total": N, "num_rows_per_page": 100, "partial": b}.
//
// Cache: <cache_dir()>/hf-rows/<dataset>/<config>/<split>/ holds info.json (total, features,
// complete) and one file a page, rows-<offset>-<count>.jsonl ({"row_idx", "row"} a line), each
// written atomically, so a killed download loses at most the page in flight.
#pragma once
#include <cstdint>
#include <functional>
#include <string>

#include <nlohmann/json.hpp>

#include "harness/core/http_fetch.h"

namespace kvgate {

struct HfRowsSource {
  std::string dataset = {};  // "openai/mrcr"
  std::string config = "default";
  std::string split = "train";
  std::string endpoint = "https://datasets-server.huggingface.co";
};

struct HfRowsOptions {
  // Rows a request (the API allows 100). When the API truncates cells (responses are size
  // limited), only the whole rows are kept and the page length shrinks, down to one row.
  int page_length = 100;
  std::string cache_root = {};  // default: cache_dir() + "/hf-rows"
  bool refresh = false;     // drop the cached pages first (the dataset changed upstream)
  bool offline = false;     // never fetch: only cached pages (an Error names what is missing)
  HttpFetchOptions fetch = {};  // timeouts and retries; $HF_TOKEN, when set, is sent as a bearer token
};

struct HfRowsInfo {
  std::int64_t num_rows_total = 0;
  bool partial = false;            // the viewer serves only part of the split (very large datasets)
  bool complete = false;           // every row is in the cache
  std::int64_t rows_seen = 0;      // rows handed to the callback
  std::int64_t pages_fetched = 0;  // requests that returned rows, this call
  std::string cache_dir;
};

using HfRowFn = std::function<bool(const nlohmann::json& row, std::int64_t row_idx)>;

// Calls fn(row, row_idx) for each row of the split in order, reading cached pages and fetching
// (and caching) the missing ones; fn returns false to stop early (the rest is not fetched).
// Errors name the URL or the cache file and say what to do.
HfRowsInfo for_each_hf_row(const HfRowsSource& source, const HfRowsOptions& options, const HfRowFn& fn);

// Fetches every missing page into the cache; returns the summary.
HfRowsInfo download_hf_rows(const HfRowsSource& source, const HfRowsOptions& options);

// A rows API URL as a source: "{endpoint}/rows?dataset=D[&config=C][&split=S][&offset=0][&length=L]"
// (what the dataset viewer shows for a split). The whole split is meant: offset must be 0 or absent;
// length, when given, is the page length (rows a request). Errors name the URL and show the form.
struct HfRowsUrl {
  HfRowsSource source;
  int page_length = 0;  // 0: not given
};
bool is_http_url(const std::string& text);
HfRowsUrl parse_hf_rows_url(const std::string& url);

// The cache directory of a split, and the URL of one request.
std::string hf_rows_cache_dir(const HfRowsSource& source, const HfRowsOptions& options);
std::string hf_rows_url(const HfRowsSource& source, std::int64_t offset, int length);

}  // namespace kvgate
