-- Shared by the wrk scripts of `make bench`: inputs from $BENCH_DIR, per-thread random seeds, the
-- status check of every answer, and one JSON line of results (latencies in microseconds) printed
-- by done().
--
-- wrk itself only counts answers >= 400 as errors (summary.errors.status), so a 3xx would pass
-- as a success. response() below counts every answer that is not the expected one: any 2xx by
-- default, exactly $BENCH_EXPECT when it is set (list_etag sets 304). Defining response() makes
-- wrk hand each answer to Lua, which costs the load generator a little CPU per request.
local dir = os.getenv("BENCH_DIR")
keys = {}
for line in io.lines(dir .. "/keys.txt") do keys[#keys + 1] = line end

function lines(file)
  local t = {}
  for line in io.lines(dir .. "/" .. file) do t[#t + 1] = line end
  return t
end

local counter = 0
local threads = {}
function setup(thread)
  counter = counter + 1
  thread:set("tid", counter)
  threads[#threads + 1] = thread
end

function init(args)
  math.randomseed(os.time() * 1000 + (tid or 0) * 7919)
end

local expect = tonumber(os.getenv("BENCH_EXPECT") or "")
unexpected = 0
function response(status, headers, body)
  if expect then
    if status ~= expect then unexpected = unexpected + 1 end
  elseif status < 200 or status > 299 then
    unexpected = unexpected + 1
  end
end

function done(summary, latency, requests)
  local e = summary.errors
  local bad = 0
  for _, t in ipairs(threads) do bad = bad + (t:get("unexpected") or 0) end
  io.write(string.format(
    'WRKJSON {"requests":%d,"duration_us":%d,"unexpected":%d,"status_errors":%d,"socket_errors":%d,"p50_us":%d,"p99_us":%d,"mean_us":%.1f}\n',
    summary.requests, summary.duration, bad, e.status, e.connect + e.read + e.write + e.timeout,
    latency:percentile(50), latency:percentile(99), latency.mean))
end
