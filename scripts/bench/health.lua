-- GET /health/live: no key, no database; the HTTP stack's own limit.
dofile(os.getenv("BENCH_SCRIPTS") .. "/common.lua")
request = function() return wrk.format("GET", "/health/live") end
