-- POST /api/solicitacao-consentimento/criar/{ativo|pendente} ($BENCH_MODE) for a random company,
-- one of its synchronized templates ($BENCH_USE_CASES per company, default 100) and a random valid
-- CPF; the PGCC simulator answers.
dofile(os.getenv("BENCH_SCRIPTS") .. "/common.lua")
local cpfs = lines("cpfs.txt")
local mode = os.getenv("BENCH_MODE") or "ativo"
local path = "/api/solicitacao-consentimento/criar/" .. mode
local use_cases = tonumber(os.getenv("BENCH_USE_CASES") or "100")
request = function()
  local n = math.random(#keys)
  local tpl = string.format("tpl-%04d-%03d", n - 1, math.random(0, use_cases - 1))
  local cpf = cpfs[math.random(#cpfs)]
  local body
  if mode == "ativo" then
    body = '{"casoDeUsoIdTemplate":"' .. tpl .. '","cpfTitular":"' .. cpf ..
      '","modalidadeAcesso":"Direto","tipoTitular":"PessoaFisica",' ..
      '"dataExpiracaoConsentimento":"2030-12-31T23:59:59Z",' ..
      '"dataTitularRespondeuConsentimento":"2026-01-10T12:00:00Z","provaColeta":"assinatura:bench"}'
  else
    body = '{"casoDeUsoIdTemplate":"' .. tpl .. '","cpfTitular":"' .. cpf ..
      '","modalidadeAcesso":"Direto","tipoTitular":"PessoaFisica",' ..
      '"dataExpiracaoConsentimento":"2030-12-31T23:59:59Z"}'
  end
  return wrk.format("POST", path, { ["Api-Key"] = keys[n], ["Content-Type"] = "application/json" }, body)
end
