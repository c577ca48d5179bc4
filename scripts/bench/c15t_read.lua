-- c15t: GET /subjects/{id} of subjects recorded at start-up (their consents).
dofile(os.getenv("BENCH_SCRIPTS") .. "/common.lua")
local ids = lines("c15t_subjects.txt")
request = function() return wrk.format("GET", "/subjects/" .. ids[math.random(#ids)]) end
