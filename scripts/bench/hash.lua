-- POST /api/hash-consulta for (company, CPF, template) triples of active loaded requests.
dofile(os.getenv("BENCH_SCRIPTS") .. "/common.lua")
local inputs = {}
for _, line in ipairs(lines("hash_inputs.txt")) do
  local n, cpf, tpl = line:match("^(%d+)\t(%d+)\t(.+)$")
  inputs[#inputs + 1] = { keys[tonumber(n)],
    '{"cpfTitular":"' .. cpf .. '","casoDeUsoIdTemplate":"' .. tpl .. '"}' }
end
request = function()
  local i = inputs[math.random(#inputs)]
  return wrk.format("POST", "/api/hash-consulta", { ["Api-Key"] = i[1], ["Content-Type"] = "application/json" }, i[2])
end
