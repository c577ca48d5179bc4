-- GET /api/solicitacao-consentimento?status=ativo (the consent list filtered by effective status,
-- first page, default size) with a random company's key.
dofile(os.getenv("BENCH_SCRIPTS") .. "/common.lua")
request = function()
  return wrk.format("GET", "/api/solicitacao-consentimento?status=ativo", { ["Api-Key"] = keys[math.random(#keys)] })
end
