-- c15t: POST /subjects (record a cookie-banner consent for a new subject).
dofile(os.getenv("BENCH_SCRIPTS") .. "/common.lua")
local B58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
request = function()
  local t = {}
  for i = 1, 16 do local k = math.random(58); t[i] = B58:sub(k, k) end
  local body = '{"subjectId":"sub_' .. table.concat(t) .. '","domain":"bench.example","type":"cookie_banner",' ..
    '"givenAt":' .. tostring(os.time() * 1000) .. ',"preferences":{"necessary":true,"measurement":true,"marketing":false}}'
  return wrk.format("POST", "/subjects", { ["Content-Type"] = "application/json" }, body)
end
