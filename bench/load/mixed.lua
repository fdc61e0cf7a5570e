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
-- done() prints one line, "LOAD-RESULT {json}", that the bench parses.

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
counts = {} -- "Method status" -> responses; read by done() through thread:get

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
   return wrk.format("POST", method.path, method.headers, body)
end

function response(status, headers, body)
   local key = (last or "?") .. " " .. status
   counts[key] = (counts[key] or 0) + 1
end

local function json_object(fields)
   local parts = {}
   for key, value in pairs(fields) do
      parts[#parts + 1] = string.format('"%s":%s', key, value)
   end
   return "{" .. table.concat(parts, ",") .. "}"
end

function done(summary, latency, requests)
   local statuses = {}
   for _, thread in ipairs(threads) do
      for key, n in pairs(thread:get("counts") or {}) do
         statuses[key] = (statuses[key] or 0) + n
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
   }))
end
