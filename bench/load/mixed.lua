-- A weighted mix of Connect calls for wrk, written by bench/load_bench.py's plan (LOAD_PLAN).
--
--   LOAD_PLAN=plan.tsv LOAD_RUN=<nonce> wrk -t C -c C -s bench/load/mixed.lua http://127.0.0.1:PORT
--
-- The plan has one line per method: name, weight, path, bearer token, JSON body, tab-separated.
-- "{requestId}" in a body becomes an id unique to this run, thread and call (RunJob's AIP-155
-- requestId: a repeated id would be answered from the first call instead of doing the work).
--
-- Run with as many threads as connections: a wrk thread sends its next request only after the
-- previous response on its one connection, so response() knows which method it answers.
-- It also times each call per method (LuaJIT FFI clock_gettime; wrk only times them all) and
-- stamps X-Request-Start as nginx does. done() prints one line, "LOAD-RESULT {json}", for the bench.

local ffi = require("ffi") -- wrk runs LuaJIT, whose os.time() has only whole seconds
ffi.cdef [[
typedef struct { long tv_sec; long tv_nsec; } load_timespec;
int clock_gettime(int clock_id, load_timespec *tp);
]]
local timespec = ffi.new("load_timespec")
local REALTIME, MONOTONIC = 0, 1

local function clock_us(clock_id)
   ffi.C.clock_gettime(clock_id, timespec)
   return tonumber(timespec.tv_sec) * 1e6 + tonumber(timespec.tv_nsec) / 1e3
end

local threads = {}

function setup(thread)
   threads[#threads + 1] = thread
   thread:set("id", #threads)
end

local methods = {}
local total_weight = 0
local current = {}
local run = os.getenv("LOAD_RUN") or "run"
local calls = 0
local last = nil
local sent_at = 0
counts = {} -- "Method status" -> responses; read by done() through thread:get
latencies = {} -- "Method milliseconds" -> responses, a histogram per method

local function read_plan(path)
   local file = assert(io.open(path, "r"), "LOAD_PLAN: cannot open " .. tostring(path))
   for line in file:lines() do
      local name, weight, target, token, body = line:match("^([^\t]+)\t(%d+)\t([^\t]+)\t([^\t]+)\t(.+)$")
      assert(name, "LOAD_PLAN: malformed line: " .. line)
      local headers = {
         ["Content-Type"] = "application/json",
         ["Authorization"] = "Bearer " .. token,
      }
      methods[#methods + 1] = {name = name, weight = tonumber(weight), path = target, headers = headers, body = body}
      total_weight = total_weight + tonumber(weight)
      current[#methods] = 0
   end
   file:close()
   assert(#methods > 0, "LOAD_PLAN: no methods")
end

-- Smooth weighted round robin (as nginx balances upstreams): every window of total_weight
-- calls holds each method exactly `weight` times, spread out rather than in runs.
local function next_method()
   local best = 1
   for i, method in ipairs(methods) do
      current[i] = current[i] + method.weight
      if current[i] > current[best] then
         best = i
      end
   end
   current[best] = current[best] - total_weight
   return methods[best]
end

function init(args)
   read_plan(os.getenv("LOAD_PLAN"))
   -- Threads start at different points of the cycle, so even 4 connections send the mix.
   for _ = 1, ((id or 1) - 1) % total_weight do
      next_method()
   end
end

function request()
   local method = next_method()
   last = method.name
   calls = calls + 1
   local body = method.body:gsub("{requestId}", run .. "-" .. (id or 1) .. "-" .. calls)
   -- As nginx stamps it (deploy/nginx.conf): with TRUSTED_PROXIES naming this client, time
   -- spent in gunicorn's queue counts against SHED_QUEUE_MS, as it would in production.
   method.headers["X-Request-Start"] = string.format("t=%.6f", clock_us(REALTIME) / 1e6)
   sent_at = clock_us(MONOTONIC)
   return wrk.format("POST", method.path, method.headers, body)
end

function response(status, headers, body)
   local key = (last or "?") .. " " .. status
   counts[key] = (counts[key] or 0) + 1
   local bucket = (last or "?") .. " " .. math.floor((clock_us(MONOTONIC) - sent_at) / 1000)
   latencies[bucket] = (latencies[bucket] or 0) + 1
end

-- Per method: {p50, p99} in milliseconds from the merged histograms.
local function method_percentiles(histogram)
   local per_method = {}
   for key, n in pairs(histogram) do
      local name, ms = key:match("^(%S+) (%d+)$")
      per_method[name] = per_method[name] or {total = 0, counts = {}}
      per_method[name].total = per_method[name].total + n
      per_method[name].counts[tonumber(ms)] = (per_method[name].counts[tonumber(ms)] or 0) + n
   end
   local result = {}
   for name, data in pairs(per_method) do
      local values = {}
      for ms in pairs(data.counts) do
         values[#values + 1] = ms
      end
      table.sort(values)
      local seen, p50, p99 = 0, nil, nil
      for _, ms in ipairs(values) do
         seen = seen + data.counts[ms]
         if not p50 and seen >= 0.5 * data.total then p50 = ms end
         if not p99 and seen >= 0.99 * data.total then p99 = ms end
      end
      result[name] = string.format('{"p50_ms":%d,"p99_ms":%d}', p50, p99)
   end
   return result
end

local function json_object(fields)
   local parts = {}
   for key, value in pairs(fields) do
      parts[#parts + 1] = string.format('"%s":%s', key, value)
   end
   return "{" .. table.concat(parts, ",") .. "}"
end

function done(summary, latency, requests)
   local statuses, histogram = {}, {}
   for _, thread in ipairs(threads) do
      for key, n in pairs(thread:get("counts") or {}) do
         statuses[key] = (statuses[key] or 0) + n
      end
      for key, n in pairs(thread:get("latencies") or {}) do
         histogram[key] = (histogram[key] or 0) + n
      end
   end
   local errors = summary.errors
   print("LOAD-RESULT " .. json_object({
      requests = summary.requests,
      duration_us = summary.duration,
      p50_us = latency:percentile(50),
      p90_us = latency:percentile(90),
      p99_us = latency:percentile(99),
      max_us = latency.max,
      connect_errors = errors.connect,
      read_errors = errors.read,
      write_errors = errors.write,
      timeouts = errors.timeout,
      status_errors = errors.status,
      statuses = json_object(statuses),
      methods = json_object(method_percentiles(histogram)),
   }))
end
