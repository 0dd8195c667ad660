// SPDX-License-Identifier: GPL-2.0-only
/* The Lua scripts the fleet sync runs on the Redis server (EVALSHA): the
 * server's clock and Redis's own atomicity do the fleet-wide arithmetic. */
#include "service/fleet.h"

/* KEYS[1]: the key's fleet state (its GCRA TAT, microseconds of the server's
 * clock). ARGV: T and tau in microseconds, and the admissions to add. The
 * hosts have admitted them already, so they are always added; the answer is
 * how long (µs) the key must be held until one more unit conforms, or 0. */
const char fg_fleet_rate_script[] =
	"local t = redis.call('TIME')\n"
	"local now = tonumber(t[1]) * 1000000 + tonumber(t[2])\n"
	"local T, tau, cost = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])\n"
	"local tat = tonumber(redis.call('GET', KEYS[1])) or 0\n"
	"if tat < now then tat = now end\n"
	"tat = tat + cost * T\n"
	"redis.call('SET', KEYS[1], string.format('%.0f', tat), 'PX',\n"
	"           math.floor((tat - now) / 1000) + 1000)\n"
	"local hold = tat - tau + T - now\n"
	"if hold > 0 then return math.ceil(hold) end\n"
	"return 0\n";

/* KEYS[1]: the sorted set of fleet bans, member "ADDR/LEN", score its end
 * (µs of the server's clock, inf = until unbanned). ARGV: pairs of member
 * and time left in µs (-1: until unbanned, 0: unbanned here). Returns
 * every ban in force as pairs of member and time left (-1: until
 * unbanned). */
const char fg_fleet_bans_script[] =
	"local t = redis.call('TIME')\n"
	"local now = tonumber(t[1]) * 1000000 + tonumber(t[2])\n"
	"redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)\n"
	"for i = 1, #ARGV, 2 do\n"
	"  local left = tonumber(ARGV[i + 1])\n"
	"  if left == 0 then redis.call('ZREM', KEYS[1], ARGV[i])\n"
	"  elseif left < 0 then redis.call('ZADD', KEYS[1], 'GT', '+inf', ARGV[i])\n"
	"  else redis.call('ZADD', KEYS[1], 'GT', string.format('%.0f', now + left), ARGV[i]) end\n"
	"end\n"
	"local all = redis.call('ZRANGE', KEYS[1], 0, -1, 'WITHSCORES')\n"
	"local out = {}\n"
	"for i = 1, #all, 2 do\n"
	"  local score = tonumber(all[i + 1])\n"
	"  out[#out + 1] = all[i]\n"
	"  if score == math.huge then out[#out + 1] = '-1'\n"
	"  else out[#out + 1] = string.format('%.0f', score - now) end\n"
	"end\n"
	"return out\n";
