-- GET /api/casos-de-uso with a random company's key (each company: 100 use cases).
dofile(os.getenv("BENCH_SCRIPTS") .. "/common.lua")
request = function()
  return wrk.format("GET", "/api/casos-de-uso", { ["Api-Key"] = keys[math.random(#keys)] })
end
