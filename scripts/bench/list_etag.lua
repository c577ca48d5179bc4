-- GET /api/casos-de-uso with a random company's key and If-None-Match set to the ETag that key got
-- in the pre-flight (etags.txt, one line per key of keys.txt): each answer should be 304.
-- bench.sh runs it with BENCH_EXPECT=304, so anything else (a 200 included) counts as unexpected.
dofile(os.getenv("BENCH_SCRIPTS") .. "/common.lua")
local etags = lines("etags.txt")
request = function()
  local n = math.random(#keys)
  return wrk.format("GET", "/api/casos-de-uso", { ["Api-Key"] = keys[n], ["If-None-Match"] = etags[n] })
end
