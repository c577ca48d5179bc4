-- GET /api/solicitacao-consentimento/{id} for loaded requests, each with its company's key
-- (requests.txt: `n<TAB>id`, sampled from the table by bench-scale.sh).
dofile(os.getenv("BENCH_SCRIPTS") .. "/common.lua")
local inputs = {}
for _, line in ipairs(lines("requests.txt")) do
  local n, id = line:match("^(%d+)\t(.+)$")
  inputs[#inputs + 1] = { keys[tonumber(n)], "/api/solicitacao-consentimento/" .. id }
end
request = function()
  local i = inputs[math.random(#inputs)]
  return wrk.format("GET", i[2], { ["Api-Key"] = i[1] })
end
