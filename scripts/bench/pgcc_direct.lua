-- POST /pgcc/v1/solicitacoes straight to the simulator: the PGCC round trip our creation pays.
dofile(os.getenv("BENCH_SCRIPTS") .. "/common.lua")
local cnpjs = lines("cnpjs.txt")
local cpfs = lines("cpfs.txt")
local function uuid4()
  return string.format("%08x-%04x-4%03x-a%03x-%012x", math.random(0, 0x7fffffff), math.random(0, 0xffff),
    math.random(0, 0xfff), math.random(0, 0xfff), math.random(0, 0x7fffffff) * 4096 + math.random(0, 4095))
end
request = function()
  local n = math.random(#cnpjs)
  local j = math.random(0, 49) * 2
  local body = '{"referenciaExterna":"' .. uuid4() .. '","cnpjEmpresa":"' .. cnpjs[n] ..
    '","vinculoId":"' .. string.format("00000000-0000-4000-9000-%012d", n) ..
    '","templateId":"' .. string.format("tpl-%04d-%03d", n - 1, j) ..
    '","cpfTitular":"' .. cpfs[math.random(#cpfs)] .. '","tipoTitular":"PessoaFisica","modalidadeAcesso":"Direto",' ..
    '"cnpjAnuente":null,"dataExpiracaoConsentimento":"2030-12-31T23:59:59Z","status":"ativo",' ..
    '"dataTitularRespondeuConsentimento":"2026-01-10T12:00:00Z","provaColeta":"assinatura:bench"}'
  return wrk.format("POST", "/pgcc/v1/solicitacoes", { ["Content-Type"] = "application/json" }, body)
end
