-- Shared by the wrk scripts of `make bench`: inputs from $BENCH_DIR, per-thread random seeds,
-- and one JSON line of results (latencies in microseconds) printed by done().
local dir = os.getenv("BENCH_DIR")
keys = {}
for line in io.lines(dir .. "/keys.txt") do keys[#keys + 1] = line end

function lines(file)
  local t = {}
  for line in io.lines(dir .. "/" .. file) do t[#t + 1] = line end
  return t
end

local counter = 0
function setup(thread)
  counter = counter + 1
  thread:set("tid", counter)
end

function init(args)
  math.randomseed(os.time() * 1000 + (tid or 0) * 7919)
end

function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    'WRKJSON {"requests":%d,"duration_us":%d,"non2xx":%d,"socket_errors":%d,"p50_us":%d,"p99_us":%d,"mean_us":%.1f}\n',
    summary.requests, summary.duration, e.status, e.connect + e.read + e.write + e.timeout,
    latency:percentile(50), latency:percentile(99), latency.mean))
end
